import Foundation
import StrataIO
import StrataLock
import StrataStorage
import StrataTestSupport
import Testing

/// Committed B+tree nodes read on many threads while a writer commits (`BTreeNode` is `@unchecked Sendable`
/// on the promise that only its own, not yet committed, transaction changes a node): snapshots on four
/// threads walk and search trees whose paths the writer keeps copying and changing, and whose nodes its
/// checkpoints turn into pages that a small page cache decodes and evicts under the readers. Run under
/// ThreadSanitizer by `Scripts/tsan`.
@Suite struct BTreeNodeConcurrencyTests {
    /// A row: its balance (8 bytes, little-endian), its own row ID (8 bytes, so a reader can tell a row
    /// from another's bytes) and some padding of varying length, so leaves split and merge.
    static func row(_ id: RowID, balance: Int64, padding: Int) -> [UInt8] {
        withUnsafeBytes(of: balance.littleEndian, Array.init)
            + withUnsafeBytes(of: id.rawValue.littleEndian, Array.init)
            + [UInt8](repeating: UInt8(truncatingIfNeeded: padding), count: padding)
    }

    static func decode(_ bytes: UnsafeRawBufferPointer) -> (balance: Int64, id: UInt64)? {
        guard bytes.count >= 16 else { return nil }
        return (
            Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: 0, as: Int64.self)),
            UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        )
    }

    /// The writer moves money between rows (and opens and closes accounts), so every committed state holds
    /// the same total: a reader that sees a torn or stale node sees a wrong total, a wrong count, or a row
    /// under another row's ID.
    @Test func snapshotsOnFourThreadsReadWhileAWriterCopiesAndCheckpointsTheSamePaths() throws {
        let store = try Store.openForTesting(
            TemporaryStore.makeFileSystem(),
            configuration: .testing(pageSize: 512, durability: .off, pageCacheCapacity: 16)
        )
        let accounts = 200
        let total = Int64(accounts) * 1_000
        let table = try store.write { txn in
            let table = try txn.createTable(named: "accounts")
            for index in 0..<accounts {
                let id = try txn.reserveRowIDs(1, in: table)
                try txn.insert(Self.row(id, balance: 1_000, padding: index % 40), into: table, at: id)
            }
            return table
        }
        let result = runReaders(4) {
            var random = RepeatableRandomNumberGenerator(seed: 0xB7EE)
            var live = try store.write { txn in
                var rows: [RowID] = []
                try txn.forEachRow(in: table) { row, _ in
                    rows.append(row)
                    return true
                }
                return rows
            }
            for step in 0..<300 {
                try store.write { txn in
                    try Self.transfer(txn, table, &live, &random)
                    if step % 3 == 0 {  // Open an account with money taken from another.
                        let id = try txn.reserveRowIDs(1, in: table)
                        try txn.insert(Self.row(id, balance: 0, padding: step % 50), into: table, at: id)
                        live.append(id)
                        try Self.transfer(txn, table, &live, &random, to: live.count - 1)
                    }
                    if step % 4 == 0 {  // Close an account, its money going to another.
                        let closing = Int.random(in: 0..<live.count, using: &random)
                        try Self.transfer(txn, table, &live, &random, from: closing, all: true)
                        _ = try txn.delete(live.remove(at: closing), from: table)
                    }
                }
                if step % 25 == 24 { try store.checkpoint() }
            }
        } read: { reader in
            let snapshot = store.snapshot()
            var sum: Int64 = 0
            var rows: [RowID] = []
            try snapshot.forEachRow(in: table) { row, bytes in
                guard let (balance, id) = Self.decode(bytes), id == row.rawValue else {
                    throw ConcurrencyCheckFailure("row \(row) holds another row's bytes")
                }
                sum += balance
                rows.append(row)
                return true
            }
            guard sum == total else { throw ConcurrencyCheckFailure("the balances add up to \(sum), not \(total)") }
            guard rows.count == (try snapshot.rowCount(in: table)) else {
                throw ConcurrencyCheckFailure("a scan found \(rows.count) rows, the count says otherwise")
            }
            // Searches from the root, and a reverse walk, in the same snapshot.
            for row in rows where row.rawValue % 7 == UInt64(reader) {
                guard try snapshot.withRow(row, in: table, { Self.decode($0)?.id }) == row.rawValue else {
                    throw ConcurrencyCheckFailure("row \(row) is not found by a search")
                }
            }
            var reversed: [RowID] = []
            try snapshot.forEachRow(in: table, reverse: true) { row, _ in
                reversed.append(row)
                return true
            }
            guard reversed == rows.reversed() else {
                throw ConcurrencyCheckFailure("a reverse walk differs from the forward one")
            }
        }
        #expect(result.failures == [])
        #expect(result.reads >= 12)
        #expect(store.statistics.checkpointCount >= 12)
        #expect(try store.verify().isClean)
        try store.close()
    }

    /// Moves a random amount (or all of it) from one live row to another, both random unless given.
    static func transfer(
        _ txn: WriteTransaction, _ table: TableID, _ live: inout [RowID],
        _ random: inout RepeatableRandomNumberGenerator,
        from: Int? = nil, to: Int? = nil, all: Bool = false
    ) throws {
        guard live.count > 1 else { return }
        let source = from ?? Int.random(in: 0..<live.count, using: &random)
        var target = to ?? Int.random(in: 0..<live.count, using: &random)
        if target == source { target = (source + 1) % live.count }
        guard let sourceBytes = try txn.row(live[source], in: table),
            let targetBytes = try txn.row(live[target], in: table)
        else { throw ConcurrencyCheckFailure("a live row is missing from the writer's transaction") }
        let sourceBalance = sourceBytes.withUnsafeBytes { Self.decode($0)!.balance }
        let targetBalance = targetBytes.withUnsafeBytes { Self.decode($0)!.balance }
        let amount = all ? sourceBalance : Int64.random(in: 0...max(0, sourceBalance), using: &random)
        let sourcePadding = Int.random(in: 0..<60, using: &random)
        try txn.update(
            live[source], in: table, to: Self.row(live[source], balance: sourceBalance - amount, padding: sourcePadding)
        )
        try txn.update(
            live[target], in: table,
            to: Self.row(live[target], balance: targetBalance + amount, padding: targetBytes.count - 16))
    }
}
