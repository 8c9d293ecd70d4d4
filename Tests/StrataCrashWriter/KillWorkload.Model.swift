import StrataStorage

extension KillWorkload {
    /// A live row of the model: its version and its blob.
    package struct Row: Equatable, Sendable {
        package var version: UInt32
        package var blob: BlobID?
    }

    /// What one transaction does, resolved against the model state before it.
    package struct Step: Sendable {
        /// One row's change: its transaction index and the row after the change (for a delete, as it was).
        package struct Change: Sendable {
            package var index: UInt64
            package var row: Row
        }

        /// The transaction's index.
        package var index: UInt64
        /// Updated rows, in order, with their new versions.
        package var updates: [Change] = []
        /// Deleted rows, with the state they had when deleted.
        package var deletes: [Change] = []
        /// The row inserted (its blob, if any, is stored by this transaction).
        package var inserted: Row
    }

    /// The committed state after the first ``transactionCount`` transactions of the workload.
    ///
    /// Blob IDs are allocated in increasing order from 1 and never reused once committed, and only the
    /// workload stores blobs, so the k-th blob transaction's blob is `BlobID(k)`.
    package struct Model: Sendable {
        /// How many transactions (indices `0..<transactionCount`) the state contains.
        package private(set) var transactionCount: UInt64 = 0
        /// The live rows, by transaction index.
        package private(set) var rows: [UInt64: Row] = [:]
        /// How many blobs were ever stored.
        package private(set) var blobsStored: UInt64 = 0

        /// The empty state.
        package init() {}

        /// The state after `transactionCount` transactions.
        package init(transactionCount: UInt64) {
            while self.transactionCount < transactionCount { next() }
        }

        /// Applies the next transaction and returns what it does.
        @discardableResult
        package mutating func next() -> Step {
            let index = transactionCount
            var step = Step(index: index, inserted: Row(version: 0, blob: nil))
            for target in KillWorkload.updateCandidates(index: index) {
                guard var row = rows[target] else { continue }
                row.version += 1
                rows[target] = row
                step.updates.append(Step.Change(index: target, row: row))
            }
            if let target = KillWorkload.deleteCandidate(index: index), let row = rows.removeValue(forKey: target) {
                step.deletes.append(Step.Change(index: target, row: row))
            }
            if KillWorkload.storesBlob(index: index) {
                blobsStored += 1
                step.inserted.blob = BlobID(blobsStored)
            }
            rows[index] = step.inserted
            transactionCount += 1
            return step
        }
    }
}
