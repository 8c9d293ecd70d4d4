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
#endif
