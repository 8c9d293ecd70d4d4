import Foundation
import Strata
import StrataFormat
import StrataTestSupport
import Testing

@testable import StrataStorage

/// `strata fsck` on damage that is not in the bytes of a page but in what rows say about each other: a
/// secondary index entry taken away (the engine's index check; `--repair` rebuilds the index), a foreign
/// key left dangling by a delete that bypassed the object graph (exit 4 naming table, row and field; never
/// changed by `--repair`), and join-table links naming a deleted row (`--repair` removes them). Stores of
/// the object graph are built through it, then damaged through the engine.
@Suite(.serialized) struct StrataToolIntegrityTests {
    typealias Tool = StrataToolTests

    // MARK: - Stores of the object graph

    /// Departments and employees (the inverse's delete rule is nullify), libraries and books ("no action"),
    /// posts and tags (many-to-many), playlists and tracks (ordered one-to-many). Names carry a `Cli`
    /// prefix: the entity-class registry is process-wide.
    static let model: ManagedObjectModel = try! ManagedObjectModel(entities: [
        Entity("CliDepartment") {
            Attribute("name", .string)
            Relationship.toMany("employees", "CliEmployee", inverse: "department")
        },
        Entity("CliEmployee") {
            Attribute("name", .string)
            Relationship.toOne("department", "CliDepartment", inverse: "employees")
        },
        Entity("CliLibrary") {
            Attribute("name", .string)
            Relationship.toMany("books", "CliBook", inverse: "library", deleteRule: .noAction)
        },
        Entity("CliBook") {
            Attribute("title", .string)
            Relationship.toOne("library", "CliLibrary", inverse: "books")
        },
        Entity("CliPost") {
            Attribute("title", .string)
            Relationship.toMany("tags", "CliTag", inverse: "posts")
        },
        Entity("CliTag") {
            Attribute("name", .string)
            Relationship.toMany("posts", "CliPost", inverse: "tags")
        },
    ])

    /// What ``makeObjectStore(_:)`` saved, by entity: the objects' row IDs in insertion order.
    typealias RowIDs = [String: [UInt64]]

    /// Builds a store through the object graph: 2 departments with 3 employees each, a library with 2 books,
    /// 3 posts each tagged with 2 of 3 tags; saved and closed.
    static func makeObjectStore(_ directory: String) throws -> RowIDs {
        let coordinator = PersistentStoreCoordinator(model: model)
        let store = try coordinator.addPersistentStore(
            .strata(directory: directory, configuration: StrataStoreConfiguration(storage: Tool.quiet)))
        let context = ManagedObjectContext(coordinator: coordinator)
        func insert(_ entity: String, _ key: String, _ value: String) throws -> ManagedObject {
            let object = ManagedObject(entity: model.entity(named: entity)!, insertInto: context)
            try object.setValue(value, forKey: key)
            return object
        }
        var objects: [String: [ManagedObject]] = [:]
        for department in 0..<2 {
            let parent = try insert("CliDepartment", "name", "department \(department)")
            objects["CliDepartment", default: []].append(parent)
            for employee in 0..<3 {
                let child = try insert("CliEmployee", "name", "employee \(department).\(employee)")
                try child.setValue(parent, forKey: "department")
                objects["CliEmployee", default: []].append(child)
            }
        }
        let library = try insert("CliLibrary", "name", "library")
        objects["CliLibrary"] = [library]
        for title in ["Emma", "Dune"] {
            let book = try insert("CliBook", "title", title)
            try book.setValue(library, forKey: "library")
            objects["CliBook", default: []].append(book)
        }
        let tags = try (0..<3).map { try insert("CliTag", "name", "tag \($0)") }
        objects["CliTag"] = tags
        for post in 0..<3 {
            let object = try insert("CliPost", "title", "post \(post)")
            let related = try object.mutableSetValue(forKey: "tags")
            try related.insert(tags[post % 3])
            try related.insert(tags[(post + 1) % 3])
            objects["CliPost", default: []].append(object)
        }
        try context.save()
        let rowIDs = objects.mapValues { $0.map { $0.objectID.rowID! } }
        try coordinator.removePersistentStore(store)
        return rowIDs
    }

    /// Deletes rows through the engine, bypassing the object graph (no delete rule, no link removed).
    static func deleteRows(_ rows: [UInt64], from table: String, in directory: String) throws {
        let store = try Store.open(at: directory, configuration: Tool.quiet)
        try store.write { txn in
            let id = try #require(txn.table(named: table))
            for row in rows { #expect(try txn.delete(RowID(row), from: id)) }
        }
        try store.close()
    }

    /// The rows of an engine table.
    static func rowCount(of table: String, in directory: String) throws -> Int {
        let store = try ReadOnlyStore.open(at: directory)
        defer { store.close() }
        let snapshot = store.snapshot()
        return try snapshot.rowCount(in: try #require(snapshot.table(named: table)))
    }

    /// The `relationships` part of a `fsck --json` report.
    static func relationships(_ run: Tool.Run, afterRepair: Bool = false) throws -> [String: Any] {
        let key = afterRepair ? "relationshipsAfterRepair" : "relationships"
        return try #require(try run.json()[key] as? [String: Any], "\(run)")
    }

    static func findings(_ run: Tool.Run, _ kind: String) throws -> [[String: Any]] {
        try relationships(run)[kind] as? [[String: Any]] ?? []
    }

    // MARK: - Tests

    @Test func anObjectStoreIsCleanAndRecordsItsRelationshipLayout() throws {
        try TemporaryStore.withPosixDirectory { root in
            let store = root + "/store"
            _ = try Self.makeObjectStore(store)
            let run = try Tool.strata("fsck", store, "--json")
            #expect(run.status == 0, "\(run)")
            let report = try Self.relationships(run)
            #expect(report["layoutFound"] as? Bool == true)
            #expect(report["toOneRelationships"] as? Int == 2)
            #expect(report["joinTables"] as? Int == 1)
            #expect(report["foreignKeys"] as? Int == 8, "6 employees and 2 books")
            #expect(report["links"] as? Int == 6)
            #expect(report["problemCount"] as? Int == 0)
            let text = try Tool.strata("fsck", store)
            #expect(text.standardOutput.contains("relationships: 2 to-ones, 1 join tables; 8 foreign keys"), "\(text)")
            // `info` lists the relationship indexes the store reads to-manys through.
            let info = try Tool.strata("info", store, "--json")
            let indexes = try #require(try info.json()["indexes"] as? [[String: Any]], "\(info)")
            let byDepartment = try #require(indexes.first { $0["name"] as? String == "fk.CliEmployee.department" })
            #expect(byDepartment["table"] as? String == "entity.CliEmployee")
            #expect(byDepartment["entries"] as? Int == 6)
            #expect(
                indexes.contains { $0["name"] as? String == "join.CliPost.tags.owner" && $0["entries"] as? Int == 6 })
            #expect(
                try Tool.strata("info", store).standardOutput.contains(
                    "fk.CliEmployee.department (#"), "info prints its indexes")
        }
    }

    @Test func aRemovedIndexEntryIsNamedAndRepairRebuildsTheIndex() throws {
        try TemporaryStore.withPosixDirectory { root in
            let store = root + "/store"
            let engine = try Store.open(at: store, configuration: Tool.quiet)
            try engine.write { txn in
                let table = try txn.createTable(named: "numbers")
                for number in 0..<500 {
                    try txn.insert(
                        RowRecord.encode(entityID: 1, rowVersion: 1, fields: [.int64(Int64(number))]), into: table)
                }
                let index = try txn.createIndex(named: "numbers.byValue", on: table, fields: [0])
                // Test hook: row 42's entry taken away (its key is row 42's value, 41), behind the engine's back.
                var state = try txn.state.index(index)
                let tree = IndexTree(pages: txn.tree.pages)
                state.root = try tree.remove(
                    state.root, IndexKey.entry(key: IndexKey.encode([.int64(41)]), rowID: 42), owner: txn.tag
                ).root
                txn.state.indexes[index] = state
            }
            try engine.close()

            let run = try Tool.strata("fsck", store, "--json")
            #expect(run.status == 4, "\(run)")
            let problems = try Tool.problems(run)
            #expect(
                problems.contains {
                    $0["index"] as? String == "numbers.byValue" && $0["remedy"] as? String == "indexRebuild"
                        && ($0["message"] as? String ?? "").contains("row 42")
                }, "\(run)")
            #expect(try Tool.strata("fsck", store).standardOutput.contains("numbers.byValue"))

            let repair = try Tool.strata("fsck", store, "--repair")
            #expect(repair.status == 1, "\(repair)")
            #expect(repair.standardOutput.contains("indexes rebuilt from their tables: numbers.byValue"), "\(repair)")
            let after = try Tool.strata("fsck", store, "--json")
            #expect(after.status == 0, "\(after)")
            let info = try Tool.strata("info", store, "--json")
            let indexes = try #require(try info.json()["indexes"] as? [[String: Any]])
            #expect(indexes.first?["entries"] as? Int == 500, "\(info)")
        }
    }

    @Test func aDanglingForeignKeyIsProblemFourNamingTableRowAndField() throws {
        try TemporaryStore.withPosixDirectory { root in
            let store = root + "/store"
            let rows = try Self.makeObjectStore(store)
            let department = try #require(rows["CliDepartment"]?.first)
            try Self.deleteRows([department], from: "entity.CliDepartment", in: store)
            let field = try #require(
                Self.model.entity(named: "CliEmployee")?.relationshipsByName["department"]?.fieldIndex)

            let run = try Tool.strata("fsck", store, "--json")
            #expect(run.status == 4, "\(run)")
            #expect(try run.json()["clean"] as? Bool == false)
            let problems = try Self.findings(run, "problems")
            let employees = try #require(rows["CliEmployee"]).prefix(3)
            #expect(problems.count == 3, "\(run)")
            for employee in employees {
                #expect(
                    problems.contains {
                        $0["table"] as? String == "entity.CliEmployee" && $0["row"] as? UInt64 == employee
                            && $0["field"] as? Int == field && $0["relationship"] as? String == "CliEmployee.department"
                            && ($0["message"] as? String ?? "").contains("row \(department) of entity.CliDepartment")
                    }, "\(run)")
            }
            let text = try Tool.strata("fsck", store)
            #expect(text.status == 4)
            #expect(
                text.standardOutput.contains(
                    "problem: entity.CliEmployee row \(employees.first!) field \(field) (CliEmployee.department): "
                        + "names row \(department) of entity.CliDepartment, which does not exist"), "\(text)")
            #expect(text.standardOutput.contains("result: 3 problems left (exit 4)"), "\(text)")

            // --repair never changes committed data: a dangling foreign key stays, and so does every byte.
            let before = try Tool.snapshotFiles(store)
            #expect(try Tool.strata("fsck", store, "--repair").status == 4)
            #expect(try Tool.snapshotFiles(store) == before)
        }
    }

    @Test func aReferenceLeftDanglingByANoActionRuleIsANote() throws {
        try TemporaryStore.withPosixDirectory { root in
            let store = root + "/store"
            let rows = try Self.makeObjectStore(store)
            let library = try #require(rows["CliLibrary"]?.first)
            try Self.deleteRows([library], from: "entity.CliLibrary", in: store)
            let run = try Tool.strata("fsck", store, "--json")
            #expect(run.status == 0, "\(run)")
            let report = try Self.relationships(run)
            #expect(report["danglingByDesign"] as? Int == 2)
            let notes = try Self.findings(run, "notes")
            #expect(
                notes.filter {
                    $0["table"] as? String == "entity.CliBook" && $0["relationship"] as? String == "CliBook.library"
                }.count == 2, "\(run)")
        }
    }

    @Test func orphanLinksAreNamedAndRepairRemovesThem() throws {
        try TemporaryStore.withPosixDirectory { root in
            let store = root + "/store"
            let rows = try Self.makeObjectStore(store)
            let tag = try #require(rows["CliTag"]?.first)
            try Self.deleteRows([tag], from: "entity.CliTag", in: store)
            #expect(try Self.rowCount(of: "join.CliPost.tags", in: store) == 6)

            let run = try Tool.strata("fsck", store, "--json")
            #expect(run.status == 4, "\(run)")
            let orphans = try Self.findings(run, "problems").filter {
                $0["table"] as? String == "join.CliPost.tags" && $0["remedy"] as? String == "orphanLinkRemoval"
                    && ($0["message"] as? String ?? "").contains("row \(tag) of entity.CliTag")
            }
            #expect(orphans.count == 2, "tag 0 is on posts 0 and 2: \(run)")
            #expect(try Self.relationships(run)["orphanLinks"] as? Int == 2)

            let repair = try Tool.strata("fsck", store, "--repair", "--json")
            #expect(repair.status == 1, "\(repair)")
            #expect(try repair.json()["clean"] as? Bool == true)
            let repairs = try #require(try repair.json()["repairs"] as? [String])
            #expect(repairs.contains("orphan links removed from join tables: 2"), "\(repair)")
            #expect(try Self.relationships(repair, afterRepair: true)["problemCount"] as? Int == 0)

            #expect(try Self.rowCount(of: "join.CliPost.tags", in: store) == 4, "only the orphans were removed")
            let after = try Tool.strata("fsck", store)
            #expect(after.status == 0, "\(after)")
            #expect(after.standardOutput.contains("result: clean (exit 0)"))
        }
    }
}
