import Foundation
import Strata
import Testing

/// A store's read of several rows at once (what a batch of faults, such as a to-many's members, reads): each row
/// handed over with its position among the row IDs asked for, the same rows as the array form returns.
@Suite struct StoreRowBatchTests {
    /// Three people and three managers (a subentity) saved; their row IDs in the hierarchy's table, by name.
    static func savedPeople(_ stack: TestStack) throws -> [String: UInt64] {
        let context = stack.context()
        var people: [String: ManagedObject] = [:]
        for name in ["p1", "p2", "p3"] {
            let person = ManagedObject(entity: stack.entity("GraphPerson"), insertInto: context)
            try person.setValue(name, forKey: "name")
            people[name] = person
        }
        for name in ["m1", "m2", "m3"] {
            let manager = ManagedObject(entity: stack.entity("GraphManager"), insertInto: context)
            try manager.setValue(name, forKey: "name")
            people[name] = manager
        }
        try context.save()
        return people.mapValues { $0.objectID.rowID! }
    }

    /// The name a row holds.
    static func name(of row: StoredRow, _ stack: TestStack) -> String? {
        guard case .string(let name) = row.values[stack.entity("GraphPerson").attributesByName["name"]!.storageIndex!]
        else { return nil }
        return name
    }

    @Test(arguments: StoreKind.allCases)
    func rowsComeWithTheirPositionsOnceEachAndOfTheEntityAskedFor(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let ids = try Self.savedPeople(stack)
        let missing = ids.values.max()! + 100
        // Increasing, with a duplicate and a row that does not exist.
        let asked = [ids["p1"]!, ids["m1"]!, ids["m1"]!, ids["p3"]!, ids["m3"]!, missing].sorted()
        for (entityName, expected) in [
            ("GraphPerson", ["p1", "m1", "p3", "m3"]), ("GraphManager", ["m1", "m3"]),
        ] {
            let entity = stack.entity(entityName)
            var seen: [(position: Int, name: String?)] = []
            try stack.store.forEachRow(withIDs: asked, of: entity) { position, row in
                seen.append((position, Self.name(of: row, stack)))
            }
            // Each row once, at its first position, in increasing order.
            #expect(seen.map(\.position) == seen.map(\.position).sorted())
            #expect(Set(seen.map(\.position)).count == seen.count)
            for (position, name) in seen {
                #expect(ids[name ?? ""] == asked[position], "\(entityName): \(name ?? "nil") at \(position)")
                #expect(asked.firstIndex(of: asked[position]) == position)
            }
            #expect(Set(seen.compactMap(\.name)) == Set(expected), "\(entityName)")
            // The same rows as the array form.
            let rows = try stack.store.rows(withIDs: asked, of: entity)
            #expect(rows.map { Self.name(of: $0.row, stack) } == seen.map(\.name), "\(entityName)")
        }
    }
}
