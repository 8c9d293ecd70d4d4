import Dispatch
import Foundation

extension ManagedObjectContext {
    /// Makes a context of a concurrency type (Core Data's `init(concurrencyType:)`): a private-queue context
    /// gets a serial queue of its own, a main-queue context belongs to the main queue, and a confinement context
    /// belongs to the thread that uses it (as ``init(coordinator:)`` makes).
    ///
    /// For example:
    /// ```swift
    /// let background = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
    /// background.perform {
    ///     let ada = Employee(context: background)
    ///     ada.name = "Ada"
    ///     try? background.save()
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - concurrencyType: where the context's work runs.
    ///   - coordinator: the coordinator whose model and stores the context uses.
    public convenience init(
        concurrencyType: ManagedObjectContextConcurrencyType, coordinator: PersistentStoreCoordinator
    ) {
        self.init(coordinator: coordinator)
        adopt(concurrencyType)
    }

    /// Makes a child context of a concurrency type (Core Data's `init(concurrencyType:)` then `parent`).
    ///
    /// - Parameters:
    ///   - concurrencyType: where the context's work runs.
    ///   - parent: the parent context; the child shares its coordinator.
    public convenience init(concurrencyType: ManagedObjectContextConcurrencyType, parent: ManagedObjectContext) {
        self.init(parent: parent)
        adopt(concurrencyType)
    }

    private func adopt(_ type: ManagedObjectContextConcurrencyType) {
        concurrencyType = type
        switch type {
        case .confinement: ownerQueue = nil
        case .mainQueue: ownerQueue = .main
        case .privateQueue: ownerQueue = Self.makePrivateQueue(label: "strata.context." + (name ?? "private"))
        }
    }

    /// The key whose value on a context's queue is the queue's identity (``isOnOwnerQueue``). The main queue
    /// gets it too: on Linux its work may run on a thread other than the main thread (after `dispatchMain()`).
    private static let queueKey: DispatchSpecificKey<ObjectIdentifier> = {
        let key = DispatchSpecificKey<ObjectIdentifier>()
        DispatchQueue.main.setSpecific(key: key, value: ObjectIdentifier(MainQueueIdentity.self))
        return key
    }()

    /// What names the main queue under ``queueKey``: `DispatchQueue.main` makes a new wrapper on every call,
    /// so its identity cannot.
    private enum MainQueueIdentity {}

    /// A serial queue that knows itself, for ``performAndWait(_:isolation:)`` called on it.
    static func makePrivateQueue(label: String) -> DispatchQueue {
        let queue = DispatchQueue(label: label)
        queue.setSpecific(key: queueKey, value: ObjectIdentifier(queue))
        return queue
    }

    /// Whether the caller runs where the context may be used: on its queue, or anywhere for a confinement
    /// context.
    var isOnOwnerQueue: Bool { isOnOwnerQueue(isolation: nil) }

    /// ``isOnOwnerQueue``, knowing the caller's actor: main-actor code is on the main queue even before the main
    /// queue's key is readable (setting a queue's key while the queue runs takes effect after the running block).
    func isOnOwnerQueue(isolation: (any Actor)?) -> Bool {
        guard let ownerQueue else { return true }
        if concurrencyType == .mainQueue {
            if isolation === MainActor.shared || Thread.isMainThread { return true }
            return DispatchQueue.getSpecific(key: Self.queueKey) == ObjectIdentifier(MainQueueIdentity.self)
        }
        return DispatchQueue.getSpecific(key: Self.queueKey) == ObjectIdentifier(ownerQueue)
    }

    /// Runs `block` on the context's queue later and returns at once (Core Data's `perform(_:)`); the block
    /// ends the event with ``processPendingChanges()``, as Core Data's does. A confinement context has no queue:
    /// the block runs at once on the calling thread (the context's own).
    ///
    /// - Parameter block: the work; it may use the context and its objects.
    public func perform(_ block: @escaping () -> Void) {
        guard let ownerQueue else {
            runEvent(block)
            return
        }
        let work = UncheckedTransfer(value: (self, block))
        ownerQueue.async { work.value.0.runEvent(work.value.1) }
    }

    /// Runs `block` on the context's queue and waits for it (Core Data's `performAndWait(_:)`). Called on the
    /// context's queue (from inside another `perform`), it runs at once: it is reentrant.
    ///
    /// - Parameters:
    ///   - block: the work; it may use the context and its objects.
    ///   - isolation: the caller's actor (filled in for you): main-actor code runs a main-queue context's
    ///     block at once.
    /// - Returns: what `block` returns.
    /// - Throws: what `block` throws.
    public func performAndWait<T, E: Error>(
        _ block: () throws(E) -> T, isolation: isolated (any Actor)? = #isolation
    ) throws(E) -> T {
        guard let ownerQueue, !isOnOwnerQueue(isolation: isolation) else { return try block() }
        let result: Result<T, E> = withoutActuallyEscaping(block) { block in
            let work = UncheckedTransfer(value: block)
            return ownerQueue.sync {
                UncheckedTransfer(value: Result { () throws(E) -> T in try work.value() })
            }.value
        }
        return try result.get()
    }

    /// Runs `block` on the context's queue and returns its result to the awaiting task (Core Data's async
    /// `perform(schedule:_:)`); the block ends the event with ``processPendingChanges()``.
    ///
    /// With ``ScheduledTaskType/immediate`` a caller already on the context's queue (or using a confinement
    /// context) runs the block at once; otherwise it waits its turn on the queue.
    ///
    /// For example:
    /// ```swift
    /// let count = try await context.perform {
    ///     try context.count(for: FetchRequest<Employee>(entityName: "Employee"))
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - schedule: when the block runs.
    ///   - block: the work; it may use the context and its objects. Return values, not managed objects, from
    ///     a private-queue context: objects belong to its queue.
    /// - Returns: what `block` returns.
    /// - Throws: what `block` throws.
    nonisolated(nonsending) public func perform<T, E: Error>(
        schedule: ScheduledTaskType = .immediate, _ block: @escaping () throws(E) -> T
    ) async throws(E) -> T {
        if ownerQueue == nil || (schedule == .immediate && isOnOwnerQueue(isolation: #isolation)) {
            if ownerQueue == nil, schedule == .enqueued { await Task.yield() }
            return try runEvent(block)
        }
        let queue = ownerQueue!
        let work = UncheckedTransfer(value: (self, block))
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<UncheckedTransfer<Result<T, E>>, Never>) in
            queue.async {
                let (context, block) = work.value
                continuation.resume(
                    returning: UncheckedTransfer(value: Result { () throws(E) -> T in try context.runEvent(block) }))
            }
        }
        return try result.value.get()
    }

    /// Runs one event: the work, then the end of the event (delete rules, objects-did-change), as Core Data's
    /// perform does.
    private func runEvent<T, E: Error>(_ block: () throws(E) -> T) throws(E) -> T {
        // A failure of the event's end is not the block's: Core Data's perform swallows it too; save reports it.
        defer { try? processPendingChanges() }
        return try block()
    }
}
