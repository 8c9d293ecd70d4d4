import Dispatch
import Foundation
import StrataLock

/// Hands the saves of a coordinator's contexts to the contexts that merge them automatically
/// (``ManagedObjectContext/automaticallyMergesChangesFromParent`` on a context whose parent is the
/// coordinator), each on its own thread: a queue-confined context (``PrivateQueueContext``,
/// ``ManagedObjectContext/mainQueue(coordinator:)``) gets the merge scheduled on its queue; any other
/// context gets it at once when the save happens on the thread that made it, and not otherwise (nothing
/// could run code on that thread).
final class SaveBroadcaster: Sendable {
    /// A context registered for merges, held weakly.
    final class Listener: @unchecked Sendable {
        // Safety: `context` is read only on the context's own queue, or on the thread that made it.
        weak var context: ManagedObjectContext?
        let queue: DispatchQueue?
        let thread: pthread_t

        init(_ context: ManagedObjectContext) {
            self.context = context
            self.queue = context.ownerQueue
            self.thread = pthread_self()
        }
    }

    private let listeners = Lock<[ObjectIdentifier: Listener]>([:])

    func register(_ context: ManagedObjectContext) {
        let listener = Listener(context)
        listeners.withLock { $0[ObjectIdentifier(context)] = listener }
    }

    func unregister(_ context: ManagedObjectContext) {
        _ = listeners.withLock { $0.removeValue(forKey: ObjectIdentifier(context)) }
    }

    /// Whether a context other than `sender` is registered (a save of `sender` goes to someone).
    func hasListeners(besides sender: ManagedObjectContext) -> Bool {
        let senderKey = ObjectIdentifier(sender)
        return listeners.withLock { $0.keys.contains { $0 != senderKey } }
    }

    /// Delivers `save`, made by `sender`, to every other registered context.
    func broadcast(_ save: ContextSave, from sender: ManagedObjectContext) {
        let senderKey = ObjectIdentifier(sender)
        let targets = listeners.withLock { listeners in
            return listeners.filter { $0.key != senderKey }.map(\.value)
        }
        for listener in targets {
            if let queue = listener.queue {
                queue.async { try? listener.context?.mergeChanges(fromContextDidSave: save) }
            } else if pthread_equal(listener.thread, pthread_self()) != 0 {
                try? listener.context?.mergeChanges(fromContextDidSave: save)
            }
        }
    }
}
