#if Postgres
import Foundation
import PostgresNIO
import Strata
import StrataLock
import StrataPostgres
import Testing

/// A connection lost during `COMMIT`: the save is reported committed or failed as it really ended on the server,
/// never "unknown" while the server can be asked.
@Suite struct PostgresCommitOutcomeTests {
    /// Calls its action with the connection at the next `COMMIT` only, once armed.
    final class Fault: Sendable {
        private let action = Lock<(@Sendable (PostgresConnection) -> Void)?>(nil)

        func arm(_ body: @escaping @Sendable (PostgresConnection) -> Void) { action.withLock { $0 = body } }

        func fire(_ connection: PostgresConnection) {
            let body = action.withLock { action in
                defer { action = nil }
                return action
            }
            body?(connection)
        }
    }

    /// A store whose commits of team inserts take `seconds` on the server (a deferred constraint trigger that
    /// sleeps), with the fault seam at `COMMIT`.
    static func slowStore(
        seconds: Double, fault: Fault
    ) throws -> (PostgresStoreConfiguration, PersistentStoreCoordinator) {
        var configuration = try postgresConfiguration()
        configuration.beforeCommit = { fault.fire($0) }
        configuration.commitResolutionTimeout = .seconds(20)
        let (coordinator, _) = try PostgresStoreTests.coordinator(configuration)
        let schema = "\"\(configuration.schema)\""
        try withRawConnection(configuration) { connection in
            try connection.sql(
                """
                CREATE FUNCTION \(schema).slow_commit() RETURNS trigger LANGUAGE plpgsql \
                AS $$ BEGIN PERFORM pg_sleep(\(seconds)); RETURN NULL; END $$
                """)
            try connection.sql(
                """
                CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON \(schema)."e_PGTeam" \
                DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION \(schema).slow_commit()
                """)
        }
        return (configuration, coordinator)
    }

    /// Runs `action` on a thread of its own once the server shows the session `pid` running its `COMMIT` (a
    /// timer could fire before the COMMIT is sent or after it ended when the machine is busy; this cannot).
    static func whenCommitting(
        pid: Int32, _ configuration: PostgresStoreConfiguration, _ action: @escaping @Sendable () -> Void
    ) {
        let thread = Thread {
            let deadline = Date().addingTimeInterval(60)
            _ = try? withRawConnection(configuration) { connection in
                while Date() < deadline {
                    let rows = try connection.sql(
                        """
                        SELECT count(*) FROM pg_stat_activity \
                        WHERE pid = \(pid) AND state = 'active' AND query ILIKE 'COMMIT%'
                        """)
                    if try rows[0].decode(Int64.self) == 1 { break }
                    Thread.sleep(forTimeInterval: 0.01)
                }
            }
            action()
        }
        thread.start()
    }

    static func teams(named name: String, _ configuration: PostgresStoreConfiguration) throws -> Int64 {
        try withRawConnection(configuration) { connection in
            try connection.sql("SELECT count(*) FROM \"\(configuration.schema)\".\"e_PGTeam\" WHERE name = '\(name)'")[
                0
            ]
            .decode(Int64.self)
        }
    }

    static func insertTeam(_ name: String, _ coordinator: PersistentStoreCoordinator) throws -> ManagedObjectContext {
        let context = ManagedObjectContext(coordinator: coordinator)
        let team = ManagedObject(entity: PostgresStoreTests.model.entity(named: "PGTeam")!, insertInto: context)
        try team.setValue(name, forKey: "name")
        return context
    }

    @Test func aCommitWhoseConnectionIsLostWhileTheServerCommitsIsReportedCommitted() throws {
        let fault = Fault()
        let (configuration, coordinator) = try Self.slowStore(seconds: 2, fault: fault)
        defer { try? PostgresStore.destroyPersistentStore(configuration: configuration) }
        // The client's side of the connection closes while the server runs the COMMIT (in the trigger's sleep):
        // the server goes on and commits; the client sees only a lost connection.
        fault.arm { connection in
            let pid = (try? connection.sql("SELECT pg_backend_pid()")[0].decode(Int32.self)) ?? 0
            Self.whenCommitting(pid: pid, configuration) { try? connection.close().wait() }
        }
        let context = try Self.insertTeam("committed", coordinator)
        try context.save()
        #expect(context.insertedObjects.isEmpty)
        #expect(try Self.teams(named: "committed", configuration) == 1)
        // The store goes on with new connections.
        let next = try Self.insertTeam("next", coordinator)
        try next.save()
        #expect(try Self.teams(named: "next", configuration) == 1)
    }

    @Test func aCommitWhoseSessionIsKilledWhileCommittingIsReportedRolledBack() throws {
        let fault = Fault()
        // The trigger sleeps far longer than the test waits: only the kill ends that COMMIT.
        let (configuration, coordinator) = try Self.slowStore(seconds: 60, fault: fault)
        defer { try? PostgresStore.destroyPersistentStore(configuration: configuration) }
        // Another session ends the store's while its COMMIT runs: the server rolls the transaction back.
        fault.arm { connection in
            let pid = (try? connection.sql("SELECT pg_backend_pid()")[0].decode(Int32.self)) ?? 0
            Self.whenCommitting(pid: pid, configuration) {
                _ = try? withRawConnection(configuration) { try $0.sql("SELECT pg_terminate_backend(\(pid))") }
            }
        }
        let context = try Self.insertTeam("killed", coordinator)
        #expect {
            try context.save()
        } throws: { error in
            guard case PostgresStoreError.connectionLost(let reason) = error else { return false }
            return reason.contains("rolled back")
        }
        #expect(context.insertedObjects.count == 1)
        #expect(try Self.teams(named: "killed", configuration) == 0)
        // Saved again (with commits fast again), it is there once.
        _ = try withRawConnection(configuration) { connection in
            try connection.sql("DROP TRIGGER slow_commit ON \"\(configuration.schema)\".\"e_PGTeam\"")
        }
        try context.save()
        #expect(try Self.teams(named: "killed", configuration) == 1)
    }

    @Test func aCommitThatNeverReachesTheServerIsReportedRolledBack() throws {
        let fault = Fault()
        let (configuration, coordinator) = try Self.slowStore(seconds: 0, fault: fault)
        defer { try? PostgresStore.destroyPersistentStore(configuration: configuration) }
        // The connection closes before COMMIT is sent: the server's session is idle in its transaction (or gone).
        fault.arm { connection in try? connection.close().wait() }
        let context = try Self.insertTeam("lost", coordinator)
        #expect {
            try context.save()
        } throws: { error in
            guard case PostgresStoreError.connectionLost(let reason) = error else { return false }
            return reason.contains("rolled back")
        }
        #expect(try Self.teams(named: "lost", configuration) == 0)
    }
}
#endif
