#if Postgres
import Foundation
import Logging
import PostgresNIO
import Strata

/// How a ``PostgresStore`` reaches its database: the server, the role, the database, the schema that holds the
/// store's tables, and how many connections it keeps.
///
/// For example:
/// ```swift
/// var configuration = PostgresStoreConfiguration(host: "db.internal", username: "app", database: "company")
/// configuration.schema = "company_v1"
/// configuration.poolSize = 8
/// try coordinator.addPersistentStore(.postgres(configuration))
/// ```
///
/// ## Topics
/// - ``Endpoint``
public struct PostgresStoreConfiguration: Sendable {
    /// Where the server listens.
    public enum Endpoint: Sendable, Equatable {
        /// A TCP host and port.
        case tcp(host: String, port: Int)
        /// A unix-domain socket file (e.g. `/var/run/postgresql/.s.PGSQL.5432`).
        case unixSocket(path: String)
    }

    /// Where the server listens.
    public var endpoint: Endpoint
    /// The role to log in as.
    public var username: String
    /// The role's password, nil for `trust` or peer authentication.
    public var password: String?
    /// The database, nil for the role's default (its own name).
    public var database: String?
    /// The PostgreSQL schema that holds the store's tables (created on first use; default `strata`). Several
    /// stores, with different models, may live in one database under different schemas.
    public var schema = "strata"
    /// The most connections the store keeps open at once (default 4): that many reads and saves run at a time.
    /// One more connection listens for other processes' saves.
    public var poolSize = 4
    /// Whether every save records a transaction in the store's persistent history (a table of the schema),
    /// as ``StrataStoreConfiguration/recordsPersistentHistory`` does for a Strata store.
    public var recordsPersistentHistory = false
    /// How many times a save that meets a serialization failure or a deadlock is tried in all (default 3).
    public var maximumSaveAttempts = 3
    /// How long a connection attempt may take (default 10 seconds).
    public var connectTimeout: Duration = .seconds(10)
    /// Whether the store listens (`LISTEN`) for other processes' saves (default true): it then invalidates the
    /// rows they changed in its coordinators' row caches and calls its remote-change observers.
    public var observesRemoteChanges = true
    /// Whether and how a schema written with an earlier model is migrated when the store is opened (as
    /// ``StrataStoreConfiguration/migration`` for a Strata store; default: not at all, the model is refused):
    /// ``PostgresSchemaMigrator``.
    public var migration = MigrationOptions()
    /// How long the store keeps trying to learn whether a transaction committed when its connection was lost
    /// during `COMMIT` (default 30 seconds: the server may be restarting), before it reports
    /// ``PostgresStoreError/commitOutcomeUnknown(transactionID:reason:)``.
    public var commitResolutionTimeout: Duration = .seconds(30)
    /// A fault seam for tests: called with a transaction's connection just before its `COMMIT` is sent.
    package var beforeCommit: (@Sendable (PostgresConnection) -> Void)?
    /// Where the store logs: a note for each predicate it evaluates in memory rather than in SQL, and
    /// reconnections.
    public var logger = Logger(label: "strata.postgres")

    /// A server reached over TCP.
    ///
    /// - Parameters:
    ///   - host: the server's host name or address.
    ///   - port: its port (default 5432).
    ///   - username: the role to log in as.
    ///   - password: its password, if it needs one.
    ///   - database: the database (default: the role's own).
    public init(host: String, port: Int = 5432, username: String, password: String? = nil, database: String? = nil) {
        endpoint = .tcp(host: host, port: port)
        self.username = username
        self.password = password
        self.database = database
    }

    /// A server reached through a unix-domain socket.
    ///
    /// - Parameters:
    ///   - unixSocketPath: the socket file.
    ///   - username: the role to log in as.
    ///   - password: its password, if it needs one.
    ///   - database: the database (default: the role's own).
    public init(unixSocketPath: String, username: String, password: String? = nil, database: String? = nil) {
        endpoint = .unixSocket(path: unixSocketPath)
        self.username = username
        self.password = password
        self.database = database
    }
}
#endif
