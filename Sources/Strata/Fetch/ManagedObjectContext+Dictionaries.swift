import Foundation
import StrataQuery

extension ManagedObjectContext {
    /// The dictionaries of a dictionary request, from the stores only (as in Core Data, pending changes do
    /// not show): each store returns the values of the key paths the properties and groups read, one array
    /// per matching row, without making objects; grouping, aggregates, the having predicate, distinct
    /// results and the window are applied to those arrays.
    func dictionaries<Result>(
        for request: FetchRequest<Result>, entity: EntityDescription
    ) throws -> [[String: QueryValue]] {
        let properties =
            request.propertiesToFetch ?? entity.persistentAttributes.map { .keyPath(QueryKeyPath($0.name)) }
        let groups = request.propertiesToGroupBy ?? []
        let aggregates = properties.contains {
            if case .expression(let description) = $0 { description.expression.isAggregate } else { false }
        }
        let grouped = aggregates || !groups.isEmpty
        // The key paths each row must give, in a fixed order.
        var paths: [QueryKeyPath] = []
        func slot(_ path: QueryKeyPath) -> Int {
            if let index = paths.firstIndex(of: path) { return index }
            paths.append(path)
            return paths.count - 1
        }
        let propertySlots: [Int?] = properties.map { property in
            switch property {
            case .keyPath(let path): slot(path)
            case .expression(let description): description.expression.keyPath.map(slot)
            }
        }
        let groupSlots = groups.map(slot)
        if !groups.isEmpty {
            for property in properties {
                guard case .keyPath(let path) = property else { continue }
                if !groups.contains(path) { throw FetchRequestError.propertyNotGrouped(property.name) }
            }
        }
        for path in paths { try checkSingleValued(path, in: entity) }

        let stores = searchedStores(of: request)
        // Groups and aggregates folded in the store: no value per row leaves it.
        if grouped, stores.count == 1,
            let aggregates = storeAggregates(of: properties, groups: groups, in: entity)
        {
            var storeRequest = StoreFetchRequest(entity: entity)
            storeRequest.includesSubentities = request.includesSubentities
            storeRequest.predicate = request.predicate
            storeRequest.resultKind = .groups(keys: groups, aggregates: aggregates.compactMap { $0 })
            var found = try stores[0].fetch(storeRequest).groups
            if groups.isEmpty, found.isEmpty {
                let empty = aggregates.compactMap { $0 }.map { AggregateAccumulator($0.function).result }
                found = [StoreFetchResult.Group(keys: [], rowCount: 0, aggregates: empty)]
            }
            let groupOrder = groups.map { SortKey($0) }
            found.sort { groupOrder.compare(values: $0.keys, $1.keys) == .orderedAscending }
            var results: [[String: QueryValue]] = []
            for group in found {
                var dictionary: [String: QueryValue] = [:]
                var aggregateIndex = 0
                for (property, aggregate) in zip(properties, aggregates) {
                    let value: QueryValue
                    switch property {
                    case .keyPath(let path):
                        value = group.keys[groups.firstIndex(of: path)!]
                    case .expression(let description):
                        if case .count(nil) = description.expression {
                            value = .int(Int64(group.rowCount))
                        } else {
                            let folded = group.aggregates[aggregateIndex]
                            value =
                                aggregate?.function == .count
                                ? folded : Self.convert(folded, to: description.resultType)
                        }
                    }
                    if aggregate != nil { aggregateIndex += 1 }
                    if value != .null { dictionary[property.name] = value }
                }
                for (path, value) in zip(groups, group.keys) where value != .null {
                    dictionary[path.description] = value
                }
                if let having = request.havingPredicate, !(try having.evaluate(with: dictionary)) { continue }
                results.append(dictionary)
            }
            if !request.sortKeys.isEmpty { results = try results.sorted(by: request.sortKeys) }
            return Self.finish(results, request)
        }

        // Rows, sorted by the stores; the window applies to rows only when nothing combines them.
        var storeRows: [[QueryValue]] = []
        let pushesWindow = !grouped && !request.returnsDistinctResults
        var storeRequest = StoreFetchRequest(entity: entity)
        storeRequest.includesSubentities = request.includesSubentities
        storeRequest.predicate = request.predicate
        storeRequest.sortKeys = grouped ? [] : request.sortKeys
        storeRequest.resultKind = .values(paths)
        storeRequest.returnsSortValues = stores.count > 1 && !grouped
        if pushesWindow, stores.count == 1 {
            storeRequest.fetchOffset = request.fetchOffset
            storeRequest.fetchLimit = request.fetchLimit
        }
        var sortValues: [[QueryValue]] = []
        for store in stores {
            let result = try store.fetch(storeRequest)
            storeRows += result.values
            sortValues += result.sortValues
        }
        if stores.count > 1, !grouped, !request.sortKeys.isEmpty {
            let keys = request.sortKeys
            storeRows = zip(storeRows, sortValues).enumerated().sorted { a, b in
                switch keys.compare(values: a.element.1, b.element.1) {
                case .orderedAscending: true
                case .orderedDescending: false
                case .orderedSame: a.offset < b.offset
                }
            }.map(\.element.0)
        }

        var results: [[String: QueryValue]] = []
        if !grouped {
            for row in storeRows {
                var dictionary: [String: QueryValue] = [:]
                for (property, slot) in zip(properties, propertySlots) {
                    guard let slot, row[slot] != .null else { continue }
                    dictionary[property.name] = row[slot]
                }
                results.append(dictionary)
            }
        } else {
            // Groups in order of their values (nil first), as SQLite's GROUP BY returns them.
            // Each group's rows as positions in storeRows (no copy of a row); one key groups without a key array
            // per row.
            var members: [[QueryValue]: [Int]] = [:]
            if groupSlots.count == 1 {
                let slot = groupSlots[0]
                var byValue: [QueryValue: [Int]] = [:]
                for (position, row) in storeRows.enumerated() { byValue[row[slot], default: []].append(position) }
                for (value, positions) in byValue { members[[value]] = positions }
            } else {
                for (position, row) in storeRows.enumerated() {
                    members[groupSlots.map { row[$0] }, default: []].append(position)
                }
            }
            if groups.isEmpty, members.isEmpty { members[[]] = [] }
            let groupOrder = groups.map { SortKey($0) }
            let keys = members.keys.sorted { groupOrder.compare(values: $0, $1) == .orderedAscending }
            for key in keys {
                let rows = members[key]!
                var dictionary: [String: QueryValue] = [:]
                for (property, slot) in zip(properties, propertySlots) {
                    let value: QueryValue
                    switch property {
                    case .keyPath:
                        value = rows.first.map { storeRows[$0][slot!] } ?? .null
                    case .expression(let description):
                        value = try Self.evaluate(
                            description, slot.map { slot in rows.map { storeRows[$0][slot] } }, rowCount: rows.count)
                    }
                    if value != .null { dictionary[property.name] = value }
                }
                for (path, value) in zip(groups, key) where value != .null { dictionary[path.description] = value }
                if let having = request.havingPredicate, !(try having.evaluate(with: dictionary)) { continue }
                results.append(dictionary)
            }
            if !request.sortKeys.isEmpty { results = try results.sorted(by: request.sortKeys) }
        }
        if pushesWindow && stores.count == 1 {
            // The store applied the window; distinct results are not asked (pushesWindow says so).
            return results
        }
        return Self.finish(results, request)
    }

    /// Distinct results and the window, applied to the dictionaries of a request the stores could not window.
    private static func finish<Result>(
        _ dictionaries: [[String: QueryValue]], _ request: FetchRequest<Result>
    ) -> [[String: QueryValue]] {
        var results = dictionaries
        if request.returnsDistinctResults {
            var seen = Set<[String: QueryValue]>()
            results = results.filter { seen.insert($0).inserted }
        }
        var window = results.dropFirst(min(request.fetchOffset, results.count))
        if request.fetchLimit > 0 { window = window.prefix(request.fetchLimit) }
        return Array(window)
    }

    /// For each property of a grouped request, the aggregate a store folds for it (nil for a grouping key and
    /// for `count:` of rows, which the group's row count answers); nil when a property needs the rows' values:
    /// a key path that is not a grouping key or an expression that is a plain key path (their value is the first
    /// row's), or `sum:`/`average:` of a key path
    /// that does not end at a numeric attribute (the key-path walk reports an error there).
    private func storeAggregates(
        of properties: [FetchProperty], groups: [QueryKeyPath], in entity: EntityDescription
    ) -> [StoreFetchRequest.Aggregate?]? {
        var aggregates: [StoreFetchRequest.Aggregate?] = []
        for property in properties {
            guard case .expression(let description) = property else {
                // A key path that is not a grouping key is the first row's value.
                guard case .keyPath(let path) = property, groups.contains(path) else { return nil }
                aggregates.append(nil)
                continue
            }
            switch description.expression {
            case .keyPath: return nil
            case .count(nil): aggregates.append(nil)
            case .count(let path?): aggregates.append(.init(.count, path))
            case .min(let path): aggregates.append(.init(.min, path))
            case .max(let path): aggregates.append(.init(.max, path))
            case .sum(let path), .average(let path):
                guard let type = attributeType(at: path, in: entity),
                    [.integer16, .integer32, .integer64, .double, .float, .decimal, .boolean].contains(type)
                else { return nil }
                let function: CollectionOperator = if case .sum = description.expression { .sum } else { .avg }
                aggregates.append(.init(function, path))
            }
        }
        return aggregates
    }

    /// The type of the attribute a key path through to-ones ends at (nil when it ends elsewhere).
    private func attributeType(at path: QueryKeyPath, in entity: EntityDescription) -> AttributeType? {
        var current = entity
        for (index, component) in path.components.enumerated() {
            guard case .key(let key) = component else { return nil }
            if let attribute = current.attributesByName[key] {
                return index == path.components.count - 1 ? attribute.type : nil
            }
            guard let relationship = current.relationshipsByName[key], !relationship.isToMany else { return nil }
            current = relationship.destinationEntity
        }
        return nil
    }

    /// An expression's value over a group's values (nil: the number of rows for `count`), with StrataQuery's
    /// collection operators (so `@avg` in a predicate and an `average` expression agree).
    static func evaluate(
        _ description: ExpressionDescription, _ values: [QueryValue]?, rowCount: Int
    ) throws -> QueryValue {
        let present = (values ?? []).filter { $0 != .null }
        let op: CollectionOperator
        switch description.expression {
        case .keyPath: return convert(values?.first ?? .null, to: description.resultType)
        case .count(let path): return .int(Int64(path == nil ? rowCount : present.count))
        case .sum: op = .sum
        case .average: op = .avg
        case .min: op = .min
        case .max: op = .max
        }
        let path = QueryKeyPath(components: [.key("values"), .collectionOperator(op)])
        let value = try SortKey(path).value(of: ["values": QueryValue.array(present)])
        return convert(value, to: description.resultType)
    }

    /// A computed value converted to an expression's result type.
    static func convert(_ value: QueryValue, to type: AttributeType?) -> QueryValue {
        guard let type else { return value }
        let number: Double?
        switch value {
        case .int(let integer): number = Double(integer)
        case .double(let double): number = double
        case .decimal(let decimal): number = NSDecimalNumber(decimal: decimal).doubleValue
        default: number = nil
        }
        switch type {
        case .integer16, .integer32, .integer64:
            if case .int = value { return value }
            guard let number, let integer = Int64(exactly: number.rounded(.towardZero)) else { return value }
            return .int(integer)
        case .double, .float:
            return number.map { .double($0) } ?? value
        case .decimal:
            if case .decimal = value { return value }
            if case .int(let integer) = value { return .decimal(Decimal(integer)) }
            return number.map { .decimal(Decimal($0)) } ?? value
        default:
            return value
        }
    }

    /// Checks that a key path names properties of the entity and goes through to-ones only.
    func checkSingleValued(_ path: QueryKeyPath, in entity: EntityDescription) throws {
        var current: EntityDescription? = entity
        for component in path.components {
            guard case .key(let key) = component, let here = current else {
                throw FetchRequestError.unknownKeyPath(path.description, entity: entity.name)
            }
            if here.attributesByName[key] != nil {
                current = nil
            } else if let relationship = here.relationshipsByName[key] {
                if relationship.isToMany { throw FetchRequestError.toManyKeyPath(path.description) }
                current = relationship.destinationEntity
            } else {
                throw FetchRequestError.unknownKeyPath(path.description, entity: entity.name)
            }
        }
    }
}
