import Foundation
import StrataFormat
import StrataIO
import StrataStorage
import StrataTestSupport
import Testing

/// Committed secondary-index nodes read on many threads while a writer commits (`IndexNode` is
/// `@unchecked Sendable` on the same promise as `BTreeNode`: only its own, not yet committed, transaction
/// changes a node): snapshots on four threads scan an index whose entries every commit moves, and whose
/// nodes checkpoints turn into pages that a small page cache decodes and evicts under the readers. Run under
/// ThreadSanitizer by `Scripts/tsan`.
@Suite struct IndexNodeConcurrencyTests {
    typealias Field = RowRecord.Field

    /// An account row: (bucket, balance). The index is on both, so moving money moves two entries.
    static func account(bucket: Int64, balance: Int64) -> [UInt8] {
        RowRecord.encode(entityID: 1, rowVersion: 1, fields: [.int64(bucket), .int64(balance)])
    }

    static func fields(_ bytes: [UInt8]) throws -> (bucket: Int64, balance: Int64) {
        let (_, fields) = try RowRecord.decodeAll(bytes)
        guard fields.count == 2, case .int64(let bucket) = fields[0], case .int64(let balance) = fields[1] else {
            throw ConcurrencyCheckFailure("an account row holds \(fields)")
        }
        return (bucket, balance)
    }

    /// Every committed state holds the same total and one entry per row whose key is the row's fields: a
    /// reader that sees a torn or stale index node finds a wrong total, a wrong count, an entry out of
    /// order or an entry that disagrees with its row.
    @Test func snapshotsOnFourThreadsScanAnIndexWhileAWriterMovesItsEntriesAndCheckpoints() throws {
        let store = try Store.openForTesting(
            TemporaryStore.makeFileSystem(),
            configuration: .testing(pageSize: 512, durability: .off, pageCacheCapacity: 16)
        )
        let accounts = 200
        let total = Int64(accounts) * 1_000
        let buckets: Int64 = 8
        let (table, index, initial) = try store.write { txn in
            let table = try txn.createTable(named: "accounts")
            let index = try txn.createIndex(named: "accounts.bucket,balance", on: table, fields: [0, 1])
            let rows = try (0..<accounts).map { number in
                try txn.insert(Self.account(bucket: Int64(number) % buckets, balance: 1_000), into: table)
            }
            return (table, index, rows)
        }
        let result = runReaders(4) {
            var random = RepeatableRandomNumberGenerator(seed: 0x1DE4)
            var live = initial
            func move(_ txn: WriteTransaction, from source: Int, to target: Int, all: Bool) throws {
                guard source != target, let sourceBytes = try txn.row(live[source], in: table),
                    let targetBytes = try txn.row(live[target], in: table)
                else { return }
                let (sourceAccount, targetAccount) = (try Self.fields(sourceBytes), try Self.fields(targetBytes))
                let amount = all ? sourceAccount.balance : Int64.random(in: 0...sourceAccount.balance, using: &random)
                try txn.update(
                    live[source], in: table,
                    to: Self.account(
                        bucket: Int64.random(in: 0..<buckets, using: &random), balance: sourceAccount.balance - amount))
                try txn.update(
                    live[target], in: table,
                    to: Self.account(bucket: targetAccount.bucket, balance: targetAccount.balance + amount))
            }
            for step in 0..<300 {
                try store.write { txn in
                    for _ in 0..<2 {
                        let source = Int.random(in: 0..<live.count, using: &random)
                        try move(txn, from: source, to: Int.random(in: 0..<live.count, using: &random), all: false)
                    }
                    if step % 3 == 0 {
                        live.append(
                            try txn.insert(Self.account(bucket: Int64(step) % buckets, balance: 0), into: table))
                        try move(
                            txn, from: Int.random(in: 0..<live.count - 1, using: &random), to: live.count - 1,
                            all: false)
                    }
                    if step % 4 == 0 {
                        let closing = Int.random(in: 0..<live.count, using: &random)
                        try move(txn, from: closing, to: (closing + 1) % live.count, all: true)
                        _ = try txn.delete(live.remove(at: closing), from: table)
                    }
                }
                if step % 25 == 24 { try store.checkpoint() }
            }
        } read: { reader in
            let snapshot = store.snapshot()
            var entries: [IndexEntry] = []
            try snapshot.forEachIndexEntry(in: index) { entry in
                entries.append(entry)
                return true
            }
            var sum: Int64 = 0
            for (position, entry) in entries.enumerated() {
                guard let bytes = try snapshot.row(entry.row, in: table) else {
                    throw ConcurrencyCheckFailure("an entry names row \(entry.row), which the snapshot lacks")
                }
                let account = try Self.fields(bytes)
                guard entry.key == [.int64(account.bucket), .int64(account.balance)] else {
                    throw ConcurrencyCheckFailure(
                        "the entry of row \(entry.row) holds \(entry.key), the row \(account)")
                }
                if position > 0 {
                    let previous = entries[position - 1]
                    let order = IndexKey.compare(IndexKey.encode(previous.key), IndexKey.encode(entry.key))
                    guard order < 0 || (order == 0 && previous.row < entry.row) else {
                        throw ConcurrencyCheckFailure("entries out of order at \(position)")
                    }
                }
                sum += account.balance
            }
            guard sum == total else { throw ConcurrencyCheckFailure("the balances add up to \(sum), not \(total)") }
            let rows = try snapshot.rowCount(in: table)
            guard entries.count == rows, try snapshot.indexEntryCount(index) == rows else {
                throw ConcurrencyCheckFailure("\(entries.count) entries, \(rows) rows")
            }
            // A prefix search in the same snapshot finds the scan's rows of one bucket.
            let bucket = Int64(reader) % buckets
            let inBucket = entries.filter { $0.key.first == .int64(bucket) }.map(\.row)
            guard try snapshot.rowIDs(in: index, matching: [.int64(bucket)]) == inBucket else {
                throw ConcurrencyCheckFailure("a search of bucket \(bucket) differs from the scan")
            }
        }
        #expect(result.failures == [])
        #expect(result.reads >= 12)
        #expect(store.statistics.checkpointCount >= 12)
        #expect(try store.verify().isClean)
        try store.close()
    }
}
