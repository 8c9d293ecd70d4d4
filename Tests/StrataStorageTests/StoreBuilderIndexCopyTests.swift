import StrataFormat
import StrataIO
import StrataTestSupport
import Testing

@testable import StrataStorage

/// ``StoreBuilder``'s copied indexes (a migration's indexes whose keys it keeps): the entries of an index of the
/// store being read are loaded in their order instead of sorted, and must be, as a multiset, the entries the rows
/// appended give; a copy that disagrees with the rows is corruption, never a wrong index.
@Suite struct StoreBuilderIndexCopyTests {
    typealias Field = RowRecord.Field

    /// 600 rows over 512-byte pages (several leaves and levels): entity 1 or 2, a key repeated 40 times, a name.
    static func sourceRows() -> [(UInt64, [UInt8])] {
        (1...600).map { row in
            let entity: UInt16 = row % 3 == 0 ? 2 : 1
            return (
                UInt64(row),
                IndexReference.row(entity: entity, [.int64(Int64(row % 40)), .string("name \(row)")])
            )
        }
    }

    /// A source store built from `rows`, with `by_key` over field 0 of entity 1's rows; and its open engine.
    static func source(_ fileSystem: InMemoryFileSystem, rows: [(UInt64, [UInt8])]) throws -> Store {
        var builder = try StoreBuilder(directory: "/source", pageSize: 512, fileSystem: fileSystem)
        builder.beginTable(named: "things", indexes: [StoreBuilder.Index(name: "by_key", fields: [0], entityIDs: [1])])
        for (row, bytes) in rows { try builder.append(row, bytes) }
        try builder.endTable(nextRowID: 601)
        try builder.finish()
        return try Store.open(at: "/source", configuration: .testing(pageSize: 512), fileSystem: fileSystem)
    }

    /// Builds `/copy` from `rows`, its index copied from the source's `by_key`.
    static func buildCopy(
        _ fileSystem: InMemoryFileSystem, from source: Store, rows: [(UInt64, [UInt8])], fields: [Int] = [0]
    ) throws {
        let snapshot = source.snapshot()
        let index = try #require(snapshot.index(named: "by_key"))
        var builder = try StoreBuilder(directory: "/copy", pageSize: 512, fileSystem: fileSystem)
        do {
            builder.beginTable(
                named: "things",
                indexes: [
                    StoreBuilder.Index(name: "by_key", fields: fields, entityIDs: [1], copiedFrom: (snapshot, index))
                ])
            for (row, bytes) in rows { try builder.append(row, bytes) }
            try builder.endTable(nextRowID: 601)
            try builder.finish()
        } catch {
            builder.abandon()
            throw error
        }
    }

    @Test func aCopiedIndexHoldsWhatARebuildGivesAndVerifies() throws {
        let fileSystem = InMemoryFileSystem()
        let rows = Self.sourceRows()
        let source = try Self.source(fileSystem, rows: rows)
        defer { try? source.close() }
        // The rows keep their key field and row IDs, and gain a field (as a migration that adds an attribute).
        let migrated = try rows.map { row, bytes in
            let (header, fields) = try RowRecord.decodeAll(bytes)
            return (row, IndexReference.row(entity: header.entityID, fields + [.double(1.5)]))
        }
        try Self.buildCopy(fileSystem, from: source, rows: migrated)
        let copy = try Store.open(at: "/copy", configuration: .testing(pageSize: 512), fileSystem: fileSystem)
        defer { try? copy.close() }
        let snapshot = copy.snapshot()
        #expect(try IndexReference.checkAllIndexes(snapshot, "copied index"))
        let index = try #require(snapshot.index(named: "by_key"))
        #expect(try snapshot.indexEntryCount(index) == 400)
        #expect(try IndexReference.entries(of: index, in: snapshot).count == 400)
        #expect(try copy.verify().isClean)
    }

    @Test func aCopyThatDisagreesWithTheRowsIsCorruption() throws {
        let fileSystem = InMemoryFileSystem()
        let rows = Self.sourceRows()
        let source = try Self.source(fileSystem, rows: rows)
        defer { try? source.close() }
        // One key changed, one indexed row missing, one row of the filtered-out entity given the indexed one: each
        // leaves the source's entries other than the rows', and the copy fails rather than keeping them.
        var changed = rows
        changed[10].1 = IndexReference.row(entity: 1, [.int64(999), .string("changed")])
        var missing = rows
        missing.remove(at: 3)
        var entity = rows
        entity[2].1 = IndexReference.row(entity: 1, [.int64(2), .string("moved")])
        // An index over another field than the source's: its rows' entries are not the copied ones either.
        let cases = [
            ("changed key", changed, [0]), ("missing row", missing, [0]), ("entity", entity, [0]),
            ("other field", rows, [1]),
        ]
        for (label, variant, fields) in cases {
            let error = #expect(throws: StorageError.self, "\(label)") {
                try Self.buildCopy(fileSystem, from: source, rows: variant, fields: fields)
            }
            guard case .corruption(_, _, let reason) = error else {
                Issue.record("\(label): \(String(describing: error))")
                continue
            }
            #expect(reason.contains("by_key"), "\(label): \(reason)")
            try Self.removeCopy(fileSystem)
        }
    }

    /// Removes what a failed build left in `/copy`.
    static func removeCopy(_ fileSystem: InMemoryFileSystem) throws {
        for name in try fileSystem.contentsOfDirectory(at: "/copy") { try fileSystem.removeFile(at: "/copy/\(name)") }
        try fileSystem.removeDirectory(at: "/copy")
    }
}
