import Foundation
import StrataLock

extension ManagedObjectContext {
    /// Calls `handler` with every notification of this context, on the context's thread, right when it
    /// happens (objects-did-change during ``processPendingChanges()``, will-save and did-save during
    /// ``save()``).
    ///
    /// - Returns: a token for ``removeObserver(_:)``.
    @discardableResult
    public func addObserver(_ handler: @escaping (ContextNotification) -> Void) -> ContextObservation {
        let token = ContextObservation(id: UUID())
        notificationObservers[token.id] = handler
        return token
    }

    /// Stops the calls of an observer added with ``addObserver(_:)``.
    public func removeObserver(_ observation: ContextObservation) {
        notificationObservers[observation.id] = nil
    }

    /// The context's notifications as an asynchronous sequence, from now until the sequence is dropped or
    /// cancelled; each call makes a new sequence. The elements hold object IDs only, so any task may read
    /// them (and, for example, hand a did-save to another context's ``mergeChanges(fromContextDidSave:)``).
    public func notifications() -> AsyncStream<ContextNotification> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<ContextNotification>.makeStream(bufferingPolicy: .unbounded)
        let streams = notificationStreams
        streams.continuations.withLock { $0[id] = continuation }
        continuation.onTermination = { _ in streams.continuations.withLock { _ = $0.removeValue(forKey: id) } }
        return stream
    }

    /// Whether a notification posted now goes to anyone (an observer or a stream).
    private var hasNotificationListeners: Bool {
        !notificationObservers.isEmpty || !notificationStreams.continuations.withLock { $0.isEmpty }
    }

    /// Whether an observer, a stream or a change tracker may hear of the context's changes.
    var hasChangeListeners: Bool { hasNotificationListeners || !changeTrackers.isEmpty }

    /// Whether a did-save may be heard: by an observer or a stream, a child that merges it, or another context on
    /// the coordinator that merges what is saved (``automaticallyMergesChangesFromParent``).
    var hasSaveListeners: Bool {
        hasNotificationListeners || children.contains { $0.context?.automaticallyMergesChangesFromParent == true }
            || coordinator.saveBroadcaster.hasListeners(besides: self)
    }

    /// Delivers a notification to the observers and the streams.
    func post(_ notification: ContextNotification) {
        for handler in notificationObservers.values { handler(notification) }
        for continuation in notificationStreams.continuations.withLock({ Array($0.values) }) {
            continuation.yield(notification)
        }
    }

    /// Posts the objects changed since the last call, if any, and tells the change trackers (with the save a
    /// merge brings in, which may name objects the context does not have).
    func postObjectsDidChange(merged: ContextSave? = nil) {
        // Nobody to tell: the changes are dropped unnamed (naming a million inserts hashed each one's ID; a cascade's
        // deletions and an event's updates are hashed into their sets only for someone to read them).
        guard hasChangeListeners else { return resetChanges() }
        unhashedDeletions.hash(into: &changes.deleted)
        unhashedUpdates.hash(into: &changes.updated)
        let pending = pendingChanges
        guard !pending.isEmpty || merged != nil else { return }
        resetChanges()
        if !pending.isEmpty { post(.objectsDidChange(pending)) }
        notifyTrackers { try $0.contextDidChange(pending, merged: merged) }
    }
}

/// The continuations of a context's notification streams, shared with their termination handlers (which
/// may run on any thread).
final class NotificationStreams: Sendable {
    let continuations = Lock<[UUID: AsyncStream<ContextNotification>.Continuation]>([:])
}
