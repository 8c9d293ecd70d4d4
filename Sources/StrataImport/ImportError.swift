import Strata

/// Why an import of a Core Data SQLite store stopped. Every case names what it is about (file, table, column,
/// row), and an import that throws leaves no Strata store behind.
///
/// ## Topics
/// ### The file
/// - ``notADatabase(path:reason:)``
/// - ``sqlite(operation:message:)``
/// - ``invalidMetadata(reason:)``
/// ### The layout
/// - ``missingTable(_:)``
/// - ``missingColumn(table:column:)``
/// - ``unknownTable(_:)``
/// - ``unknownColumn(table:column:)``
/// - ``entityMismatch(reason:)``
/// ### The model
/// - ``noMatchingVersion(hashes:reasons:)``
/// - ``ambiguousVersion(candidates:hashes:)``
/// - ``unknownVersion(_:available:)``
/// - ``unsupportedModel(reason:)``
/// - ``model(_:)``
/// ### The rows
/// - ``wrongType(table:column:row:expected:found:)``
/// - ``invalidValue(table:column:row:reason:)``
/// - ``unknownEntity(table:row:entityNumber:)``
/// - ``danglingReference(table:column:row:value:)``
/// - ``missingExternalData(table:column:row:path:)``
/// ### The destination
/// - ``destinationExists(_:)``
/// - ``writeFailed(reason:)``
/// - ``migrationFailed(reason:)``
public enum ImportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// SQLite cannot open or read the file as a database.
    case notADatabase(path: String, reason: String)
    /// An SQLite call failed while reading.
    case sqlite(operation: String, message: String)
    /// `Z_METADATA` holds no readable property list, or one without the keys a Core Data store has.
    case invalidMetadata(reason: String)
    /// A table the model needs (an entity hierarchy's `Z<ENTITY>`, a many-to-many's `Z_<n><RELATIONSHIP>`, or
    /// Core Data's own `Z_PRIMARYKEY` and `Z_METADATA`) is not in the file.
    case missingTable(String)
    /// A column the model needs is not in its table.
    case missingColumn(table: String, column: String)
    /// A table that no entity or relationship of the model accounts for (and that is not one of Core Data's own).
    case unknownTable(String)
    /// A column that no property of the model accounts for.
    case unknownColumn(table: String, column: String)
    /// `Z_PRIMARYKEY`'s entities are not the model's (a name missing or extra, or another superentity).
    case entityMismatch(reason: String)
    /// No version of the model fits the store. `hashes` are the store's `NSStoreModelVersionHashes` (entity name to
    /// base64), `reasons` say for each version why it does not fit.
    case noMatchingVersion(hashes: [String: String], reasons: [String])
    /// Several versions fit the store's tables and none is the current one: name one with `--version`.
    case ambiguousVersion(candidates: [String], hashes: [String: String])
    /// The version asked for is not in the model bundle.
    case unknownVersion(String, available: [String])
    /// The model uses something the importer cannot map to Core Data's tables (named in `reason`).
    case unsupportedModel(reason: String)
    /// The model file cannot be read.
    case model(String)
    /// A value's SQLite storage class is not the one its column's attribute type is stored as.
    case wrongType(table: String, column: String, row: Int64, expected: String, found: String)
    /// A value of the right storage class that the attribute cannot hold (out of range, not a UUID, ...).
    case invalidValue(table: String, column: String, row: Int64, reason: String)
    /// A row's `Z_ENT` is not a concrete entity of the table's hierarchy.
    case unknownEntity(table: String, row: Int64, entityNumber: Int64)
    /// A foreign key or join-table row names a row that is not there (or not of the relationship's destination).
    case danglingReference(table: String, column: String, row: Int64, value: Int64)
    /// An external binary reference names a file that is not in the `_EXTERNAL_DATA` folder.
    case missingExternalData(table: String, column: String, row: Int64, path: String)
    /// The destination exists already: the importer writes a new store only.
    case destinationExists(String)
    /// Writing the Strata store failed.
    case writeFailed(reason: String)
    /// Migrating the imported store to the model's current version failed.
    case migrationFailed(reason: String)

    /// A message naming the table, column and row at fault.
    public var description: String {
        switch self {
        case .notADatabase(let path, let reason): "\(path) is not an SQLite database: \(reason)"
        case .sqlite(let operation, let message): "SQLite failed (\(message)) running: \(operation)"
        case .invalidMetadata(let reason): "Z_METADATA: \(reason)"
        case .missingTable(let table): "the table \(table) is missing"
        case .missingColumn(let table, let column): "\(table) has no column \(column)"
        case .unknownTable(let table): "the table \(table) is none the model accounts for"
        case .unknownColumn(let table, let column): "\(table).\(column) is no property of the model"
        case .entityMismatch(let reason): "Z_PRIMARYKEY does not match the model: \(reason)"
        case .noMatchingVersion(let hashes, let reasons):
            "no version of the model fits the store; its NSStoreModelVersionHashes are \(Self.list(hashes))"
                + reasons.map { "\n  \($0)" }.joined()
        case .ambiguousVersion(let candidates, let hashes):
            "versions \(candidates.joined(separator: ", ")) all fit the store's tables (hashes \(Self.list(hashes))); "
                + "name one with --version"
        case .unknownVersion(let name, let available):
            "the model has no version \(name) (it has \(available.joined(separator: ", ")))"
        case .unsupportedModel(let reason): "the model cannot be imported: \(reason)"
        case .model(let reason): "the model cannot be read: \(reason)"
        case .wrongType(let table, let column, let row, let expected, let found):
            "\(table).\(column) of row Z_PK \(row) holds \(found) where \(expected) is stored"
        case .invalidValue(let table, let column, let row, let reason):
            "\(table).\(column) of row Z_PK \(row): \(reason)"
        case .unknownEntity(let table, let row, let number):
            "\(table) row Z_PK \(row) has Z_ENT \(number), no concrete entity of the table's hierarchy"
        case .danglingReference(let table, let column, let row, let value):
            "\(table).\(column) of row \(row) names \(value), which is not there"
        case .missingExternalData(let table, let column, let row, let path):
            "\(table).\(column) of row Z_PK \(row) refers to external data \(path), which is missing"
        case .destinationExists(let path): "\(path) exists; the import writes a new store"
        case .writeFailed(let reason): "writing the Strata store failed: \(reason)"
        case .migrationFailed(let reason): "migrating the imported store failed: \(reason)"
        }
    }

    private static func list(_ hashes: [String: String]) -> String {
        hashes.isEmpty
            ? "(none)" : hashes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
    }
}
