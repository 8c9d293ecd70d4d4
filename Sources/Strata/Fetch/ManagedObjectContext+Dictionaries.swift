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

        // Rows, sorted by the stores; the window applies to rows only when nothing combines them.
        var storeRows: [[QueryValue]] = []
        let pushesWindow = !grouped && !request.returnsDistinctResults
        let stores = searchedStores(of: request)
        if grouped,
            let answered = try groupsFromStore(
                request, entity: entity, properties: properties, groups: groups, stores: stores)
        {
            return try finish(answered, request: request, pushedWindow: false)
        }
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
        }
        return try finish(results, request: request, pushedWindow: pushesWindow && stores.count == 1)
    }

    /// The end of a dictionary request: the sort of grouped results, distinct results, the window (unless the
    /// store applied it).
    private func finish<Result>(
        _ results: [[String: QueryValue]], request: FetchRequest<Result>, pushedWindow: Bool
    ) throws -> [[String: QueryValue]] {
        let grouped =
            !(request.propertiesToGroupBy ?? []).isEmpty
            || (request.propertiesToFetch ?? []).contains {
                if case .expression(let description) = $0 { description.expression.isAggregate } else { false }
            }
        var results = results
        if grouped, !request.sortKeys.isEmpty { results = try results.sorted(by: request.sortKeys) }
        if request.returnsDistinctResults {
            var seen = Set<[String: QueryValue]>()
            results = results.filter { seen.insert($0).inserted }
        }
        if !pushedWindow {
            var window = results.dropFirst(min(request.fetchOffset, results.count))
            if request.fetchLimit > 0 { window = window.prefix(request.fetchLimit) }
            results = Array(window)
        }
        return results
    }

    /// The groups of a grouped dictionary request from its one store, when that store groups itself
    /// (``GroupingStore``) and can answer this request: the dictionaries in the order of their group values, the
    /// having predicate applied. Nil otherwise: the rows are then grouped here.
    private func groupsFromStore<Result>(
        _ request: FetchRequest<Result>, entity: EntityDescription, properties: [FetchProperty],
        groups: [QueryKeyPath], stores: [any PersistentStore]
    ) throws -> [[String: QueryValue]]? {
        guard stores.count == 1, let store = stores[0] as? any GroupingStore else { return nil }
        var storeRequest = StoreGroupRequest(entity: entity)
        storeRequest.includesSubentities = request.includesSubentities
        storeRequest.predicate = request.predicate
        storeRequest.groupPaths = groups
        // Where each property's value is in a group's array.
        var positions: [Int] = []
        for property in properties {
            switch property {
            case .keyPath(let path):
                guard let index = groups.firstIndex(of: path) else { return nil }
                positions.append(index)
            case .expression(let description):
                let aggregate: StoreGroupRequest.Aggregate
                switch description.expression {
                case .keyPath: return nil
                case .count(let path): aggregate = .init(.count, path)
                case .sum(let path): aggregate = .init(.sum, path)
                case .average(let path): aggregate = .init(.average, path)
                case .min(let path): aggregate = .init(.min, path)
                case .max(let path): aggregate = .init(.max, path)
                }
                positions.append(groups.count + storeRequest.aggregates.count)
                storeRequest.aggregates.append(aggregate)
            }
        }
        guard var rows = try store.groups(storeRequest) else { return nil }
        let groupOrder = groups.map { SortKey($0) }
        rows.sort {
            groupOrder.compare(values: Array($0.prefix(groups.count)), Array($1.prefix(groups.count)))
                == .orderedAscending
        }
        var results: [[String: QueryValue]] = []
        for row in rows {
            var dictionary: [String: QueryValue] = [:]
            for (property, position) in zip(properties, positions) {
                var value = row[position]
                if case .expression(let description) = property {
                    value = Self.convert(value, to: description.resultType)
                }
                if value != .null { dictionary[property.name] = value }
            }
            for (path, value) in zip(groups, row) where value != .null { dictionary[path.description] = value }
            if let having = request.havingPredicate, !(try having.evaluate(with: dictionary)) { continue }
            results.append(dictionary)
        }
        return results
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
