import StrataFormat
import StrataIO
import StrataStorage
import StrataTestSupport
import Testing

/// Row records and reference answers for the index tests.
enum IndexReference {
    typealias Field = RowRecord.Field

    static func row(entity: UInt16 = 1, _ fields: [Field]) -> [UInt8] {
        RowRecord.encode(entityID: entity, rowVersion: 1, fields: fields)
    }

    /// Makes, checkpoints and closes a store in `fileSystem` whose table "t" holds 300 rows `[k % 7, "row k"]` and
    /// whose index "k" is on the first field: the store the read-error tests reopen on a failing device.
    static func makeSevenKeyStore(
        _ fileSystem: any FileSystem, configuration: StoreConfiguration
    ) throws -> (table: TableID, index: IndexID, rows: [RowID]) {
        let store = try Store.openForTesting(fileSystem, configuration: configuration)
        let made = try store.write { txn -> (TableID, IndexID, [RowID]) in
            let table = try txn.createTable(named: "t")
            let index = try txn.createIndex(named: "k", on: table, fields: [0])
            let rows = try (0..<300).map { k in
                try txn.insert(row([.int64(Int64(k % 7)), .string("row \(k)")]), into: table)
            }
            return (table, index, rows)
        }
        try store.checkpoint()
        try store.close()
        return made
    }

    /// What the index over `definition` must hold, computed from the table's rows alone: each row's key
    /// (positions past the row's fields are null), keys normalised through their encoding, in encoded key
    /// then row order.
    static func expectedEntries(
        _ definition: IndexDefinition, rows: [(RowID, [UInt8])]
    ) throws -> [(key: [UInt8], entry: IndexEntry)] {
        var result: [(key: [UInt8], entry: IndexEntry)] = []
        for (row, bytes) in rows {
            let (header, fields) = try RowRecord.decodeAll(bytes)
            if let filter = definition.entityIDs, !filter.contains(header.entityID) { continue }
            let key = definition.fields.map { $0 < fields.count ? fields[$0] : .null }
            let encoded = IndexKey.encode(key)
            result.append((encoded, IndexEntry(key: try IndexKey.decode(encoded), row: row)))
        }
        result.sort { a, b in
            let order = IndexKey.compare(a.key, b.key)
            return order != 0 ? order < 0 : a.entry.row < b.entry.row
        }
        return result
    }

    static func rows(of table: TableID, in snapshot: Snapshot) throws -> [(RowID, [UInt8])] {
        var rows: [(RowID, [UInt8])] = []
        try snapshot.forEachRow(in: table) { row, bytes in
            rows.append((row, Array(bytes)))
            return true
        }
        return rows
    }

    static func entries(of index: IndexID, in snapshot: Snapshot, reverse: Bool = false) throws -> [IndexEntry] {
        var entries: [IndexEntry] = []
        try snapshot.forEachIndexEntry(in: index, reverse: reverse) {
            entries.append($0); return true
        }
        return entries
    }

    /// Whether every index of the snapshot holds exactly what a rebuild from its table gives; records an
    /// issue naming `context` otherwise.
    @discardableResult
    static func checkAllIndexes(_ snapshot: Snapshot, _ context: String) throws -> Bool {
        var ok = true
        for name in snapshot.indexNames {
            let index = snapshot.index(named: name)!
            let definition = try snapshot.indexDefinition(index)
            let expected = try expectedEntries(definition, rows: rows(of: definition.table, in: snapshot)).map(\.entry)
            let actual = try entries(of: index, in: snapshot)
            if actual != expected {
                Issue.record("\(context): index '\(name)' holds \(actual.count) entries, a rebuild \(expected.count)")
                ok = false
            }
            if try snapshot.indexEntryCount(index) != expected.count {
                Issue.record("\(context): index '\(name)' counts \(try snapshot.indexEntryCount(index)) entries")
                ok = false
            }
            if try self.entries(of: index, in: snapshot, reverse: true) != actual.reversed() {
                Issue.record("\(context): index '\(name)' reversed is not the reverse")
                ok = false
            }
        }
        return ok
    }
}
