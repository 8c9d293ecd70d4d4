import StrataFormat
import StrataStorage
import StrataTestSupport
import Testing

/// Seeded random transactions applied to a store and to a ``ReferenceModel`` side by side: inserts,
/// updates and deletes of values from empty to several pages long, table creation and (rarely) drops.
struct RandomWorkload {
    var random: RepeatableRandomNumberGenerator
    /// The model of every committed transaction so far.
    private(set) var model = ReferenceModel()
    let pageSize: Int
    /// Relative weights of createTable, dropTable, insert, update, delete.
    var weights = (create: 2, drop: 1, insert: 10, update: 4, delete: 4)
    /// The largest value a transaction writes.
    var largeValueSize = 3 * 4096
    /// How many values in a hundred are longer than the inline limit (overflow chains).
    var overflowPercent = 10
    private var tablesMade = 0

    init(seed: UInt64, pageSize: Int) {
        random = RepeatableRandomNumberGenerator(seed: seed)
        self.pageSize = pageSize
    }

    /// Continues from `model` (the state a crash left) instead of the model of every commit so far.
    mutating func resetModel(to model: ReferenceModel) {
        self.model = model
    }

    /// A value of a random size: mostly short, sometimes up to the inline limit, sometimes needing an
    /// overflow chain. Its first bytes spell where it was written, so misplaced values show.
    mutating func value(tag: UInt64) -> [UInt8] {
        let maximumInline = PageFormat.maximumInlineValue(pageSize: pageSize)
        let length: Int
        let draw = Int.random(in: 0..<100, using: &random)
        if draw < overflowPercent {
            length = Int.random(in: (maximumInline + 1)...max(maximumInline + 1, largeValueSize), using: &random)
        } else if draw < overflowPercent + 5 {
            length = 0
        } else if draw < 75 {
            length = Int.random(in: 1...40, using: &random)
        } else {
            length = Int.random(in: 41...maximumInline, using: &random)
        }
        var bytes = random.bytes(length)
        for index in 0..<min(8, length) { bytes[index] = UInt8(truncatingIfNeeded: tag >> (8 * UInt64(index))) }
        return bytes
    }

    /// Runs one transaction of 1 to `maximumOperations` random operations and records it in the model
    /// once committed.
    /// - Returns: whether the transaction changed anything (an empty one writes no log record).
    @discardableResult
    mutating func runTransaction(on store: Store, maximumOperations: Int = 6) throws -> Bool {
        var next = model
        var generator = random
        var changed = false
        let operations = Int.random(in: 1...maximumOperations, using: &generator)
        var plan: [Int] = []
        for _ in 0..<operations { plan.append(Int.random(in: 0..<1_000_000, using: &generator)) }
        random = generator
        try store.write { txn in
            for draw in plan {
                try self.apply(draw: draw, to: txn, model: &next, changed: &changed)
            }
        }
        model = next
        return changed
    }

    /// One operation chosen by `draw`, applied to the transaction and the model.
    private mutating func apply(
        draw: Int,
        to txn: WriteTransaction,
        model next: inout ReferenceModel,
        changed: inout Bool
    ) throws {
        let total = weights.create + weights.drop + weights.insert + weights.update + weights.delete
        var pick = draw % total
        let names = next.tables.keys.sorted()
        if names.isEmpty || pick < weights.create {
            tablesMade += 1
            // Sometimes reuse the name of a dropped table: it must get a new ID.
            let name = "table-\(tablesMade % 7 == 0 && tablesMade > 7 ? tablesMade - 7 : tablesMade)"
            guard next.tables[name] == nil else { return }
            let id = try txn.createTable(named: name)
            #expect(id == next.createTable(named: name), "table \(name) got ID \(id.rawValue)")
            changed = true
            return
        }
        pick -= weights.create
        let name = names.randomElement(using: &random)!
        let table = next.tables[name]!
        if pick < weights.drop {
            // Drop rarely, and only small tables, so that the store keeps some data.
            guard table.rows.count < 30, names.count > 1 else { return }
            try txn.dropTable(table.id)
            next.dropTable(named: name)
            changed = true
            return
        }
        pick -= weights.drop
        if pick < weights.insert || table.rows.isEmpty {
            let bytes = value(tag: table.nextRowID)
            let row = try txn.insert(bytes, into: table.id)
            #expect(row == next.insert(bytes, into: name), "insert into \(name) got \(row)")
            changed = true
            return
        }
        pick -= weights.insert
        let row = RowID(table.rows.keys.randomElement(using: &random)!)
        if pick < weights.update {
            let bytes = value(tag: row.rawValue)
            try txn.update(row, in: table.id, to: bytes)
            next.update(row, in: name, to: bytes)
        } else {
            #expect(try txn.delete(row, from: table.id))
            next.delete(row, from: name)
        }
        changed = true
    }
}
