#if Postgres
import Foundation
import Logging
import PostgresNIO
import StrataLock

extension PostgresConnection {
    /// Runs one statement and waits for all its rows.
    ///
    /// - Throws: ``PostgresStoreError``.
    @discardableResult
    func run(
        _ sql: String, _ binds: PostgresBindings = PostgresBindings(), logger: Logger
    ) throws
        -> PostgresQueryResult
    {
        // The answer, or the connection's end, whichever comes first: a statement sent on a connection that closes
        // at that moment may otherwise never be answered.
        let answer = eventLoop.makePromise(of: PostgresQueryResult.self)
        let once = CompletedOnce()
        query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger).whenComplete { result in
            if once.claim() { answer.completeWith(result) }
        }
        closeFuture.whenComplete { _ in
            if once.claim() {
                answer.fail(
                    PostgresStoreError.connectionLost(reason: "the connection closed before the statement ended"))
            }
        }
        do {
            return try answer.futureResult.wait()
        } catch {
            throw PostgresStoreError(error)
        }
    }
}

/// Lets the first of several callbacks complete a promise.
private final class CompletedOnce: Sendable {
    private let done = Lock(false)

    /// True for the first caller only.
    func claim() -> Bool {
        done.withLock { done in
            defer { done = true }
            return !done
        }
    }
}
#endif
