import Foundation
import StrataFormat
import StrataStorage
import Testing

@testable import Strata

/// ``RelationshipVerifier`` on stores of the relationship model: clean after the object graph wrote them,
/// and each kind of inconsistency found, with its location, once a row is changed through the engine
/// behind the object graph's back. ``RelationshipLayout`` as the store records it.
@Suite struct RelationshipVerifierTests {
    /// A Strata stack with one object graph of every kind of relationship the model has, saved.
    static func makeGraph() throws -> (TestStack, [String: ManagedObject]) {
        let stack = try TestStack.relationships(.strata)
        let context = stack.context()
        var objects: [String: ManagedObject] = [:]
        let department = try context.make("RelDepartment", ["name": "R&D"])
        let boss = try context.make("RelEmployee", ["name": "Ada"])
        let worker = try context.make("RelEmployee", ["name": "Grace"])
        for employee in [boss, worker] { try employee.setValue(department, forKey: "department") }
        try worker.setValue(boss, forKey: "manager")
        let badge = try context.make("RelBadge", ["code": "B-1"])
        try boss.setValue(badge, forKey: "badge")
        let playlist = try context.make("RelPlaylist", ["name": "Mix"])
        let tracks = try (0..<3).map { try context.make("RelTrack", ["title": "track \($0)"]) }
        let ordered = try playlist.mutableOrderedSetValue(forKey: "tracks")
        for track in tracks { try ordered.insert(track) }
        let post = try context.make("RelPost", ["title": "Hello"])
        let tag = try context.make("RelTag", ["name": "news"])
        try post.mutableSetValue(forKey: "tags").insert(tag)
        let car = try context.make("RelCar", ["plate": "AB-12"])
        let passenger = try context.make("RelPerson", ["name": "Linus"])
        try car.mutableSetValue(forKey: "passengers").insert(passenger)
        let driver = try context.make("RelDriver", ["name": "Ken"])
        try driver.setValue(car, forKey: "vehicle")
        try context.save()
        objects = [
            "department": department, "boss": boss, "worker": worker, "badge": badge, "playlist": playlist,
            "track": tracks[1], "post": post, "tag": tag, "car": car, "passenger": passenger, "driver": driver,
        ]
        return (stack, objects)
    }

    static func engine(_ stack: TestStack) -> Store { (stack.store as! StrataStore).engine }

    static func field(_ stack: TestStack, _ entity: String, _ relationship: String) -> Int {
        stack.entity(entity).relationshipsByName[relationship]!.fieldIndex!
    }

    /// Rewrites one row's fields through the engine, behind the object graph's back.
    static func rewrite(
        _ stack: TestStack, _ object: ManagedObject, _ change: (inout [RowRecord.Field]) -> Void
    ) throws {
        let tableName = StrataStore.tableName(for: object.entity.rootEntity)
        try engine(stack).write { txn in
            let table = try #require(txn.table(named: tableName))
            let row = RowID(object.objectID.rowID!)
            let (header, fields) = try RowRecord.decodeAll(try #require(try txn.row(row, in: table)))
            var changed = fields
            change(&changed)
            try txn.update(
                row, in: table,
                to: RowRecord.encode(entityID: header.entityID, rowVersion: header.rowVersion, fields: changed))
        }
    }

    static func delete(_ stack: TestStack, _ object: ManagedObject) throws {
        let tableName = StrataStore.tableName(for: object.entity.rootEntity)
        try engine(stack).write { txn in
            _ = try txn.delete(RowID(object.objectID.rowID!), from: try #require(txn.table(named: tableName)))
        }
    }

    static func verify(_ stack: TestStack) throws -> RelationshipReport {
        try #require(RelationshipVerifier.verify(engine(stack).snapshot()))
    }

    // MARK: - Tests

    @Test func theStoreRecordsItsModelsLayoutAndAGraphWrittenByTheObjectGraphIsClean() throws {
        let (stack, _) = try Self.makeGraph()
        let layout = try #require(try RelationshipLayout.decode(fromMetadata: (stack.store as! StrataStore).metadata))
        #expect(layout == RelationshipLayout(model: stack.model))
        let department = try #require(layout.toOnes.first { $0.name == "RelEmployee.department" })
        #expect(department.table == "entity.RelEmployee" && department.destinationTable == "entity.RelDepartment")
        #expect(department.field == Self.field(stack, "RelEmployee", "department"))
        #expect(department.inverse?.kind == .foreignKey && !department.allowsDangling)
        #expect(layout.toOnes.first { $0.name == "RelBook.library" }?.allowsDangling == true, "no action")
        #expect(layout.toOnes.first { $0.name == "RelDriver.vehicle" }?.allowsDangling == true, "no inverse")
        let tracks = try #require(layout.joinTables.first { $0.table == "join.RelPlaylist.tracks" })
        #expect(tracks.member.toOneField == Self.field(stack, "RelTrack", "playlist"))
        #expect(layout.joinTables.first { $0.table == "join.RelCar.passengers" }?.member.allowsMissing == true)

        let report = try Self.verify(stack)
        #expect(report.isClean && report.noteCount == 0, "\(report)")
        #expect(report.foreignKeys == 9, "\(report)")
        #expect(report.oneToOnePairs == 2, "boss -> badge and badge -> boss")
        #expect(report.links == 5, "3 tracks, 1 tag, 1 passenger")
    }

    @Test func aOneToOneThatDoesNotPointBackIsAProblem() throws {
        let (stack, objects) = try Self.makeGraph()
        let holder = Self.field(stack, "RelBadge", "holder")
        try Self.rewrite(stack, objects["badge"]!) { fields in fields[holder] = .null }
        let report = try Self.verify(stack)
        let boss = objects["boss"]!.objectID.rowID!
        #expect(report.problemCount == 1, "\(report)")
        let problem = try #require(report.problems.first)
        #expect(problem.table == "entity.RelEmployee" && problem.row == boss)
        #expect(problem.field == Self.field(stack, "RelEmployee", "badge"))
        #expect(problem.message.contains("RelBadge.holder names nothing"), "\(problem)")
    }

    @Test func anOrderedLinkThatDisagreesWithItsMembersToOneIsAProblemBothWays() throws {
        let (stack, objects) = try Self.makeGraph()
        let playlistField = Self.field(stack, "RelTrack", "playlist")
        let track = objects["track"]!.objectID.rowID!
        try Self.rewrite(stack, objects["track"]!) { fields in fields[playlistField] = .null }
        var report = try Self.verify(stack)
        #expect(
            report.problems.map(\.table) == ["join.RelPlaylist.tracks"]
                && report.problems[0].message.contains("links row \(track) of entity.RelTrack"), "\(report)")

        // Now the other way: the foreign key names the playlist, but the link is gone.
        try Self.rewrite(stack, objects["track"]!) { fields in
            fields[playlistField] = .reference(objects["playlist"]!.objectID.rowID!)
        }
        try Self.engine(stack).write { txn in
            let table = try #require(txn.table(named: "join.RelPlaylist.tracks"))
            var linkOfTrack: RowID?
            try txn.forEachRow(in: table) { id, bytes in
                if case .reference(track) = try RowRecord.field(at: 1, in: bytes) { linkOfTrack = id }
                return linkOfTrack == nil
            }
            _ = try txn.delete(try #require(linkOfTrack), from: table)
        }
        report = try Self.verify(stack)
        #expect(report.problemCount == 1, "\(report)")
        #expect(report.problems.first?.table == "entity.RelTrack" && report.problems.first?.row == track)
        #expect(report.problems.first?.field == playlistField)
        #expect(report.problems.first?.message.contains("has no link") == true, "\(report)")
    }

    @Test func aForeignKeyRecordingTheWrongSubentityIsAProblem() throws {
        let (stack, objects) = try Self.makeGraph()
        let vehicle = Self.field(stack, "RelDriver", "vehicle")
        let wrong = Int64(stack.entity("RelVehicle").entityID)
        try Self.rewrite(stack, objects["driver"]!) { fields in fields[vehicle + 1] = .int64(wrong) }
        let report = try Self.verify(stack)
        #expect(report.problemCount == 1, "\(report)")
        #expect(report.problems.first?.row == objects["driver"]!.objectID.rowID)
        #expect(report.problems.first?.message.contains("records entity \(wrong)") == true, "\(report)")
    }

    @Test func danglingReferencesAreNotesWhenTheModelAllowsThemAndProblemsOtherwise() throws {
        let (stack, objects) = try Self.makeGraph()
        try Self.delete(stack, objects["car"]!)  // RelDriver.vehicle has no inverse: a note
        try Self.delete(stack, objects["department"]!)  // RelDepartment.employees nullifies: problems
        let report = try Self.verify(stack)
        #expect(report.danglingByDesign == 1 && report.noteCount == 1, "\(report)")
        #expect(report.notes.first?.relationship == "RelDriver.vehicle")
        #expect(report.problems.filter { $0.relationship == "RelEmployee.department" }.count == 2, "\(report)")
        // The car's passenger link names a deleted row of the link's owner column: an orphan link, a problem.
        #expect(report.orphanLinks == 1 && report.problemCount == 3, "\(report)")
        #expect(report.problems.contains { $0.table == "join.RelCar.passengers" && $0.remedy == .orphanLinkRemoval })
    }

    @Test func removingOrphanLinksRemovesOnlyThem() throws {
        let (stack, objects) = try Self.makeGraph()
        try Self.delete(stack, objects["tag"]!)
        try Self.delete(stack, objects["passenger"]!)  // an inverse-less to-many's member: left by design
        var report = try Self.verify(stack)
        #expect(report.orphanLinks == 2 && report.problemCount == 1 && report.noteCount == 1, "\(report)")
        #expect(report.problems.first?.remedy == .orphanLinkRemoval)
        #expect(report.notes.first?.remedy == .orphanLinkRemoval)
        #expect(try RelationshipVerifier.removeOrphanLinks(in: Self.engine(stack)) == 2)
        report = try Self.verify(stack)
        #expect(report.isClean && report.noteCount == 0 && report.links == 3, "\(report)")
    }

    @Test func aLayoutLongerThanAMetadataValueIsSplitAndJoinedBack() throws {
        var layout = RelationshipLayout(model: RelationshipModel.model)
        let one = try #require(layout.toOnes.first)
        layout.toOnes = (0..<1_000).map { index in
            var copy = one
            copy.name = "Entity\(index).relationshipWithALongNameé"
            return copy
        }
        let entries = layout.metadataEntries()
        #expect(entries.count > 1 && entries[RelationshipLayout.metadataKey] == nil)
        #expect(entries.values.allSatisfy { $0.utf8.count <= Int(UInt16.max) })
        #expect(try RelationshipLayout.decode(fromMetadata: entries) == layout)
        #expect(throws: RelationshipLayoutError.self) {
            try RelationshipLayout.decode(fromMetadata: [RelationshipLayout.metadataKey: "{\"version\": 99}"])
        }
    }

    @Test func aStoreWithoutMetadataIsNotAnObjectStore() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rv-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store.open(at: directory)
        try store.write { txn in _ = try txn.createTable(named: "plain") }
        #expect(RelationshipVerifier.verify(store.snapshot()) == nil)
        try store.close()
    }
}
