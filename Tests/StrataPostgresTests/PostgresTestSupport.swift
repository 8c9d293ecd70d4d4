#if Postgres
import Foundation
import Logging
import PostgresNIO
import Strata
import StrataPostgres
import StrataTestSupport

/// Settings for a PostgreSQL store in a new schema of `cluster` (the test process's shared one by default).
func postgresConfiguration(
    cluster: PostgresTestCluster? = nil, schema: String = freshSchema(), history: Bool = false
) throws -> PostgresStoreConfiguration {
    let cluster = try cluster ?? PostgresTestCluster.shared()
    var configuration = PostgresStoreConfiguration(
        host: "127.0.0.1", port: cluster.port, username: cluster.user, database: cluster.database)
    configuration.schema = schema
    configuration.poolSize = 2
    configuration.recordsPersistentHistory = history
    configuration.connectTimeout = .seconds(3)
    configuration.logger.logLevel = .warning
    return configuration
}

/// A schema name no test used yet.
func freshSchema() -> String {
    "p_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
}

/// A connection of the test's own to the store's database, for looking at what the store wrote (or for
/// getting in its way), closed after `body`.
func withRawConnection<T>(
    _ configuration: PostgresStoreConfiguration, _ body: (PostgresConnection) throws -> T
) throws -> T {
    guard case .tcp(let host, let port) = configuration.endpoint else { preconditionFailure("TCP only") }
    let connection = try PostgresConnection.connect(
        on: PostgresConnection.defaultEventLoopGroup.any(),
        configuration: PostgresConnection.Configuration(
            host: host, port: port, username: configuration.username, password: nil,
            database: configuration.database, tls: .disable),
        id: 1, logger: Logger(label: "test")
    ).wait()
    defer { try? connection.close().wait() }
    return try body(connection)
}

extension PostgresConnection {
    /// Runs a statement of the test's own and returns its rows.
    @discardableResult
    func sql(_ text: String) throws -> [PostgresRow] {
        try query(PostgresQuery(unsafeSQL: text), logger: Logger(label: "test")).wait().rows
    }
}
#endif
