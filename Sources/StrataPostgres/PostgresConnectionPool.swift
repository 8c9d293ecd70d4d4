#if Postgres
import Foundation
import Logging
import PostgresNIO
import StrataLock

/// The connections of one ``PostgresStore``: at most ``PostgresStoreConfiguration/poolSize`` open, each used by
/// one caller at a time. The store's API is synchronous, as the ``PersistentStore`` protocol is: a caller's
/// thread waits for its statements (never an event-loop thread: postgres-nio's own threads do the I/O).
///
/// A connection that broke (the server restarted, the network failed) is dropped when it is handed back, and a
/// new one is made on next use, so the store carries on once the server is back.
final class PostgresConnectionPool: Sendable {
    private struct State {
        var idle: [PostgresConnection] = []
        var nextID = 1
        var isClosed = false
    }

    let configuration: PostgresStoreConfiguration
    private let state = Lock(State())
    private let permits: DispatchSemaphore

    init(configuration: PostgresStoreConfiguration) {
        self.configuration = configuration
        permits = DispatchSemaphore(value: max(1, configuration.poolSize))
    }

    deinit {
        close()
    }

    /// The connection settings postgres-nio takes.
    var connectionConfiguration: PostgresConnection.Configuration {
        var result: PostgresConnection.Configuration
        switch configuration.endpoint {
        case .tcp(let host, let port):
            result = PostgresConnection.Configuration(
                host: host, port: port, username: configuration.username, password: configuration.password,
                database: configuration.database, tls: .disable)
        case .unixSocket(let path):
            result = PostgresConnection.Configuration(
                unixSocketPath: path, username: configuration.username, password: configuration.password,
                database: configuration.database)
        }
        let (seconds, attoseconds) = configuration.connectTimeout.components
        result.options.connectTimeout = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        return result
    }

    /// Opens a connection of its own (not counted in the pool: the listening connection).
    ///
    /// - Throws: ``PostgresStoreError/connectionLost(reason:)`` when the server cannot be reached.
    func connect() throws -> PostgresConnection {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        do {
            return try PostgresConnection.connect(
                on: PostgresConnection.defaultEventLoopGroup.any(), configuration: connectionConfiguration, id: id,
                logger: configuration.logger
            ).wait()
        } catch {
            throw PostgresStoreError(error)
        }
    }

    /// Runs `body` with a connection of the pool, waiting for one when all are in use.
    ///
    /// - Throws: what `body` throws; ``PostgresStoreError/connectionLost(reason:)`` when no connection can be
    ///   made; ``PostgresStoreError/closed`` after ``close()``.
    func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        permits.wait()
        defer { permits.signal() }
        let reused = try state.withLock { state -> PostgresConnection? in
            guard !state.isClosed else { throw PostgresStoreError.closed }
            while let connection = state.idle.popLast() {
                if !connection.isClosed { return connection }
            }
            return nil
        }
        let connection = try reused ?? connect()
        do {
            let result = try body(connection)
            giveBack(connection)
            return result
        } catch {
            giveBack(connection)
            throw error
        }
    }

    private func giveBack(_ connection: PostgresConnection) {
        let keep = state.withLock { state in
            guard !state.isClosed, !connection.isClosed else { return false }
            state.idle.append(connection)
            return true
        }
        if !keep { try? connection.close().wait() }
    }

    /// Closes every idle connection; connections in use close when handed back.
    func close() {
        let idle = state.withLock { state in
            state.isClosed = true
            defer { state.idle = [] }
            return state.idle
        }
        for connection in idle { try? connection.close().wait() }
    }
}

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

extension PostgresStoreError {
    /// The typed error for what postgres-nio or SwiftNIO threw.
    init(_ error: any Error) {
        if let error = error as? PostgresStoreError {
            self = error
            return
        }
        guard let error = error as? PSQLError else {
            // SwiftNIO's connect and channel errors: the server is not there or the connection broke.
            self = .connectionLost(reason: String(describing: error))
            return
        }
        switch error.code {
        case .server:
            let state = error.serverInfo?[.sqlState] ?? "XX000"
            let message = error.serverInfo?[.message] ?? "\(error)"
            let detail = error.serverInfo?[.detail] ?? ""
            switch state {
            case "40001", "40P01":
                self = .serializationFailure(attempts: 1, message: message)
            case "23505", "23P01":
                self = .uniquenessViolation(
                    constraint: error.serverInfo?[.constraintName] ?? "", detail: detail.isEmpty ? message : detail)
            case _ where state.hasPrefix("08") || state.hasPrefix("57P"):
                // Connection exceptions; admin_shutdown, crash_shutdown, cannot_connect_now.
                self = .connectionLost(reason: "\(message) (SQLSTATE \(state))")
            default:
                self = .server(sqlState: state, message: detail.isEmpty ? message : "\(message): \(detail)")
            }
        case .serverClosedConnection, .clientClosedConnection, .connectionError, .uncleanShutdown, .queryCancelled,
            .messageDecodingFailure, .unexpectedBackendMessage:
            self = .connectionLost(reason: String(describing: error.code))
        default:
            self = .server(sqlState: "", message: String(reflecting: error))
        }
    }
}
#endif
