import StrataLock

/// The progress of an asynchronous fetch (`NSAsynchronousFetchRequest`'s `NSProgress`): how many results
/// there are and how many are ready, and a way to cancel.
///
/// Thread-safe: observe or cancel it from anywhere. `onUpdate` runs on the fetching task each time the
/// counts change.
///
/// For example:
/// ```swift
/// let progress = FetchProgress { progress in print(progress.completedUnitCount, "of", progress.totalUnitCount) }
/// let results = try await context.fetch(request, progress: progress)
/// ```
public final class FetchProgress: Sendable {
    private struct State {
        var total = -1
        var completed = 0
        var cancelled = false
    }

    private let state = Lock(State())
    private let onUpdate: (@Sendable (FetchProgress) -> Void)?

    /// Creates a progress.
    ///
    /// - Parameter onUpdate: called after every change of the counts.
    public init(onUpdate: (@Sendable (FetchProgress) -> Void)? = nil) {
        self.onUpdate = onUpdate
    }

    /// The number of results, once the stores have answered (-1 before).
    public var totalUnitCount: Int { state.withLock { $0.total } }
    /// How many results are ready.
    public var completedUnitCount: Int { state.withLock { $0.completed } }
    /// The fraction of results ready (0 before the stores answer).
    public var fractionCompleted: Double {
        state.withLock { $0.total > 0 ? Double($0.completed) / Double($0.total) : ($0.total == 0 ? 1 : 0) }
    }
    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Asks the fetch to stop: it throws `CancellationError` at its next check.
    public func cancel() {
        state.withLock { $0.cancelled = true }
    }

    func update(total: Int? = nil, completed: Int) {
        state.withLock { state in
            if let total { state.total = total }
            state.completed = completed
        }
        onUpdate?(self)
    }
}

extension ManagedObjectContext {
    /// Fetches asynchronously, with progress and cancellation (`NSAsynchronousFetchRequest`): the stores
    /// answer first (checking for cancellation as they read rows), then the results are made in chunks,
    /// yielding between chunks and updating `progress`. Cancelling the task or `progress` makes the fetch
    /// throw `CancellationError`; the context is left as it was, save for the objects already registered.
    ///
    /// The fetch runs on the caller's actor (the context's thread), as every use of a context must.
    ///
    /// For example:
    /// ```swift
    /// let progress = FetchProgress()
    /// let employees = try await context.fetch(request, progress: progress)
    /// ```
    ///
    /// - Parameters:
    ///   - request: what to fetch.
    ///   - progress: where progress is reported and cancellation asked, or nil.
    /// - Returns: what ``fetch(_:)`` returns.
    /// - Throws: what ``fetch(_:)`` throws; `CancellationError`.
    public func fetch<Result>(
        _ request: FetchRequest<Result>, progress: FetchProgress?,
        isolation: isolated (any Actor)? = #isolation
    ) async throws -> [Result] {
        let isCancelled: @Sendable () -> Bool = { Task.isCancelled || (progress?.isCancelled ?? false) }
        func check() throws { if isCancelled() { throw CancellationError() } }
        try check()
        let entity = try fetchEntity(of: request)
        guard request.resultType == .managedObject else {
            let results = try fetch(request)
            progress?.update(total: results.count, completed: results.count)
            return results
        }
        let found = try matches(
            of: request, entity: entity, kind: request.includesPropertyValues ? .rows : .objectIDs,
            includesPendingChanges: request.includesPendingChanges, isCancelled: isCancelled)
        progress?.update(total: found.count, completed: 0)
        var results: [Result] = []
        results.reserveCapacity(found.count)
        let chunk = 256
        var start = 0
        while start < found.count {
            try check()
            let end = min(found.count, start + chunk)
            for match in found[start..<end] {
                results.append(
                    Self.cast(object(for: match, populate: !request.returnsObjectsAsFaults), to: Result.self))
            }
            start = end
            progress?.update(completed: end)
            await Task.yield()
        }
        try check()
        try prefetch(request.relationshipKeyPathsForPrefetching, of: results.map { $0 as! ManagedObject })
        return results
    }
}
