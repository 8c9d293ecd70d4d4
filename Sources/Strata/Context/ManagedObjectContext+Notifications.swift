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
    var hasNotificationListeners: Bool {
        !notificationObservers.isEmpty || !notificationStreams.continuations.withLock { $0.isEmpty }
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
        guard !changes.isEmpty || !unhashedDeletions.isEmpty || !unhashedUpdates.isEmpty || merged != nil else {
            return
        }
        // A cascade's deletions and an event's updates are hashed into their sets only for someone to read them.
        if hasNotificationListeners || !changeTrackers.isEmpty {
            unhashedDeletions.hash(into: &changes.deleted)
            unhashedUpdates.hash(into: &changes.updated)
        }
        let pending = changes
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
