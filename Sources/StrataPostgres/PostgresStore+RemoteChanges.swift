#if Postgres
import Foundation
import PostgresNIO
import Strata
import StrataLock

extension PostgresStore {
    /// Calls `handler` (on another thread) after another process saved to this store's schema, once this
    /// store has forgotten the rows that save changed in its coordinators' row caches (Core Data's
    /// `NSPersistentStoreRemoteChange`). With persistent history, the change carries the newest token: merge
    /// the transactions after the last one you merged, as with a Strata store.
    ///
    /// - Parameter handler: called with the change; it may save (it does not run inside this store's locks).
    /// - Returns: the registration, for ``removeRemoteChangeObserver(_:)``.
    @discardableResult
    public func addRemoteChangeObserver(
        _ handler: @escaping @Sendable (PersistentStoreRemoteChange) -> Void
    ) -> RemoteChangeObservation {
        let observation = RemoteChangeObservation()
        remoteChangeObservers.withLock { $0[observation] = handler }
        return observation
    }

    /// Stops calling the observer `observation` registered.
    public func removeRemoteChangeObserver(_ observation: RemoteChangeObservation) {
        remoteChangeObservers.withLock { $0[observation] = nil }
    }

    /// Sends the notification of a save, in its transaction: PostgreSQL delivers it to the listeners once the
    /// transaction commits, and never when it rolls back. The payload names the changed rows (`entity:row`),
    /// or `*` when they would not fit in PostgreSQL's 8,000 bytes.
    func notify(
        _ changes: StoreChanges, insertedRowIDs: InsertedRowIDs, historyNumber: UInt64?, connection: PostgresConnection
    ) throws {
        var rows: [String] = []
        for (index, rowID) in insertedRowIDs.enumerated() {
            rows.append("\(changes.inserts.entity(at: index).entityID):\(rowID)")
        }
        for update in changes.updates { rows.append("\(update.entity.entityID):\(update.rowID)") }
        for delete in changes.deletes { rows.append("\(delete.entity.entityID):\(delete.rowID)") }
        for links in changes.links {
            let source = links.source.resolved(in: changes, insertedRowIDs: insertedRowIDs)
            rows.append("\(source.entity.entityID):\(source.rowID)")
        }
        var payload = instanceToken + ";" + (historyNumber.map(String.init) ?? "") + ";" + rows.joined(separator: ",")
        if payload.utf8.count > 7_900 { payload = instanceToken + ";" + (historyNumber.map(String.init) ?? "") + ";*" }
        var statement = PostgresStatement()
        let channel = statement.bind(schema.channel)
        let text = statement.bind(payload)
        try connection.run("SELECT pg_notify(\(channel), \(text))", statement.binds, logger: logger)
    }

    /// Opens the listening connection and sends `LISTEN`.
    func startListening() throws {
        let connection = try pool.connect()
        // The store is reached (and so perhaps last released) on a dispatch thread, never on an event loop, where
        // its deinit could not wait for its connections to close.
        let reference = WeakStoreReference(self)
        let context = connection.addListener(channel: schema.channel) { _, notification in
            // Off the event loop: taking a change in may run queries.
            let payload = notification.payload
            DispatchQueue.global().async { reference.store?.takeIn(payload) }
        }
        do {
            try connection.run("LISTEN " + PostgresSchema.quote(schema.channel), logger: logger)
        } catch {
            context.stop()
            try? connection.close().wait()
            throw error
        }
        listener.withLock { $0 = RemoteChangeListener(connection: connection, context: context) }
        connection.closeFuture.whenComplete { _ in
            DispatchQueue.global().async { reference.store?.listenerClosed(connection) }
        }
    }

    func stopListening() {
        let current = listener.withLock { listener in
            defer { listener = nil }
            return listener
        }
        current?.stop()
    }

    /// The listening connection broke (the server restarted): listen again once the server is back, and treat
    /// every cached row as stale, since notifications may have been missed meanwhile.
    private func listenerClosed(_ connection: PostgresConnection) {
        let wasCurrent = listener.withLock { listener in
            guard let current = listener, current.connection === connection else { return false }
            listener = nil
            return true
        }
        guard wasCurrent else { return }
        logger.info("PostgreSQL: the listening connection closed; listening again when the server is back")
        reconnectListener(attempt: 1)
    }

    private func reconnectListener(attempt: Int) {
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(min(2_000, 100 * attempt))) {
            [weak self] in
            guard let self, (try? self.pool.withConnection { _ in () }) != nil else {
                self?.reconnectListener(attempt: attempt + 1)
                return
            }
            do {
                try self.startListening()
                self.takeIn(nil)
            } catch {
                self.reconnectListener(attempt: attempt + 1)
            }
        }
    }

    /// A notification's payload (nil: changes may have been missed): forget the rows in the row caches, then
    /// call the observers.
    func takeIn(_ payload: String?) {
        if let payload {
            let parts = payload.split(separator: ";", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3, parts[0] != instanceToken else { return }
            if parts[2] == "*" {
                rowCacheGroup.invalidateEverywhere(store: identifier)
            } else {
                var rows: [(entity: EntityDescription, rowID: UInt64)] = []
                for item in parts[2].split(separator: ",") {
                    let pair = item.split(separator: ":")
                    guard pair.count == 2, let entityID = UInt16(pair[0]), let rowID = UInt64(pair[1]),
                        let entity = entitiesByID[entityID]
                    else { continue }
                    rows.append((entity, rowID))
                }
                rowCacheGroup.invalidateEverywhere(store: identifier, rows: rows)
            }
        } else {
            rowCacheGroup.invalidateEverywhere(store: identifier)
        }
        let observers = remoteChangeObservers.withLock { Array($0.values) }
        guard !observers.isEmpty else { return }
        let change = PersistentStoreRemoteChange(
            storeIdentifier: identifier, historyToken: recordsPersistentHistory ? try? currentHistoryToken() : nil)
        for observer in observers { observer(change) }
    }
}
#endif
