#if Postgres
import Foundation
import PostgresNIO
import Strata
import StrataLock
import StrataPostgres
import StrataTestSupport
import Testing

/// Faults between the store and its server: a server killed while a save waits inside its transaction, a
/// server that is down, serialization failures (retried, then failed whole). Each leaves nothing of the save in
/// the database and gives a typed error; the store carries on once the server is back.
@Suite(.serialized) struct PostgresFailureTests {
    @Test func aServerKilledMidTransactionLosesTheWholeSaveAndTheStoreCarriesOnAfterTheRestart() throws {
        let cluster = try PostgresTestCluster()
        defer { cluster.destroy() }
        let configuration = try postgresConfiguration(cluster: cluster)
        let (coordinator, store) = try PostgresStoreTests.coordinator(configuration)
        let context = ManagedObjectContext(coordinator: coordinator)
        let team = ManagedObject(entity: PostgresStoreTests.model.entity(named: "PGTeam")!, insertInto: context)
        try team.setValue("before", forKey: "name")
        try context.save()

        // Another session holds the team's row: the save below inserts its clubs, then waits on the UPDATE.
        let blocker = try PostgresConnection.connect(
            on: PostgresConnection.defaultEventLoopGroup.any(),
            configuration: PostgresConnection.Configuration(
                host: "127.0.0.1", port: cluster.port, username: cluster.user, password: nil,
                database: cluster.database, tls: .disable),
            id: 99, logger: .init(label: "test")
        ).wait()
        try blocker.sql("BEGIN")
        try blocker.sql("SELECT 1 FROM \"\(configuration.schema)\".\"e_PGTeam\" FOR UPDATE")

        for index in 0..<3 {
            let club = ManagedObject(entity: PostgresStoreTests.model.entity(named: "PGClub")!, insertInto: context)
            try club.setValue("club \(index)", forKey: "name")
        }
        try team.setValue("after", forKey: "name")
        let outcome = Lock<Result<Void, any Error>?>(nil)
        let transfer = UncheckedSendableContext(context: context)
        let saver = Thread {
            let result = Result { try transfer.context.save() }
            outcome.withLock { $0 = result }
        }
        saver.start()
        try PostgresStoreTests.waitUntil {
            let waiting = try? blocker.sql(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
            )[0].decode(Int64.self)
            return waiting == 1
        }
        try cluster.stop(immediate: true)
        try PostgresStoreTests.waitUntil(seconds: 30) { outcome.withLock { $0 != nil } }
        #expect {
            try outcome.withLock { $0! }.get()
        } throws: { error in
            guard case PostgresStoreError.connectionLost = error else { return false }
            return (error as? PostgresStoreError)?.isTransient == true
        }
        try? blocker.close().wait()

        // While the server is down, reads fail with the same typed error.
        #expect {
            _ = try ManagedObjectContext(coordinator: coordinator).fetch(
                FetchRequest<ManagedObject>(entityName: "PGTeam"))
        } throws: { error in
            guard case PostgresStoreError.connectionLost = error else { return false }
            return true
        }

        // After the restart nothing of the save is there: no club, the old name.
        try cluster.start()
        let check = ManagedObjectContext(coordinator: coordinator)
        #expect(try check.count(for: FetchRequest<ManagedObject>(entityName: "PGClub")) == 0)
        let stored = try check.existingObject(with: team.objectID)
        try check.refresh(stored, mergeChanges: false)
        #expect(try stored.value(forKey: "name") as? String == "before")

        // The context still holds its changes; the same save goes through now, on new connections.
        try context.save()
        let after = ManagedObjectContext(coordinator: coordinator)
        #expect(try after.count(for: FetchRequest<ManagedObject>(entityName: "PGClub")) == 3)
        #expect(try after.existingObject(with: team.objectID).value(forKey: "name") as? String == "after")

        // The store listens again since the restart: another coordinator's save is heard.
        let heard = Lock(0)
        store.addRemoteChangeObserver { _ in heard.withLock { $0 += 1 } }
        let (other, _) = try PostgresStoreTests.coordinator(configuration)
        let otherContext = ManagedObjectContext(coordinator: other)
        try otherContext.existingObject(with: team.objectID).setValue("from elsewhere", forKey: "name")
        try PostgresStoreTests.waitUntil(seconds: 30) {
            // Saved again until heard: the first saves may come before the listening connection is back.
            if heard.withLock({ $0 }) == 0, otherContext.hasChanges { try? otherContext.save() }
            return heard.withLock { $0 } > 0
        }
    }

    @Test func aSerializationFailureIsRetriedAndAfterTheLastTryTheSaveFailsWhole() throws {
        let configuration = try postgresConfiguration()
        defer { try? PostgresStore.destroyPersistentStore(configuration: configuration) }
        let (coordinator, store) = try PostgresStoreTests.coordinator(configuration)
        let schema = "\"\(configuration.schema)\""
        // A trigger that fails the first inserts into PGTeam's table with SQLSTATE 40001, as a serializable
        // transaction that lost a race would; its counter is a sequence, which rollbacks do not undo.
        _ = try withRawConnection(configuration) { connection in
            try connection.sql("CREATE SEQUENCE \(schema).attempts")
            try connection.sql("CREATE TABLE \(schema).failures (upto bigint NOT NULL)")
            try connection.sql("INSERT INTO \(schema).failures VALUES (2)")
            try connection.sql(
                """
                CREATE FUNCTION \(schema).fail() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
                IF nextval('\(schema).attempts') <= (SELECT upto FROM \(schema).failures) THEN
                RAISE EXCEPTION 'injected' USING ERRCODE = 'serialization_failure'; END IF; RETURN NEW; END $$
                """)
            try connection.sql(
                "CREATE TRIGGER fail BEFORE INSERT ON \(schema).\"e_PGTeam\" FOR EACH ROW EXECUTE FUNCTION \(schema).fail()"
            )
        }
        let context = ManagedObjectContext(coordinator: coordinator)
        let club = ManagedObject(entity: PostgresStoreTests.model.entity(named: "PGClub")!, insertInto: context)
        try club.setValue("first", forKey: "name")
        let team = ManagedObject(entity: PostgresStoreTests.model.entity(named: "PGTeam")!, insertInto: context)
        try team.setValue("third try", forKey: "name")
        try context.save()  // two failures, then the third try commits
        let teams = PostgresStoreTests.model.entity(named: "PGTeam")!
        let clubs = PostgresStoreTests.model.entity(named: "PGClub")!
        #expect(try store.rows(of: teams, includesSubentities: true).count == 1)
        #expect(try store.rows(of: clubs, includesSubentities: true).count == 1)

        _ = try withRawConnection(configuration) { connection in
            try connection.sql("UPDATE \(schema).failures SET upto = (SELECT last_value FROM \(schema).attempts) + 3")
        }
        let late = ManagedObject(entity: clubs, insertInto: context)
        try late.setValue("second", forKey: "name")
        let doomed = ManagedObject(entity: teams, insertInto: context)
        try doomed.setValue("never", forKey: "name")
        #expect {
            try context.save()
        } throws: { error in
            guard case PostgresStoreError.serializationFailure(let attempts, _) = error else { return false }
            return attempts == 3
        }
        // Nothing of the failed save: not the club inserted before the team in the same transaction.
        #expect(try store.rows(of: teams, includesSubentities: true).count == 1)
        #expect(try store.rows(of: clubs, includesSubentities: true).count == 1)
    }
}

/// A context handed to the thread that saves it (the test waits for that thread before touching it again).
struct UncheckedSendableContext: @unchecked Sendable {
    let context: ManagedObjectContext
}
#endif
