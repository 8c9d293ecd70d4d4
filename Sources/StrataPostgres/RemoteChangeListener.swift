#if Postgres
import Foundation
import PostgresNIO
import StrataLock

/// The connection on which a ``PostgresStore`` listens for other processes' saves.
final class RemoteChangeListener: Sendable {
    let connection: PostgresConnection
    let context: PostgresListenContext

    init(connection: PostgresConnection, context: PostgresListenContext) {
        self.connection = connection
        self.context = context
    }

    func stop() {
        context.stop()
        try? connection.close().wait()
    }
}

/// A weak reference to a store that closures running on event loops may hold.
final class WeakStoreReference: Sendable {
    private let box: Lock<Weak>

    private struct Weak {
        weak var store: PostgresStore?
    }

    init(_ store: PostgresStore) {
        box = Lock(Weak(store: store))
    }

    /// The store, while it exists.
    var store: PostgresStore? { box.withLock { $0.store } }
}
#endif
