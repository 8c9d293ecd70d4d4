import Foundation
import Strata
import Testing

/// Faults and the row cache: COREDATA.md §1.2 (isFault), §1.3 (stalenessInterval) and §5 #1, #2.
/// `store.rowReads` counts reads of the underlying storage, so an unchanged count is a row-cache hit.
@Suite struct FaultingTests {
    @Test(arguments: StoreKind.allCases)
    func objectWithDoesNoIOAndReturnsAFault(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let context = stack.context()
        let reads = stack.store.rowReads
        let ada = try #require(context.object(with: id) as? GraphEmployee)
        #expect(ada.isFault)
        #expect(ada.objectID == id)
        #expect(ada.entity.name == "GraphEmployee")
        #expect(context.registeredObject(for: id) === ada)
        #expect(stack.store.rowReads == reads)
    }

    @Test(arguments: StoreKind.allCases)
    func readingIsFaultDoesNotFireTheFaultButTouchingAPropertyDoes(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let context = stack.context()
        let reads = stack.store.rowReads
        let ada = try #require(context.object(with: id) as? GraphEmployee)
        for _ in 0..<3 { #expect(ada.isFault) }
        _ = ada.description
        _ = ada.hasChanges
        #expect(ada.isFault)
        #expect(ada.events.isEmpty)
        #expect(stack.store.rowReads == reads)

        #expect(ada.firstName == "Ada")
        #expect(!ada.isFault)
        #expect(ada.events == ["awakeFromFetch"])
        // The row cache was empty (the seeding context is gone): firing read the store once.
        #expect(stack.store.rowReads == reads + 1)
        #expect(ada.salary == 100)
        #expect(stack.store.rowReads == reads + 1)
    }

    @Test(arguments: StoreKind.allCases)
    func firingTouchesKeyValueCodingToo(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let context = stack.context()
        let ada = context.object(with: id)
        #expect(try ada.value(forKey: "lastName") as? String == "Lovelace")
        #expect(!ada.isFault)
        let otherContext = stack.context()
        let other = otherContext.object(with: id)
        try other.willAccessValue(forKey: nil)
        #expect(!other.isFault)
    }

    @Test(arguments: StoreKind.allCases)
    func firingFromTheRowCacheDoesNoStoreReadWhenAnotherContextLoadedTheRow(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let loader = stack.context()
        let loaded = try fetchEmployees(loader)
        #expect(loaded.count == 1)
        let reads = stack.store.rowReads
        let hits = stack.coordinator.rowCacheStatistics.hits

        let context = stack.context()
        let ada = try #require(context.object(with: id) as? GraphEmployee)
        #expect(ada.firstName == "Ada")
        #expect(!ada.isFault)
        #expect(stack.store.rowReads == reads)
        #expect(stack.coordinator.rowCacheStatistics.hits == hits + 1)
        withExtendedLifetime(loaded) {}
    }

    /// Employees E1 to E5 with salaries 1 to 5, in row order: the fetch row cache limit's tests.
    private func seedFiveEmployees(_ stack: TestStack) throws -> [ManagedObjectID] {
        try seedEmployees(stack, (1...5).map { ("E\($0)", "Last", Int64($0)) })
    }

    /// A fetch of faults keeps the rows of its first ``PersistentStoreCoordinator/fetchRowCacheLimit`` results only:
    /// the others hold no row until they fire, and then read it from the store, as it is committed by then.
    @Test(arguments: StoreKind.allCases)
    func aFetchOfFaultsCachesTheRowsOfItsFirstResultsOnly(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let ids = try seedFiveEmployees(stack)
        stack.coordinator.fetchRowCacheLimit = 2
        let context = stack.context()
        let request = FetchRequest<GraphEmployee>(entityName: "GraphEmployee")
        request.sortKeys = [SortKey("salary", ascending: false)]
        let faults = try context.fetch(request)
        #expect(faults.map(\.objectID) == ids.reversed())
        #expect(faults.allSatisfy { $0.isFault })
        #expect(stack.coordinator.rowCacheStatistics.entries == 2)
        #expect(stack.coordinator.rowCacheStatistics.cachedRows == 2)

        // Another context changes a row the fetch did not cache.
        do {
            let writer = stack.context()
            try employee(ids[0], in: writer).salary = 10
            try writer.save()
        }
        #expect(stack.coordinator.rowCacheStatistics.entries == 2)

        let reads = stack.store.rowReads
        // The first results fill from the rows the fetch read.
        #expect(faults[0].salary == 5)
        #expect(faults[1].salary == 4)
        #expect(stack.store.rowReads == reads)
        // The others read their rows now.
        #expect(faults[4].salary == 10)
        #expect(faults[2].salary == 3)
        #expect(faults[3].firstName == "E2")
        #expect(stack.store.rowReads == reads + 3)
        #expect(faults.allSatisfy { !$0.isFault })
        #expect(stack.coordinator.rowCacheStatistics.entries == 5)
    }

    /// Without sort keys the store stops decoding rows once it has the limit's worth, in row order.
    @Test(arguments: StoreKind.allCases)
    func anUnsortedFetchOfFaultsCachesTheRowsOfItsFirstResultsInRowOrder(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let ids = try seedFiveEmployees(stack)
        stack.coordinator.fetchRowCacheLimit = 3
        let context = stack.context()
        let faults = try context.fetch(FetchRequest<GraphEmployee>(entityName: "GraphEmployee"))
        #expect(faults.map(\.objectID) == ids)
        #expect(stack.coordinator.rowCacheStatistics.cachedRows == 3)
        let reads = stack.store.rowReads
        #expect(faults.prefix(3).map(\.salary) == [1, 2, 3])
        #expect(stack.store.rowReads == reads)
        #expect(faults.suffix(2).map(\.salary) == [4, 5])
        #expect(stack.store.rowReads == reads + 2)
    }

    /// The limit concerns faults only: a fetch that fills its objects reads every row.
    @Test(arguments: StoreKind.allCases)
    func aFetchThatFillsItsObjectsReadsEveryRowWhateverTheLimit(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        _ = try seedFiveEmployees(stack)
        stack.coordinator.fetchRowCacheLimit = 0
        let context = stack.context()
        let filled = try fetchEmployees(context)
        #expect(filled.count == 5)
        #expect(filled.allSatisfy { !$0.isFault })
        let reads = stack.store.rowReads
        #expect(filled.map(\.salary) == [1, 2, 3, 4, 5])
        #expect(stack.store.rowReads == reads)
        #expect(stack.coordinator.fetchRowCacheLimit == 0)
        #expect(
            PersistentStoreCoordinator(model: TestModel.model).fetchRowCacheLimit
                == PersistentStoreCoordinator.defaultFetchRowCacheLimit)
    }

    @Test(arguments: StoreKind.allCases)
    func existingObjectFillsFromTheRowCacheWhenAnotherContextLoadedTheRow(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let loader = stack.context()
        let held = try employee(id, in: loader)
        let reads = stack.store.rowReads
        let ada = try stack.context().existingObject(with: id)
        #expect(!ada.isFault)
        #expect(stack.store.rowReads == reads)
        withExtendedLifetime(held) {}
    }

    @Test(arguments: StoreKind.allCases)
    func positiveStalenessIntervalSendsAnOldCacheEntryToTheStore(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let loader = stack.context()
        let held = try employee(id, in: loader)

        // A generous interval: the entry is fresh, the cache serves it.
        let tolerant = stack.context()
        tolerant.stalenessInterval = 60
        var reads = stack.store.rowReads
        _ = try tolerant.existingObject(with: id)
        #expect(stack.store.rowReads == reads)

        Thread.sleep(forTimeInterval: 0.06)
        let strict = stack.context()
        strict.stalenessInterval = 0.03
        reads = stack.store.rowReads
        let fresh = try employee(id, in: strict)
        #expect(fresh.firstName == "Ada")
        #expect(stack.store.rowReads == reads + 1)
        // The read refreshed the entry: a second strict fault within the interval is served by the cache.
        reads = stack.store.rowReads
        _ = try employee(id, in: stack.context().configured { $0.stalenessInterval = 30 })
        #expect(stack.store.rowReads == reads)
        withExtendedLifetime(held) {}
    }

    /// COREDATA.md §1.3: "`stalenessInterval` ... Negative means infinite (the default)"; Core Data's
    /// documentation: "0.0 represents 'no staleness acceptable'". Strata treats 0 as infinite.
    @Test(arguments: StoreKind.allCases)
    func zeroStalenessIntervalAcceptsNoCachedRow(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let loader = stack.context()
        let held = try employee(id, in: loader)
        let strict = stack.context()
        strict.stalenessInterval = 0
        let reads = stack.store.rowReads
        _ = try strict.existingObject(with: id)
        #expect(stack.store.rowReads == reads + 1, "stalenessInterval 0 must not use cached row data")
        withExtendedLifetime(held) {}
    }

    @Test(arguments: StoreKind.allCases)
    func negativeStalenessIntervalUsesCachedRowsOfAnyAge(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let loader = stack.context()
        let held = try employee(id, in: loader)
        Thread.sleep(forTimeInterval: 0.02)
        let context = stack.context()
        context.stalenessInterval = -1
        let reads = stack.store.rowReads
        _ = try context.existingObject(with: id)
        #expect(stack.store.rowReads == reads)
        withExtendedLifetime(held) {}
    }

    /// A context going away lets go of the row of every object it registered (fired, fetched fault, or never read),
    /// and its objects that live on no longer name it.
    @Test(arguments: StoreKind.allCases)
    func objectsOutlivingTheirContextHoldNoRowsAndNameNoContext(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let ids = try seedEmployees(stack, (0..<40).map { ("First\($0)", "Last\($0)", Int64($0)) })
        var context: ManagedObjectContext? = stack.context()
        let fetched = try context!.fetch(FetchRequest<GraphEmployee>(entityName: "GraphEmployee"))
        #expect(fetched.count == ids.count)
        for employee in fetched.prefix(10) { #expect(employee.firstName.hasPrefix("First")) }
        #expect(stack.coordinator.rowCacheStatistics.entries == ids.count)
        context = nil
        #expect(stack.coordinator.rowCacheStatistics.entries == 0)
        #expect(fetched.allSatisfy { $0.managedObjectContext == nil })
    }

    /// An object going away (its deinit), unregistered, or forgotten by `reset()` releases its row's entry for itself
    /// only: an entry held by two contexts' objects stays until the second one lets go.
    @Test(arguments: StoreKind.allCases)
    func eachObjectLetGoReleasesItsOwnHoldOnItsRow(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let ids = try seedEmployees(stack, (0..<2).map { ("First\($0)", "Last\($0)", Int64($0)) })
        let first = stack.context()
        let second = stack.context()
        var held: GraphEmployee? = try employee(ids[0], in: first)
        try letGoOnReturn {
            let other = try employee(ids[0], in: second)
            #expect(other.salary == 0)
            #expect(stack.coordinator.rowCacheStatistics.entries == 1)
        }
        // `second`'s object went away: `first`'s still holds the entry, and fires no store read.
        #expect(second.registeredObjects.isEmpty)
        #expect(stack.coordinator.rowCacheStatistics.entries == 1)
        #expect(held?.salary == 0)
        held = nil
        #expect(first.registeredObjects.isEmpty)
        #expect(stack.coordinator.rowCacheStatistics.entries == 0)

        let kept = try employee(ids[1], in: first)
        #expect(stack.coordinator.rowCacheStatistics.entries == 1)
        first.reset()
        #expect(stack.coordinator.rowCacheStatistics.entries == 0)
        #expect(kept.managedObjectContext == nil)
    }

    /// Runs `body` in a function of its own, so that what it makes is let go when it returns.
    @inline(never)
    private func letGoOnReturn(_ body: () throws -> Void) rethrows { try body() }

    @Test(arguments: StoreKind.allCases)
    func existingObjectThrowsObjectInaccessibleForAMissingRow(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let missing = try stack.coordinator.managedObjectID(
            forURIRepresentation: URL(string: "x-strata://\(stack.store.identifier.uuidString)/GraphEmployee/p999")!)
        let context = stack.context()
        let error = objectGraphError { _ = try context.existingObject(with: missing) }
        #expect(error?.isObjectInaccessible == true)
        #expect(error?.objectIDs == [missing])
        #expect(context.registeredObject(for: missing) == nil)
        #expect(stack.coordinator.rowCacheStatistics.entries == 0)
        // And for a row that exists: never a fault.
        let ada = try context.existingObject(with: id)
        #expect(!ada.isFault)
    }

    @Test(arguments: StoreKind.allCases)
    func existingObjectNeverReturnsAFaultEvenWhenAFaultIsRegistered(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let context = stack.context()
        let fault = context.object(with: id)
        #expect(fault.isFault)
        let existing = try context.existingObject(with: id)
        #expect(existing === fault)
        #expect(!existing.isFault)
    }

    @Test(arguments: StoreKind.allCases)
    func objectWithForAMissingRowReturnsAFaultThatThrowsWhenFired(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        _ = try seedAda(stack)
        let missing = try stack.coordinator.managedObjectID(
            forURIRepresentation: URL(string: "x-strata://\(stack.store.identifier.uuidString)/GraphEmployee/p4242")!)
        let context = stack.context()
        context.shouldDeleteInaccessibleFaults = false  // the default marks it deleted instead (Issue19Tests)
        let fault = context.object(with: missing)
        #expect(fault.isFault)
        let error = objectGraphError { _ = try fault.value(forKey: "firstName") }
        #expect(error?.isObjectInaccessible == true)
        #expect(fault.isFault)
    }

    @Test(arguments: StoreKind.allCases)
    func registeredObjectReturnsNilWhenNotRegisteredAndDoesNoIO(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let context = stack.context()
        let reads = stack.store.rowReads
        #expect(context.registeredObject(for: id) == nil)
        #expect(context.registeredObject(for: id) == nil)  // it did not register a fault either
        #expect(context.registeredObjects.isEmpty)
        #expect(stack.store.rowReads == reads)
        let fault = context.object(with: id)
        #expect(context.registeredObject(for: id) === fault)
        #expect(fault.isFault)  // registeredObject never fires
        #expect(stack.store.rowReads == reads)
    }

    @Test(arguments: StoreKind.allCases)
    func firingAFaultWhoseRowAnotherContextDeletedThrowsObjectInaccessible(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let context = stack.context()
        context.shouldDeleteInaccessibleFaults = false  // the default marks it deleted instead (Issue19Tests)
        let fault = context.object(with: id)

        let other = stack.context()
        other.delete(try other.existingObject(with: id))
        try other.save()

        #expect(fault.isFault)
        let error = objectGraphError { _ = try fault.value(forKey: "firstName") }
        #expect(error?.isObjectInaccessible == true)
        #expect(error?.objectIDs == [id])
        let viaExisting = objectGraphError { _ = try context.existingObject(with: id) }
        #expect(viaExisting?.isObjectInaccessible == true)
    }

    @Test(arguments: StoreKind.allCases)
    func firingAFaultWhoseRowWasDeletedWhileAnotherContextCachedItThrows(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        // A third context holds the row in the cache: the delete must invalidate that entry.
        let holder = stack.context()
        let held = try employee(id, in: holder)
        let context = stack.context()
        context.shouldDeleteInaccessibleFaults = false
        let fault = context.object(with: id)

        let other = stack.context()
        other.delete(try other.existingObject(with: id))
        try other.save()

        let error = objectGraphError { _ = try fault.value(forKey: "salary") }
        #expect(error?.isObjectInaccessible == true)
        withExtendedLifetime(held) {}
    }

    @Test(arguments: StoreKind.allCases)
    func faultFiredAfterAnotherContextsSaveSeesTheSavedValues(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let context = stack.context()
        let fault = try #require(context.object(with: id) as? GraphEmployee)
        let other = stack.context()
        let loaded = try employee(id, in: other)
        loaded.salary = 777
        try other.save()
        #expect(fault.isFault)
        #expect(fault.salary == 777)
    }

    @Test(arguments: StoreKind.allCases)
    func fetchReturnsFaultsByDefaultAndFilledObjectsWhenAsked(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        _ = try seedEmployees(stack, [("A", "X", 1), ("B", "Y", 2)])
        let context = stack.context()
        let faults = try context.fetch(FetchRequest<GraphEmployee>(entityName: "GraphEmployee"))
        let allFaults = faults.allSatisfy { $0.isFault }
        #expect(allFaults)
        let other = stack.context()
        let filled = try fetchEmployees(other)
        let noneFaults = filled.allSatisfy { !$0.isFault }
        #expect(noneFaults)
        // A fetch's rows are cached: firing the first context's faults reads nothing more.
        let reads = stack.store.rowReads
        #expect(faults.map(\.firstName) == ["A", "B"])
        #expect(stack.store.rowReads == reads)
    }
}

extension ManagedObjectContext {
    /// The context, after `body` configured it.
    func configured(_ body: (ManagedObjectContext) -> Void) -> ManagedObjectContext {
        body(self)
        return self
    }
}
