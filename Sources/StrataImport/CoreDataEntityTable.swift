/// `Z_PRIMARYKEY`: Core Data's number (`Z_ENT`) of each entity, its superentity's number and the highest primary
/// key handed out. Entities numbered 16000 and above are Core Data's own (persistent history, CloudKit
/// mirroring), not the model's.
struct CoreDataEntityTable {
    struct Entry {
        var number: Int64
        var name: String
        var superNumber: Int64
    }

    /// The model's entities, by name.
    var entries: [String: Entry] = [:]
    /// Core Data's own entities (numbered 16000 and above), skipped.
    var internalNames: [String] = []

    /// The first number of Core Data's own entities.
    static let firstInternalNumber: Int64 = 16000

    /// Reads `Z_PRIMARYKEY`.
    ///
    /// - Throws: ``ImportError/missingTable(_:)``; ``ImportError/wrongType(table:column:row:expected:found:)`` for
    ///   a row that is not (integer, text, integer); ``ImportError/entityMismatch(reason:)`` for a name twice.
    init(connection: SQLiteConnection, tables: Set<String>) throws(ImportError) {
        guard tables.contains("Z_PRIMARYKEY") else { throw .missingTable("Z_PRIMARYKEY") }
        var entries: [String: Entry] = [:]
        var internalNames: [String] = []
        try connection.query("SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY ORDER BY Z_ENT") {
            row throws(ImportError) in
            guard case .integer(let number) = row[0] else {
                throw .wrongType(
                    table: "Z_PRIMARYKEY", column: "Z_ENT", row: 0, expected: "INTEGER", found: row[0].storageClass)
            }
            guard case .text(let name) = row[1] else {
                throw .wrongType(
                    table: "Z_PRIMARYKEY", column: "Z_NAME", row: number, expected: "TEXT", found: row[1].storageClass)
            }
            var superNumber: Int64 = 0
            switch row[2] {
            case .integer(let value): superNumber = value
            case .null: superNumber = 0
            default:
                throw .wrongType(
                    table: "Z_PRIMARYKEY", column: "Z_SUPER", row: number, expected: "INTEGER",
                    found: row[2].storageClass)
            }
            if number >= Self.firstInternalNumber {
                internalNames.append(name)
                return
            }
            guard entries[name] == nil else { throw .entityMismatch(reason: "\(name) is listed twice") }
            entries[name] = Entry(number: number, name: name, superNumber: superNumber)
        }
        self.entries = entries
        self.internalNames = internalNames
    }
}
