import StrataStorage

/// The workload of the multi-process stress test: several writer processes (workers `0..<n`) commit into one store
/// at once, each transaction a pure function of its worker and its sequence number, and readers check that every
/// snapshot is a state some prefix of the commit order explains.
///
/// Transaction `j` of worker `k` (its `j`-th, from 1), in one write transaction:
/// 1. reads the total row (row 1 of ``workersTable``: how many transactions all workers committed) and worker `k`'s
///    row (row `k + 2`: its last sequence number and the row IDs of its live ledger rows, oldest first);
/// 2. when `j % blobEvery == 0`, stores a blob of ``blobBytes(worker:sequence:)``;
/// 3. inserts a ledger row (worker, `j`, the new total, the blob) into ``ledgerTable``;
/// 4. deletes the worker's oldest ledger row (and its blob) once it has more than ``liveLedgerRows``;
/// 5. writes the worker row and the total row back, one higher.
///
/// A state is valid when the total is the sum of the workers' sequence numbers, every worker's ledger rows are
/// exactly its last `min(j, liveLedgerRows)` transactions (at the row IDs its row names, with their blobs), every
/// ledger row's total is unique and no more than the total, and no blob is left that no ledger row names: a
/// transaction seen in part, or one lost while a later one of the same worker is seen, breaks one of them.
package enum SharedWorkload {
    package static let ledgerTable = "ledger"
    package static let workersTable = "workers"
    /// Ledger rows a worker keeps; older ones are deleted.
    package static let liveLedgerRows = 5
    /// A blob every `blobEvery` transactions of a worker.
    package static let blobEvery: UInt64 = 7
    static let totalRow = RowID(1)
    static func workerRow(_ worker: UInt32) -> RowID { RowID(UInt64(worker) + 2) }

    /// What a worker row holds.
    package struct Worker: Equatable, Sendable {
        package var sequence: UInt64 = 0
        /// Row IDs of the live ledger rows, oldest first.
        package var ledgerRows: [UInt64] = []
    }

    /// What a ledger row holds.
    package struct Ledger: Equatable, Sendable {
        package var worker: UInt32
        package var sequence: UInt64
        package var total: UInt64
        package var blob: UInt64
    }

    /// The blob of transaction `sequence` of `worker`: 3 to 67 KB, half of it repetitive.
    package static func blobBytes(worker: UInt32, sequence: UInt64) -> [UInt8] {
        var state = mix(UInt64(worker) << 40 ^ sequence)
        let count = 3_000 + Int(state % 64_000)
        return (0..<count).map { index in
            if index % 2 == 0 { return UInt8(truncatingIfNeeded: index / 64) }
            state = mix(state)
            return UInt8(truncatingIfNeeded: state)
        }
    }

    // MARK: - Writing

    /// Commits the worker's next transaction; returns its sequence number.
    package static func commitNext(worker: UInt32, store: Store) throws -> UInt64 {
        try store.write { txn in
            let ledger = try txn.table(named: ledgerTable) ?? txn.createTable(named: ledgerTable)
            let workers = try txn.table(named: workersTable) ?? txn.createTable(named: workersTable)
            let total = try txn.row(totalRow, in: workers).map { try decodeTotal($0) } ?? 0
            let before = try txn.row(workerRow(worker), in: workers)
            var state = try before.map { try decodeWorker($0) } ?? Worker()
            state.sequence += 1
            let blob =
                state.sequence % blobEvery == 0
                ? try txn.storeBlob(blobBytes(worker: worker, sequence: state.sequence)).rawValue : 0
            let row = try txn.insert(
                encode(Ledger(worker: worker, sequence: state.sequence, total: total + 1, blob: blob)), into: ledger)
            state.ledgerRows.append(row.rawValue)
            if state.ledgerRows.count > liveLedgerRows {
                let oldest = RowID(state.ledgerRows.removeFirst())
                guard let bytes = try txn.row(oldest, in: ledger) else {
                    throw WorkloadMismatch(description: "worker \(worker): its ledger row \(oldest) is missing")
                }
                let old = try decodeLedger(bytes)
                if old.blob != 0, try !txn.deleteBlob(BlobID(old.blob)) {
                    throw WorkloadMismatch(description: "worker \(worker): blob \(old.blob) is missing")
                }
                _ = try txn.delete(oldest, from: ledger)
            }
            if before == nil {
                try txn.insert(encode(state), into: workers, at: workerRow(worker))
            } else {
                try txn.update(workerRow(worker), in: workers, to: encode(state))
            }
            if total == 0 {
                try txn.insert(encodeTotal(1), into: workers, at: totalRow)
            } else {
                try txn.update(totalRow, in: workers, to: encodeTotal(total + 1))
            }
            return state.sequence
        }
    }

    // MARK: - Checking

    /// What a check found: each worker's sequence number, the total, and what is wrong.
    package struct Check: Sendable {
        package var sequences: [UInt32: UInt64] = [:]
        package var total: UInt64 = 0
        package var problems: [String] = []

        /// Nothing seen yet.
        package init() {}
    }

    /// Checks one snapshot against the rules in the type's description (blob contents too when `readingBlobs`).
    package static func check(_ snapshot: Snapshot, readingBlobs: Bool = true) -> Check {
        var result = Check()
        func problem(_ text: String) { if result.problems.count < 20 { result.problems.append(text) } }
        do {
            guard let workers = snapshot.table(named: workersTable) else {
                if snapshot.table(named: ledgerTable) != nil { problem("a ledger without a workers table") }
                return result
            }
            var states: [UInt32: Worker] = [:]
            try snapshot.forEachRow(in: workers) { row, bytes in
                if row == totalRow {
                    result.total = try decodeTotal(Array(bytes))
                } else {
                    states[UInt32(row.rawValue - 2)] = try decodeWorker(Array(bytes))
                }
                return true
            }
            result.sequences = states.mapValues(\.sequence)
            let sum = states.values.reduce(0) { $0 + $1.sequence }
            if sum != result.total { problem("the total is \(result.total), the workers' sequences add up to \(sum)") }
            let ledger = snapshot.table(named: ledgerTable)
            var ledgerRows: [UInt64: Ledger] = [:]
            if let ledger {
                try snapshot.forEachRow(in: ledger) { row, bytes in
                    ledgerRows[row.rawValue] = try decodeLedger(Array(bytes))
                    return true
                }
            }
            var totals = Set<UInt64>()
            var named = Set<UInt64>()
            for (worker, state) in states.sorted(by: { $0.key < $1.key }) {
                let live = Int(min(state.sequence, UInt64(liveLedgerRows)))
                if state.ledgerRows.count != live {
                    problem("worker \(worker) at \(state.sequence) names \(state.ledgerRows.count) ledger rows")
                }
                for (position, row) in state.ledgerRows.enumerated() {
                    named.insert(row)
                    let sequence = state.sequence - UInt64(state.ledgerRows.count - 1 - position)
                    guard let entry = ledgerRows[row] else {
                        problem("worker \(worker): ledger row \(row) of transaction \(sequence) is missing")
                        continue
                    }
                    if entry.worker != worker || entry.sequence != sequence {
                        problem("ledger row \(row) is \(entry), expected worker \(worker) transaction \(sequence)")
                    }
                    if entry.total > result.total || !totals.insert(entry.total).inserted {
                        problem("ledger row \(row) has total \(entry.total) (the total is \(result.total))")
                    }
                    let wantsBlob = sequence % blobEvery == 0
                    if wantsBlob != (entry.blob != 0) { problem("ledger row \(row): blob \(entry.blob)") }
                    if readingBlobs, entry.blob != 0 {
                        let bytes = try snapshot.readBlob(BlobID(entry.blob))
                        if bytes != blobBytes(worker: worker, sequence: sequence) {
                            problem("blob \(entry.blob) of worker \(worker) transaction \(sequence) differs")
                        }
                    }
                }
            }
            for row in ledgerRows.keys where !named.contains(row) { problem("ledger row \(row) is named by nobody") }
            let liveBlobs = Set(ledgerRows.values.map(\.blob).filter { $0 != 0 })
            try snapshot.forEachBlob { blob, _ in
                if !liveBlobs.contains(blob.rawValue) { problem("\(blob) is named by no ledger row") }
                return true
            }
        } catch {
            problem("reading the snapshot: \(error)")
        }
        return result
    }

    // MARK: - Encoding

    static func encode(_ worker: Worker) -> [UInt8] {
        var bytes = littleEndian(worker.sequence)
        for row in worker.ledgerRows { bytes += littleEndian(row) }
        return bytes
    }

    static func decodeWorker(_ bytes: [UInt8]) throws -> Worker {
        guard bytes.count >= 8, bytes.count % 8 == 0 else { throw malformed("worker row", bytes) }
        let words = stride(from: 0, to: bytes.count, by: 8).map { readLittleEndian(bytes, at: $0) }
        return Worker(sequence: words[0], ledgerRows: Array(words[1...]))
    }

    static func encode(_ ledger: Ledger) -> [UInt8] {
        // Some padding, so that ledger rows fill pages and checkpoints write a few.
        let padding = Int(mix(UInt64(ledger.worker) << 40 ^ ledger.sequence) % 200)
        return Array("LDGR".utf8) + littleEndian(UInt64(ledger.worker)) + littleEndian(ledger.sequence)
            + littleEndian(ledger.total) + littleEndian(ledger.blob) + [UInt8](repeating: 0x2E, count: padding)
    }

    static func decodeLedger(_ bytes: [UInt8]) throws -> Ledger {
        guard bytes.count >= 36, bytes.starts(with: Array("LDGR".utf8)) else { throw malformed("ledger row", bytes) }
        return Ledger(
            worker: UInt32(truncatingIfNeeded: readLittleEndian(bytes, at: 4)),
            sequence: readLittleEndian(bytes, at: 12),
            total: readLittleEndian(bytes, at: 20), blob: readLittleEndian(bytes, at: 28))
    }

    static func encodeTotal(_ total: UInt64) -> [UInt8] { littleEndian(total) }

    static func decodeTotal(_ bytes: [UInt8]) throws -> UInt64 {
        guard bytes.count == 8 else { throw malformed("total row", bytes) }
        return readLittleEndian(bytes, at: 0)
    }

    private static func malformed(_ what: String, _ bytes: [UInt8]) -> WorkloadMismatch {
        WorkloadMismatch(description: "malformed \(what) of \(bytes.count) bytes: \(bytes.prefix(16))")
    }

    private static func littleEndian(_ value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }

    private static func readLittleEndian(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        (0..<8).reduce(0) { $0 | UInt64(bytes[offset + $1]) << (8 * UInt64($1)) }
    }

    private static func mix(_ value: UInt64) -> UInt64 { KillWorkload.mix(value) }
}
