#if Postgres
import Foundation

/// What can go wrong between a ``PostgresStore`` and its server, as a typed error: every failure of a save leaves
/// the database as it was (a save is one PostgreSQL transaction, rolled back whole).
///
/// For example:
/// ```swift
/// do {
///     try context.save()
/// } catch let error as PostgresStoreError {
///     if error.isTransient { /* the server went away or the save lost a race: try again later */ }
/// }
/// ```
///
/// ## Topics
/// - ``isTransient``
public enum PostgresStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The connection to the server could not be made, or broke (a network failure, the server shut down or
    /// restarted, an administrator ended the session). When it broke during a save, the server rolled the
    /// transaction back: nothing of the save is in the database.
    case connectionLost(reason: String)
    /// The connection was lost during a transaction's `COMMIT` and, for as long as
    /// ``PostgresStoreConfiguration/commitResolutionTimeout`` allowed, no connection could learn whether the
    /// transaction (`transactionID`, PostgreSQL's `txid_current()`) committed: the server stayed out of reach.
    /// `txid_status(transactionID)` tells later. Not transient: trying the save again might apply it twice.
    case commitOutcomeUnknown(transactionID: Int64, reason: String)
    /// A save still met a serialization failure or a deadlock (SQLSTATE 40001, 40P01) after `attempts` tries;
    /// each try was rolled back whole.
    case serializationFailure(attempts: Int, message: String)
    /// The store's schema in the database is not what this model needs, or not a Strata schema at all.
    case schemaMismatch(schema: String, reason: String)
    /// A value the database cannot hold as it is (a string with a NUL character, a URL that is not absolute).
    case unsupportedValue(entity: String, attribute: String, reason: String)
    /// A row written in another process broke a uniqueness constraint at commit (SQLSTATE 23505): the save was
    /// rolled back. Fetching again shows the row that holds the values.
    case uniquenessViolation(constraint: String, detail: String)
    /// Any other error the server reported for a statement, with its SQLSTATE code.
    case server(sqlState: String, message: String)
    /// A row or value read from the database does not decode as the model says (a damaged or foreign schema).
    case corruptRow(table: String, rowID: UInt64, reason: String)
    /// The store was closed.
    case closed

    /// Whether trying the same work again later may succeed: a lost connection or a serialization failure.
    public var isTransient: Bool {
        switch self {
        case .connectionLost, .serializationFailure: true
        default: false
        }
    }

    public var description: String {
        switch self {
        case .connectionLost(let reason): "the connection to PostgreSQL was lost: \(reason)"
        case .serializationFailure(let attempts, let message):
            "the save met a serialization failure \(attempts) times and was rolled back: \(message)"
        case .commitOutcomeUnknown(let transactionID, let reason):
            "whether transaction \(transactionID) committed is unknown (the server stayed out of reach): \(reason)"
        case .schemaMismatch(let schema, let reason): "PostgreSQL schema \(schema): \(reason)"
        case .unsupportedValue(let entity, let attribute, let reason):
            "\(entity).\(attribute): PostgreSQL cannot hold this value: \(reason)"
        case .uniquenessViolation(let constraint, let detail):
            "uniqueness constraint \(constraint) violated at commit: \(detail)"
        case .server(let sqlState, let message): "PostgreSQL error \(sqlState): \(message)"
        case .corruptRow(let table, let rowID, let reason): "row \(rowID) of \(table) does not decode: \(reason)"
        case .closed: "the PostgreSQL store is closed"
        }
    }
}
#endif
