#if Postgres
import Foundation
import PostgresNIO

extension PostgresStore {
    /// What names a transaction once its connection is gone: PostgreSQL's transaction ID (with epoch, as
    /// `txid_current()` gives it) and the server process that ran it.
    struct TransactionIdentity: Sendable {
        var transactionID: Int64
        var backendPID: Int64
    }

    /// The identity of the transaction open on `connection` (one round trip, before `COMMIT`).
    ///
    /// - Throws: ``PostgresStoreError``.
    func transactionIdentity(_ connection: PostgresConnection) throws -> TransactionIdentity {
        let row = try connection.run("SELECT txid_current(), pg_backend_pid()::bigint", logger: logger).rows[0]
        do {
            let (transactionID, pid) = try row.decode((Int64, Int64).self)
            return TransactionIdentity(transactionID: transactionID, backendPID: pid)
        } catch {
            throw PostgresStoreError.server(sqlState: "", message: "txid_current(): \(error)")
        }
    }

    /// Finds out whether a transaction whose connection was lost during `COMMIT` committed, and returns only if
    /// it did.
    ///
    /// 1. On another connection (made anew while the server is out of reach, until
    ///    ``PostgresStoreConfiguration/commitResolutionTimeout``), ask `txid_status` for the transaction.
    /// 2. `committed`: return: the save is in the database. `aborted`: throw
    ///    ``PostgresStoreError/connectionLost(reason:)``: nothing of it is (the server also rolls back a
    ///    transaction it was running when it crashed).
    /// 3. `in progress`: its session still runs. If it is idle in its transaction, the `COMMIT` has not reached it
    ///    (or never will): end that session (`pg_terminate_backend`, only when the process still runs that very
    ///    transaction), which rolls it back. Otherwise it is committing: wait. Then from step 1 again.
    /// 4. Out of time: throw ``PostgresStoreError/commitOutcomeUnknown(transactionID:reason:)``.
    ///
    /// - Throws: as above.
    func resolveCommit(_ identity: TransactionIdentity, reason: String) throws {
        logger.warning(
            "PostgreSQL: the connection was lost during COMMIT; finding out whether it committed",
            metadata: ["transaction": "\(identity.transactionID)", "reason": "\(reason)"])
        let deadline = ContinuousClock.now.advanced(by: configuration.commitResolutionTimeout)
        var lastFailure = reason
        while true {
            var answer: String??
            do {
                answer = .some(
                    try pool.withConnection { connection in
                        var statement = PostgresStatement()
                        let id = statement.bind(identity.transactionID)
                        let status = try connection.run("SELECT txid_status(\(id))", statement.binds, logger: logger)
                            .rows[0].decode(String?.self)
                        if status == "in progress" {
                            var terminate = PostgresStatement()
                            let pid = terminate.bind(identity.backendPID)
                            let xid = terminate.bind(identity.transactionID & 0xFFFF_FFFF)
                            _ = try connection.run(
                                """
                                SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = \(pid) \
                                AND state IN ('idle in transaction', 'idle in transaction (aborted)') \
                                AND backend_xid::text::bigint = \(xid)
                                """, terminate.binds, logger: logger)
                        }
                        return status
                    })
            } catch {
                let failure = PostgresStoreError(error)
                guard case .connectionLost(let message) = failure else { throw failure }
                lastFailure = message
            }
            if let status = answer {
                switch status {
                case "committed":
                    logger.notice(
                        "PostgreSQL: the transaction committed", metadata: ["transaction": "\(identity.transactionID)"])
                    return
                case "aborted":
                    throw PostgresStoreError.connectionLost(
                        reason: "\(reason) (during COMMIT; transaction \(identity.transactionID) was rolled back)")
                default:
                    lastFailure = "transaction \(identity.transactionID) is \(status ?? "unknown to the server")"
                }
            }
            guard ContinuousClock.now < deadline else {
                throw PostgresStoreError.commitOutcomeUnknown(
                    transactionID: identity.transactionID, reason: "\(reason); last: \(lastFailure)")
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }
}
#endif
