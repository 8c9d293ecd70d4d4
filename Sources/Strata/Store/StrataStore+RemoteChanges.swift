import Foundation
import StrataStorage

/// Several processes on one store (FORMAT.md §11): the engine takes in other processes' commits whenever this
/// process reads or writes; the store then forgets the rows they changed in every coordinator's row cache, and
/// tells its remote-change observers.
extension StrataStore {
    /// Calls `handler` whenever this store takes in commits another process made (at the next fetch, fault, save or
    /// ``checkForRemoteChanges()`` after them, or within ``StrataStoreConfiguration/remoteChangePollingInterval``).
    /// `handler` runs on a global dispatch queue; hop to a context's queue before touching its objects.
    ///
    /// For example:
    ///
    ///     let observation = store.addRemoteChangeObserver { change in
    ///         Task { @MainActor in try merge(after: lastToken, until: change.historyToken) }
    ///     }
    ///
    /// - Returns: the registration, for ``removeRemoteChangeObserver(_:)``.
    @discardableResult
    public func addRemoteChangeObserver(
        _ handler: @escaping @Sendable (PersistentStoreRemoteChange) -> Void
    ) -> RemoteChangeObservation {
        let observation = RemoteChangeObservation(id: UUID())
        remoteChangeObservers.withLock { $0[observation] = handler }
        return observation
    }

    /// Stops calling the observer registered as `observation`.
    public func removeRemoteChangeObserver(_ observation: RemoteChangeObservation) {
        remoteChangeObservers.withLock { $0[observation] = nil }
    }

    /// Takes in whatever other processes committed since this process last looked (one 32-byte read when they
    /// committed nothing), telling the observers if they did.
    public func checkForRemoteChanges() {
        _ = engine.snapshot()
    }

    /// Forgets, in every coordinator's cache, the rows other processes changed (all of this store's rows when the
    /// engine cannot name them), then tells the observers. Registered with the engine once per store.
    func takeIn(_ commits: ExternalCommits) {
        if commits.isComplete {
            var keys: [RowCache.Key] = []
            for (table, rows) in commits.rows {
                guard let root = rootEntitiesByTable[table] else { continue }
                for row in rows { keys.append(RowCache.Key(store: identifier, entity: root, rowID: row.rawValue)) }
            }
            rowCacheGroup.invalidateEverywhere(keys)
        } else {
            rowCacheGroup.invalidateEverywhere(store: identifier)
        }
        let observers = remoteChangeObservers.withLock { Array($0.values) }
        guard !observers.isEmpty else { return }
        // Off this thread: it may be in the middle of a write transaction, holding the store's writer lock, which an
        // observer that saves at once would wait for. Weakly: a store gone meanwhile posts nothing. (Only a store with
        // remote-change observers that another process changed gets the side table a weak reference makes; see
        // ``ExternalCommitRelay``.)
        DispatchQueue.global().async { [weak self] in
            guard let self else { return }
            let change = PersistentStoreRemoteChange(
                storeIdentifier: identifier, historyToken: historyTable == nil ? nil : try? currentHistoryToken())
            for observer in observers { observer(change) }
        }
    }

    /// Looks for other processes' commits every `interval` while the store is alive.
    func startPollingForRemoteChanges(every interval: Duration) {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue.global(qos: .utility))
        let (seconds, attoseconds) = interval.components
        let nanoseconds = max(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000), 1_000_000)
        timer.schedule(deadline: .now() + .nanoseconds(nanoseconds), repeating: .nanoseconds(nanoseconds))
        // The engine, not the store: a weak reference to the store would give it a side table
        // (``ExternalCommitRelay``). ``checkForRemoteChanges()`` only reads the engine, which the timer may hold until
        // it is cancelled (the store's close or deinit); a closed engine's snapshot reads nothing from the log.
        timer.setEventHandler { [engine] in _ = engine.snapshot() }
        timer.resume()
        let poller = RemoteChangePoller(timer: timer)
        remoteChangePoller.withLock { $0 = poller }
    }
}

/// The timer that looks for remote changes. Dispatch sources may be resumed and cancelled from any thread, which
/// their Linux overlay does not declare.
struct RemoteChangePoller: @unchecked Sendable {
    let timer: any DispatchSourceTimer

    func cancel() { timer.cancel() }
}
