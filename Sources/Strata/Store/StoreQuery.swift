import Foundation
import StrataQuery

/// What both stores need beyond ``StoredObjectReader`` to answer a ``StoreFetchRequest``.
package protocol StoreQueryReader: StoredObjectReader {
    /// A row's version (optimistic locking).
    func version(of row: Row) throws -> UInt64
    /// A row decoded as contexts receive it.
    func decode(_ row: Row, _ reference: StoredReference) throws -> StoredRow
    /// The test of a query's rows against its predicate, made once per query: the Strata store compiles it
    /// (``CompiledRowPredicate``); by default the interpreter evaluates it on each row's view.
    func rowFilter(
        for predicate: ObjectPredicate, entity: EntityDescription
    ) -> (StoredReference, Row) throws -> Bool
    /// The reader of some key paths' values in a query's rows (sort keys, dictionary properties), made once per
    /// query: the Strata store reads an attribute's or a to-one's field directly; by default each row's view walks
    /// the paths.
    func valuesReader(
        for keyPaths: [QueryKeyPath], entity: EntityDescription
    ) -> (StoredReference, Row) throws -> [QueryValue]
}

extension StoreQueryReader {
    package func rowFilter(
        for predicate: ObjectPredicate, entity: EntityDescription
    ) -> (StoredReference, Row) throws -> Bool {
        { reference, row in try self.matches(predicate, reference, row: row) }
    }

    package func valuesReader(
        for keyPaths: [QueryKeyPath], entity: EntityDescription
    ) -> (StoredReference, Row) throws -> [QueryValue] {
        { reference, row in try self.values(of: keyPaths, reference, row: row) }
    }
}

/// One query over candidate rows, shared by the stores: filter each candidate with the predicate on the row
/// as it is stored (no ``StoredRow`` and no object for rows that do not match), sort, apply the window, and
/// build the result the request asks for.
///
/// Candidates come in row-ID order; rows equal by every sort key keep that order, so that every store (and
/// the in-memory evaluation of pending objects) agrees on one total order.
package struct StoreQuery<Reader: StoreQueryReader> {
    let reader: Reader
    let request: StoreFetchRequest

    package init(reader: Reader, request: StoreFetchRequest) {
        self.reader = reader
        self.request = request
    }

    private struct Match {
        var reference: StoredReference
        var version: UInt64
        var sortValues: [QueryValue]
        var values: [QueryValue]
        var row: StoredRow?
    }

    private var sortPaths: [QueryKeyPath] { request.sortKeys.map(\.keyPath) }

    /// Runs the query over the candidates `enumerate` visits (in row-ID order, rows of requested entities
    /// only); `enumerate` stops when its body returns false.
    ///
    /// - Parameter enumerate: calls its argument with each candidate's reference and row.
    /// - Throws: what the reader throws, ``PredicateEvaluationError``, `CancellationError`.
    package func run(
        _ enumerate: (_ body: (StoredReference, Reader.Row) throws -> Bool) throws -> Void
    ) throws -> StoreFetchResult {
        var isGrouped = false
        if case .groups = request.resultKind { isGrouped = true }
        // Groups take every matching row, unsorted, with no window.
        let sorted = !request.sortKeys.isEmpty && !isGrouped
        let offset = isGrouped ? 0 : request.fetchOffset
        // Without sort keys the window is known as rows come: stop once it is full.
        let stopAfter = !sorted && !isGrouped && request.fetchLimit > 0 ? offset + request.fetchLimit : nil
        var result = StoreFetchResult()
        var matches: [Match] = []
        var matched = 0
        var visited = 0
        let filter = request.predicate.map { reader.rowFilter(for: $0, entity: request.entity) }
        let readSortValues = reader.valuesReader(for: sortPaths, entity: request.entity)
        var readValues: ((StoredReference, Reader.Row) throws -> [QueryValue])?
        if case .values(let paths) = request.resultKind {
            readValues = reader.valuesReader(for: paths, entity: request.entity)
        }
        let rowLimit = request.rowLimit ?? .max
        var fold: GroupFold<[QueryValue]>?
        var keyCount = 0
        if case .groups(let keys, let aggregates) = request.resultKind {
            fold = GroupFold(aggregates.map(\.function))
            keyCount = keys.count
            readValues = reader.valuesReader(for: keys + aggregates.map(\.keyPath), entity: request.entity)
        }
        try enumerate { reference, row in
            visited &+= 1
            if visited & 255 == 0 { try request.checkCancellation() }
            if let filter, !(try filter(reference, row)) { return true }
            matched += 1
            if !sorted, matched <= offset { return stopAfter.map { matched < $0 } ?? true }
            switch request.resultKind {
            case .count:
                break
            case .groups:
                let values = try readValues!(reference, row)
                let position = fold!.row(Array(values[..<keyCount]))
                for slot in keyCount..<values.count {
                    try fold!.add(values[slot], at: position + slot - keyCount)
                }
            case .rows, .objectIDs, .values:
                if sorted {
                    var match = Match(
                        reference: reference, version: try reader.version(of: row),
                        sortValues: try readSortValues(reference, row), values: [])
                    if let readValues { match.values = try readValues(reference, row) }
                    matches.append(match)
                } else {
                    // In their final order already: straight into the result's columns, without a Match per row
                    // (a fetch of a million rows made and freed 170 MB of them, which its process kept).
                    result.references.append(reference)
                    result.versions.append(try reader.version(of: row))
                    if let readValues { result.values.append(try readValues(reference, row)) }
                    if request.resultKind == .rows, result.rows.count < rowLimit {
                        result.rows.append(try reader.decode(row, reference))
                    }
                    if request.returnsSortValues { result.sortValues.append([]) }
                }
            }
            return stopAfter.map { matched < $0 } ?? true
        }
        try request.checkCancellation()
        if request.resultKind == .count {
            var count = max(0, matched - request.fetchOffset)
            if request.fetchLimit > 0 { count = min(count, request.fetchLimit) }
            result.count = count
            return result
        }
        if let fold {
            result.groups = fold.groups { $0 }
            result.count = result.groups.count
            return result
        }
        guard sorted else {
            result.count = result.references.count
            return result
        }
        let keys = request.sortKeys
        matches = matches.enumerated().sorted { a, b in
            switch keys.compare(values: a.element.sortValues, b.element.sortValues) {
            case .orderedAscending: true
            case .orderedDescending: false
            case .orderedSame: a.offset < b.offset
            }
        }.map(\.element)
        var window = matches.dropFirst(min(request.fetchOffset, matches.count))
        if request.fetchLimit > 0 { window = window.prefix(request.fetchLimit) }
        matches = Array(window)
        if request.resultKind == .rows {
            // Read again only the rows the window keeps.
            for index in matches.indices.prefix(rowLimit) {
                guard let row = try reader.row(matches[index].reference) else { continue }
                matches[index].row = try reader.decode(row, matches[index].reference)
            }
        }
        result.count = matches.count
        result.references = matches.map(\.reference)
        result.versions = matches.map(\.version)
        if request.resultKind == .rows { result.rows = matches.compactMap(\.row) }
        if case .values = request.resultKind { result.values = matches.map(\.values) }
        if request.returnsSortValues { result.sortValues = matches.map(\.sortValues) }
        return result
    }
}
