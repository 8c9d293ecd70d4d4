import Foundation
import Strata
import StrataLock
import Testing

@Suite struct FetchBatchingTests {
    /// A store of `count` employees with serials 1...count, saved by a context that is gone.
    static func stack(_ kind: StoreKind, count: Int) throws -> TestStack {
        let stack = try TestStack(kind, model: FetchTestModel.model)
        let context = stack.context()
        for serial in 1...count {
            let employee = FetchEmployee(context: context)
            employee.serial = Int64(serial)
            employee.salary = Int64(serial % 97)
        }
        try context.save()
        return stack
    }

    @Test(arguments: StoreKind.allCases)
    func batchesLoadAroundTheAccessedIndexAndOldOnesAreReleased(_ kind: StoreKind) throws {
        let stack = try Self.stack(kind, count: 95)
        let context = stack.context()
        let request = FetchRequest<FetchEmployee>(entityName: "FetchEmployee")
        request.sortKeys = [SortKey("serial", ascending: false)]
        request.fetchBatchSize = 10
        let reads = stack.store.rowReads
        let results = try context.fetchBatched(request)
        #expect(results.count == 95)
        #expect(results.batchLoads == 0)
        #expect(stack.store.rowReads == reads)  // the fetch read IDs only
        #expect(context.registeredObjects.isEmpty)
        #expect(results[0].serial == 95)
        #expect(results[9].serial == 86)
        #expect(results.batchLoads == 1)
        #expect(stack.store.rowReads == reads + 10)  // one batch, filled
        #expect(results[94].serial == 1)  // the last, partial batch
        #expect(results.batchLoads == 2)
        #expect(results.objectID(at: 50) == results[50].objectID)
        #expect(results.batchLoads == 3)
        _ = results[15]
        #expect(results.loadedBatches == [9, 5, 1])  // batch 0 released
        _ = results[3]
        #expect(results.batchLoads == 5)
    }

    @Test(arguments: StoreKind.allCases)
    func iteratingKeepsMemoryBounded(_ kind: StoreKind) throws {
        let count = 3_000
        let stack = try Self.stack(kind, count: count)
        let context = stack.context()
        let request = FetchRequest<FetchEmployee>(entityName: "FetchEmployee")
        request.fetchBatchSize = 100
        let results = try context.fetchBatched(request)
        var total: Int64 = 0
        var peakRegistered = 0
        var peakCached = 0
        for (index, employee) in results.enumerated() {
            total += employee.serial
            if index % 50 == 0 {
                peakRegistered = max(peakRegistered, context.registeredObjects.count)
                peakCached = max(peakCached, stack.coordinator.rowCacheStatistics.entries)
            }
        }
        #expect(total == Int64(count * (count + 1) / 2))
        #expect(results.batchLoads == count / 100)
        // At most the retained batches (3 of 100) and the one being loaded are alive.
        #expect(peakRegistered <= 400)
        #expect(peakCached <= 400)
    }

    @Test func pendingInsertsAreInTheBatchesToo() throws {
        let stack = try Self.stack(.inMemory, count: 5)
        let context = stack.context()
        let newcomer = FetchEmployee(context: context)
        newcomer.serial = 6
        let request = FetchRequest<FetchEmployee>(entityName: "FetchEmployee")
        request.fetchBatchSize = 4
        let results = try context.fetchBatched(request)
        #expect(results.map(\.serial) == [1, 2, 3, 4, 5, 6])
        #expect(results[5] === newcomer)
    }

    @Test(arguments: StoreKind.allCases)
    func fetchWithABatchSizeReturnsFaultsWithoutReadingRows(_ kind: StoreKind) throws {
        let stack = try Self.stack(kind, count: 20)
        let context = stack.context()
        let request = FetchRequest<FetchEmployee>(entityName: "FetchEmployee")
        request.fetchBatchSize = 5
        let reads = stack.store.rowReads
        let faults = try context.fetch(request)
        #expect(faults.count == 20 && faults.allSatisfy { $0.isFault })
        #expect(stack.store.rowReads == reads)
    }
}

@Suite struct FetchAsyncTests {
    @Test(arguments: StoreKind.allCases)
    func asyncFetchReportsProgress(_ kind: StoreKind) async throws {
        let stack = try FetchBatchingTests.stack(kind, count: 600)
        let context = stack.context()
        let request = FetchRequest<FetchEmployee>(entityName: "FetchEmployee")
        try request.setPredicate(format: "salary < %d", 50)
        let updates = Lock<[Int]>([])
        let progress = FetchProgress { progress in updates.withLock { $0.append(progress.completedUnitCount) } }
        let results = try await context.fetch(request, progress: progress)
        #expect(results.count == (1...600).filter { $0 % 97 < 50 }.count)
        #expect(progress.totalUnitCount == results.count)
        #expect(progress.completedUnitCount == results.count)
        #expect(progress.fractionCompleted == 1)
        let seen = updates.withLock { $0 }
        #expect(seen.first == 0 && seen.last == results.count && seen.count > 2)
    }

    @Test(arguments: StoreKind.allCases)
    func cancellingTheProgressStopsTheFetch(_ kind: StoreKind) async throws {
        let stack = try FetchBatchingTests.stack(kind, count: 1_000)
        let context = stack.context()
        let request = FetchRequest<FetchEmployee>(entityName: "FetchEmployee")
        let progress = FetchProgress { progress in if progress.completedUnitCount >= 256 { progress.cancel() } }
        await #expect(throws: CancellationError.self) { _ = try await context.fetch(request, progress: progress) }
        #expect(progress.isCancelled)
        #expect(progress.completedUnitCount < 1_000)

        let early = FetchProgress()
        early.cancel()
        await #expect(throws: CancellationError.self) { _ = try await context.fetch(request, progress: early) }
    }

    @Test func cancellingTheTaskStopsTheFetch() async throws {
        let task = Task { () async throws -> Int in
            let stack = try FetchBatchingTests.stack(.strata, count: 300)
            let context = stack.context()
            withUnsafeCurrentTask { $0?.cancel() }
            return try await context.fetch(FetchRequest<FetchEmployee>(entityName: "FetchEmployee"), progress: nil)
                .count
        }
        await #expect(throws: CancellationError.self) { _ = try await task.value }
    }

    @Test(arguments: StoreKind.allCases)
    func aStoreStopsReadingWhenCancelled(_ kind: StoreKind) throws {
        let stack = try FetchBatchingTests.stack(kind, count: 2_000)
        var request = StoreFetchRequest(entity: FetchTestModel.model.entity(named: "FetchEmployee")!)
        request.predicate = try ObjectPredicate(format: "salary > 10")
        request.isCancelled = { true }
        #expect(throws: CancellationError.self) { _ = try stack.store.fetch(request) }
    }
}
