import StrataIO
import StrataStorage
import StrataTestSupport

/// A seeded workload for crash tests: at least 100 transactions mixing table creation, inserts, updates,
/// deletes, blobs and checkpoints, with the exact expected state after every transaction.
///
/// Every transaction k also writes k into table "meta" row 1, so that a recovered store says which
/// transaction it ends with; that state must then equal ``states``[k] exactly (no transaction partly
/// visible) and k must not be below the last acknowledged transaction (nothing durable lost).
struct CrashWorkload {
    /// What a store holds after a transaction: every table's rows and every live blob.
    struct State: Equatable {
        var tables: [String: [UInt64: [UInt8]]] = [:]
        var blobs: [UInt64: [UInt8]] = [:]
    }

    /// One transaction's changes, replayable against a store and a model.
    enum Change {
        case createTable(String)
        case insert(table: String, value: [UInt8])
        case update(table: String, row: UInt64, value: [UInt8])
        case delete(table: String, row: UInt64)
        case storeBlob(table: String, bytes: [UInt8])
        case deleteBlob(table: String, row: UInt64, blob: UInt64)
    }

    struct Transaction {
        var changes: [Change]
        var checkpointAfter: Bool
    }

    let seed: UInt64
    private(set) var transactions: [Transaction] = []
    /// `states[k]` is the state after transaction k.
    private(set) var states: [State] = []

    init(seed: UInt64, transactionCount: Int = 110) {
        self.seed = seed
        var random = RepeatableRandomNumberGenerator(seed: seed)
        var state = State()
        var nextRow: [String: UInt64] = [:]
        var nextBlob: UInt64 = 1
        var tableCount = 0

        func bytes(_ count: Int) -> [UInt8] {
            // Half the values compress (repeated text), half do not.
            if random.next() % 2 == 0 { return random.bytes(count) }
            let word = Array("crash consistency ".utf8)
            return (0..<count).map { word[$0 % word.count] }
        }

        for k in 0..<transactionCount {
            var changes: [Change] = []
            var working = state
            func apply(_ change: Change) {
                changes.append(change)
                switch change {
                case .createTable(let name):
                    working.tables[name] = [:]
                    nextRow[name] = 1
                case .insert(let table, let value):
                    working.tables[table]![nextRow[table]!] = value
                    nextRow[table]! += 1
                case .update(let table, let row, let value):
                    working.tables[table]![row] = value
                case .delete(let table, let row):
                    working.tables[table]![row] = nil
                case .storeBlob(let table, let blobBytes):
                    working.blobs[nextBlob] = blobBytes
                    working.tables[table]![nextRow[table]!] = Self.blobReference(nextBlob)
                    nextRow[table]! += 1
                    nextBlob += 1
                case .deleteBlob(let table, let row, let blob):
                    working.blobs[blob] = nil
                    working.tables[table]![row] = nil
                }
            }
            if k == 0 {
                apply(.createTable("meta"))
                apply(.createTable("t0"))
                tableCount = 1
            } else if random.next() % 10 == 0 {
                apply(.createTable("t\(tableCount)"))
                tableCount += 1
            }
            let userTables = working.tables.keys.filter { $0 != "meta" }.sorted()
            for _ in 0..<(1 + Int(random.next() % 5)) {
                let table = userTables[Int(random.next() % UInt64(userTables.count))]
                let rows = working.tables[table]!.filter { !Self.isBlobReference($0.value) }.keys.sorted()
                let choice = rows.isEmpty ? 0 : random.next() % 10
                switch choice {
                case 0..<5:
                    // Mostly small rows; some long enough for overflow pages at a 512-byte page size.
                    let length = random.next() % 8 == 0 ? 200 + Int(random.next() % 3000) : Int(random.next() % 90)
                    apply(.insert(table: table, value: bytes(length)))
                case 5..<8:
                    let row = rows[Int(random.next() % UInt64(rows.count))]
                    apply(.update(table: table, row: row, value: bytes(Int(random.next() % 300))))
                default:
                    apply(.delete(table: table, row: rows[Int(random.next() % UInt64(rows.count))]))
                }
            }
            if random.next() % 12 == 0 {
                let table = userTables[Int(random.next() % UInt64(userTables.count))]
                apply(.storeBlob(table: table, bytes: bytes(Int(random.next() % 40_000))))
            }
            if random.next() % 20 == 0 {
                let references = working.tables.flatMap { table, rows in
                    rows.compactMap { row, value in Self.blobID(in: value).map { (table, row, $0) } }
                }.sorted { ($0.0, $0.1) < ($1.0, $1.1) }
                if let (table, row, blob) = references.first {
                    apply(.deleteBlob(table: table, row: row, blob: blob))
                }
            }
            working.tables["meta"]![1] = Self.counter(k)
            state = working
            transactions.append(Transaction(changes: changes, checkpointAfter: random.next() % 15 == 0))
            states.append(state)
        }
    }

    static func counter(_ k: Int) -> [UInt8] { withUnsafeBytes(of: UInt64(k).littleEndian) { Array($0) } }

    static func blobReference(_ blob: UInt64) -> [UInt8] {
        Array("blob:".utf8) + withUnsafeBytes(of: blob.littleEndian) { Array($0) }
    }

    static func isBlobReference(_ value: [UInt8]) -> Bool { blobID(in: value) != nil }

    static func blobID(in value: [UInt8]) -> UInt64? {
        guard value.count == 13, value.starts(with: Array("blob:".utf8)) else { return nil }
        return value[5...].reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Runs transaction `k` against a store.
    func run(_ k: Int, on store: Store) throws {
        try store.write { txn in
            if k == 0 {
                _ = try txn.createTable(named: "meta")
            }
            for change in transactions[k].changes {
                switch change {
                case .createTable(let name):
                    if name != "meta" { _ = try txn.createTable(named: name) }
                case .insert(let table, let value):
                    _ = try txn.insert(value, into: txn.table(named: table)!)
                case .update(let table, let row, let value):
                    try txn.update(RowID(row), in: txn.table(named: table)!, to: value)
                case .delete(let table, let row):
                    _ = try txn.delete(RowID(row), from: txn.table(named: table)!)
                case .storeBlob(let table, let blobBytes):
                    let blob = try txn.storeBlob(blobBytes)
                    _ = try txn.insert(Self.blobReference(blob.rawValue), into: txn.table(named: table)!)
                case .deleteBlob(let table, let row, let blob):
                    _ = try txn.deleteBlob(BlobID(blob))
                    _ = try txn.delete(RowID(row), from: txn.table(named: table)!)
                }
            }
            let meta = txn.table(named: "meta")!
            if k == 0 {
                _ = try txn.insert(Self.counter(0), into: meta)
            } else {
                try txn.update(RowID(1), in: meta, to: Self.counter(k))
            }
        }
        if transactions[k].checkpointAfter { try store.checkpoint() }
    }

    /// Reads a store's whole state and the transaction it ends with (-1: none).
    static func read(_ store: Store) throws -> (last: Int, state: State) {
        let snapshot = store.snapshot()
        var state = State()
        for name in snapshot.tableNames {
            let table = snapshot.table(named: name)!
            var rows: [UInt64: [UInt8]] = [:]
            try snapshot.forEachRow(in: table) { id, bytes in
                rows[id.rawValue] = Array(bytes)
                return true
            }
            state.tables[name] = rows
        }
        try snapshot.forEachBlob { blob, _ in
            state.blobs[blob.rawValue] = try snapshot.readBlob(blob)
            return true
        }
        guard let counter = state.tables["meta"]?[1] else { return (-1, state) }
        let last = counter.reversed().reduce(0) { $0 << 8 | Int($1) }
        return (last, state)
    }
}
