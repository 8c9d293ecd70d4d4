import Foundation
import Strata
import StrataTestSupport
import Testing

@Suite struct FetchedResultsControllerTests {
    static func names(_ controller: FetchedResultsController<ManagedObject>) -> [[String]] {
        (controller.sections ?? []).map { section in
            section.objects.map { (try? $0.value(forKey: "name")) as? String ?? "?" }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func sectionsIndexPathsAndObjects(kind: StoreKind) throws {
        let stack = try TestStack.fetchedResults(kind)
        let context = stack.context()
        try context.makeItem("beta", rank: 2, name: "b2")
        try context.makeItem("alpha", rank: 1, name: "a1")
        try context.makeItem("beta", rank: 1, name: "b1")
        try context.makeItem("alpha", rank: 3, name: "a3", active: false)
        try context.save()
        try context.makeItem("gamma", rank: 0, name: "g0")  // unsaved: included, as the fetch includes it
        let controller = FetchedResultsController(
            fetchRequest: try FetchedResultsModel.request(), managedObjectContext: context, sectionNameKeyPath: "group")
        #expect(controller.sections == nil)
        try controller.performFetch()
        #expect(controller.sections?.map(\.name) == ["alpha", "beta", "gamma"])
        #expect(controller.sections?.map(\.indexTitle) == ["A", "B", "G"])
        #expect(controller.sections?.map(\.numberOfObjects) == [1, 2, 1])
        #expect(controller.sectionIndexTitles == ["A", "B", "G"])
        #expect(Self.names(controller) == [["a1"], ["b1", "b2"], ["g0"]])
        let b2 = controller.object(at: IndexPath(item: 1, section: 1))
        #expect(try b2.value(forKey: "name") as? String == "b2")
        #expect(controller.indexPath(forObject: b2) == IndexPath(item: 1, section: 1))
        #expect(controller.fetchedObjects?.count == 4)
        let inactive = try context.fetch(FetchRequest<ManagedObject>(entityName: "FRCItem")).first {
            (try? $0.value(forKey: "active")) as? Bool == false
        }
        #expect(controller.indexPath(forObject: try #require(inactive)) == nil)

        let flat = FetchedResultsController(
            fetchRequest: try FetchedResultsModel.request(sectioned: false), managedObjectContext: context)
        try flat.performFetch()
        #expect(flat.sections?.map(\.name) == [""])
        #expect(Self.names(flat) == [["g0", "a1", "b1", "b2"]])
    }

    @Test(arguments: StoreKind.allCases)
    func theDelegateHearsInsertsDeletesMovesAndUpdates(kind: StoreKind) throws {
        let stack = try TestStack.fetchedResults(kind)
        let context = stack.context()
        let a1 = try context.makeItem("alpha", rank: 1, name: "a1")
        let a2 = try context.makeItem("alpha", rank: 2, name: "a2")
        let b1 = try context.makeItem("beta", rank: 1, name: "b1")
        try context.save()
        let controller = FetchedResultsController(
            fetchRequest: try FetchedResultsModel.request(), managedObjectContext: context, sectionNameKeyPath: "group")
        let recorder = ChangeRecorder()
        controller.delegate = recorder
        try controller.performFetch()
        recorder.start(from: controller)
        #expect(recorder.contentChanges == 0)  // performFetch tells the delegate nothing

        // An insert in a new section.
        try context.makeItem("gamma", rank: 1, name: "g1")
        try context.processPendingChanges()
        #expect(
            recorder.last == [
                .section(.insert, index: 2, name: "gamma"),
                .object(.insert, name: "g1", old: nil, new: IndexPath(item: 0, section: 2)),
            ])
        // A change that keeps the object's place is an update.
        try a1.setValue("a1'", forKey: "name")
        try context.processPendingChanges()
        #expect(
            recorder.last == [
                .object(.update, name: "a1'", old: IndexPath(item: 0, section: 0), new: IndexPath(item: 0, section: 0))
            ])
        // A change of rank that reorders a section is a move.
        try a1.setValue(Int64(5), forKey: "rank")
        try context.processPendingChanges()
        #expect(
            recorder.last == [
                .object(.move, name: "a1'", old: IndexPath(item: 0, section: 0), new: IndexPath(item: 1, section: 0))
            ])
        // Leaving the predicate is a delete; the section it empties goes too.
        try b1.setValue(false, forKey: "active")
        try context.processPendingChanges()
        #expect(
            recorder.last == [
                .section(.delete, index: 1, name: "beta"),
                .object(.delete, name: "b1", old: IndexPath(item: 0, section: 1), new: nil),
            ])
        // Moving between sections; deleting.
        try a2.setValue("gamma", forKey: "group")
        context.delete(a1)
        try context.processPendingChanges()
        #expect(
            recorder.last == [
                .section(.delete, index: 0, name: "alpha"),
                .object(.delete, name: "a1'", old: IndexPath(item: 1, section: 0), new: nil),
                .object(.move, name: "a2", old: IndexPath(item: 0, section: 0), new: IndexPath(item: 1, section: 0)),
            ])
        try context.save()
        #expect(Self.names(controller) == [["g1", "a2"]])
        #expect(recorder.failures.isEmpty)
        #expect(recorder.sections == ChangeRecorder.sections(of: controller))
    }

    @Test(arguments: StoreKind.allCases)
    func mergesFromAnotherContextBringObjectsInAndOut(kind: StoreKind) throws {
        let stack = try TestStack.fetchedResults(kind)
        let context = stack.context()
        context.automaticallyMergesChangesFromParent = true
        try context.makeItem("alpha", rank: 1, name: "a1")
        try context.makeItem("alpha", rank: 2, name: "hidden", active: false)
        try context.save()
        let controller = FetchedResultsController(
            fetchRequest: try FetchedResultsModel.request(), managedObjectContext: context, sectionNameKeyPath: "group")
        let recorder = ChangeRecorder()
        controller.delegate = recorder
        try controller.performFetch()
        recorder.start(from: controller)
        context.reset()  // nothing registered: the merge must still find objects that start to match
        #expect(recorder.failures.isEmpty)

        let other = stack.context()
        let hidden = try #require(
            try other.fetch(FetchRequest<ManagedObject>(entityName: "FRCItem")).first {
                try $0.value(forKey: "name") as? String == "hidden"
            })
        try hidden.setValue(true, forKey: "active")
        try other.makeItem("alpha", rank: 0, name: "a0")
        try other.save()
        #expect(Self.names(controller) == [["a0", "a1", "hidden"]])
        #expect(recorder.sections == ChangeRecorder.sections(of: controller))

        let a1 = try #require(controller.fetchedObjects?[1])
        other.delete(try other.existingObject(with: a1.objectID))
        try other.save()
        #expect(Self.names(controller) == [["a0", "hidden"]])
        #expect(recorder.failures.isEmpty)
        #expect(recorder.sections == ChangeRecorder.sections(of: controller))
    }

    @Test func differencesArriveAsAnAsyncSequence() async throws {
        let stack = try TestStack.fetchedResults(.inMemory)
        let context = stack.context()
        try context.makeItem("alpha", rank: 1, name: "a1")
        var controller: FetchedResultsController<ManagedObject>? = FetchedResultsController(
            fetchRequest: try FetchedResultsModel.request(), managedObjectContext: context, sectionNameKeyPath: "group")
        let stream = try #require(controller).differences()
        try controller?.performFetch()
        let item = try context.makeItem("alpha", rank: 0, name: "a0")
        try context.processPendingChanges()
        try context.save()
        controller = nil  // ends the stream
        var differences: [FetchedResultsDifference] = []
        for await difference in stream { differences.append(difference) }
        try #require(differences.count == 3)
        #expect(differences[0].snapshot.sections.map(\.name) == ["alpha"])
        #expect(differences[0].objectChanges.map(\.type) == [.insert])
        #expect(differences[1].objectChanges.map(\.type) == [.insert])
        #expect(differences[1].objectChanges.first?.newIndexPath == IndexPath(item: 0, section: 0))
        // The save gave both objects permanent IDs: a snapshot with them follows.
        #expect(differences[2].isEmpty)
        #expect(differences[2].snapshot.objectIDs.first == item.objectID)
        #expect(differences[2].snapshot.objectIDs.allSatisfy { !$0.isTemporaryID })
    }

    @Test(arguments: StoreKind.allCases)
    func batchedFetchingReadsRowsABatchAtATime(kind: StoreKind) throws {
        let stack = try TestStack.fetchedResults(kind)
        do {
            let writer = stack.context()
            for index in 0..<200 { try writer.makeItem("alpha", rank: Int64(index), name: "i\(index)") }
            try writer.save()
        }
        let context = stack.context()
        let request = try FetchedResultsModel.request(sectioned: false)
        request.fetchBatchSize = 20
        let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: context)
        let before = stack.store.rowReads
        try controller.performFetch()
        #expect(controller.fetchedObjects?.count == 200)
        #expect(controller.fetchedObjects?.allSatisfy(\.isFault) == true)
        _ = try controller.object(at: IndexPath(item: 5, section: 0)).value(forKey: "name")
        let afterOne = stack.store.rowReads
        #expect(afterOne - before <= 20)
        // Placing a new object compares it with a few objects only.
        try context.makeItem("alpha", rank: 150, name: "new")
        try context.processPendingChanges()
        #expect(controller.indexPath(forObject: controller.fetchedObjects![151])?.item == 151)
        #expect(try controller.fetchedObjects![151].value(forKey: "name") as? String == "new")
        #expect(stack.store.rowReads - afterOne <= 20 * 9)
        #expect(controller.fetchedObjects!.filter { !$0.isFault }.count < 200)
    }

    @Test(arguments: StoreKind.allCases)
    func rollbackAndUndoAreFollowed(kind: StoreKind) throws {
        let stack = try TestStack.fetchedResults(kind)
        let context = stack.contextWithUndo()
        try context.makeItem("alpha", rank: 1, name: "a1")
        try context.save()
        let controller = FetchedResultsController(
            fetchRequest: try FetchedResultsModel.request(), managedObjectContext: context, sectionNameKeyPath: "group")
        let recorder = ChangeRecorder()
        controller.delegate = recorder
        try controller.performFetch()
        recorder.start(from: controller)
        try context.makeItem("beta", rank: 1, name: "b1")
        try context.processPendingChanges()
        #expect(Self.names(controller) == [["a1"], ["b1"]])
        context.undoManager?.undo()
        try context.processPendingChanges()
        #expect(Self.names(controller) == [["a1"]])
        try context.makeItem("alpha", rank: 0, name: "a0")
        try context.processPendingChanges()
        context.rollback()
        #expect(Self.names(controller) == [["a1"]])
        #expect(recorder.failures.isEmpty)
        #expect(recorder.sections == ChangeRecorder.sections(of: controller))
    }
}

/// Thousands of random steps (inserts, deletes, changes that move objects between sections and places and in
/// and out of the predicate, saves, rollbacks, merges of other contexts' saves) with the controller's content
/// compared after each with a new fetch, and its reported changes replayed on the content before.
@Suite struct FetchedResultsControllerPropertyTests {
    @Test(arguments: StoreKind.allCases)
    func reportedChangesMatchRecomputingTheFetch(kind: StoreKind) throws {
        let seed =
            ProcessInfo.processInfo.environment["STRATA_FRC_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 0...UInt64.max)
        try Self.run(kind: kind, seed: seed, steps: kind.isServer ? 300 : 3_000)
    }

    /// The seed that found inserts changed in a later event going unreported (they were not named as updated).
    @Test(arguments: StoreKind.allCases)
    func regressionAnInsertChangedInALaterEvent(kind: StoreKind) throws {
        try Self.run(kind: kind, seed: 1_550_286_604_930_288_598, steps: 100)
    }

    static func run(kind: StoreKind, seed: UInt64, steps: Int) throws {
        var random = RepeatableRandomNumberGenerator(seed: seed)
        let stack = try TestStack.fetchedResults(kind)
        let context = stack.context()
        context.mergePolicy = .mergeByPropertyObjectTrump
        context.automaticallyMergesChangesFromParent = true
        let request = try FetchedResultsModel.request()
        let controller = FetchedResultsController(
            fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: "group")
        let recorder = ChangeRecorder()
        controller.delegate = recorder
        try controller.performFetch()
        recorder.start(from: controller)
        let groups: [String?] = ["a", "b", "c", "d", nil]
        var counter = 0
        func all(in context: ManagedObjectContext) throws -> [ManagedObject] {
            try context.fetch(FetchRequest<ManagedObject>(entityName: "FRCItem"))
        }
        for step in 0..<steps {
            let action = Int.random(in: 0..<100, using: &random)
            var description = ""
            switch action {
            case 0..<25:
                counter += 1
                let group = groups.randomElement(using: &random)!
                let rank = Int64.random(in: 0..<6, using: &random)
                try context.makeItem(group, rank: rank, name: "n\(counter)", active: Bool.random(using: &random))
                description = "insert n\(counter) \(group ?? "nil") \(rank)"
            case 25..<35:
                if let victim = try all(in: context).randomElement(using: &random) {
                    description = "delete \(try victim.value(forKey: "name") ?? "")"
                    context.delete(victim)
                }
            case 35..<65:
                if let object = try all(in: context).randomElement(using: &random) {
                    switch Int.random(in: 0..<4, using: &random) {
                    case 0: try object.setValue(groups.randomElement(using: &random)!, forKey: "group")
                    case 1: try object.setValue(Int64.random(in: 0..<6, using: &random), forKey: "rank")
                    case 2: try object.setValue(Bool.random(using: &random), forKey: "active")
                    default: try object.setValue("renamed\(step)", forKey: "name")
                    }
                    description = "change \(try object.value(forKey: "name") ?? "")"
                }
            case 65..<78:
                description = "save"
                do { try context.save() } catch { context.rollback() }
            case 78..<81:
                description = "rollback"
                context.rollback()
            default:
                // Another context of the coordinator saves; the controller's context merges it.
                description = "merge"
                let other = stack.context()
                other.mergePolicy = .mergeByPropertyStoreTrump
                for _ in 0..<Int.random(in: 1...3, using: &random) {
                    let saved = try all(in: other)
                    switch Int.random(in: 0..<3, using: &random) {
                    case 0:
                        counter += 1
                        try other.makeItem(
                            groups.randomElement(using: &random)!, rank: Int64.random(in: 0..<6, using: &random),
                            name: "m\(counter)", active: Bool.random(using: &random))
                    case 1:
                        if let victim = saved.randomElement(using: &random) { other.delete(victim) }
                    default:
                        if let object = saved.randomElement(using: &random) {
                            try object.setValue(groups.randomElement(using: &random)!, forKey: "group")
                            try object.setValue(Int64.random(in: 0..<6, using: &random), forKey: "rank")
                            try object.setValue(Bool.random(using: &random), forKey: "active")
                        }
                    }
                }
                try? other.save()
            }
            try context.processPendingChanges()

            let expected = try context.fetch(request)
            let actual = controller.fetchedObjects ?? []
            let sameObjects = expected.count == actual.count && zip(expected, actual).allSatisfy { $0 === $1 }
            let expectedNames = try expected.map { (try $0.value(forKey: "group") as? String) ?? "" }
            var runs: [String] = []
            for name in expectedNames where runs.last != name { runs.append(name) }
            let sameSections = controller.sections?.map(\.name) == runs
            let replayed = recorder.sections == ChangeRecorder.sections(of: controller)
            if !sameObjects || !sameSections || !replayed || !recorder.failures.isEmpty {
                func describe(_ objects: [ManagedObject]) -> String {
                    objects.map {
                        let name = (try? $0.value(forKey: "name")) as? String ?? "?"
                        let group = (try? $0.value(forKey: "group")) as? String ?? "nil"
                        let rank = (try? $0.value(forKey: "rank")) as? Int64 ?? -1
                        return "\(name)/\(group)/\(rank)/\($0.objectID.rowID ?? 0)\($0.isInserted ? "i" : "")"
                    }.joined(separator: " ")
                }
                Issue.record(
                    """
                    expected \(describe(expected))
                    actual   \(describe(actual))
                    """)
                Issue.record(
                    """
                    seed \(seed), step \(step) (\(description)): objects match \(sameObjects), sections match \
                    \(sameSections), replayed changes match \(replayed), failures \(recorder.failures); last \
                    callbacks \(recorder.last)
                    """)
                return
            }
        }
    }
}
