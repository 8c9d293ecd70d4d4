import StrataFormat
import StrataLock

/// Tables a recovery replay gathered and left unbuilt (FORMAT.md, "Recovery"): their rows stay in the log, where
/// ``ReplayBatch`` noted them, and their trees are built the first time something needs them, once, for every state
/// that carries them.
///
/// Opening a store after a crash used to build every table the log filled (the row tree and each index tree) before it
/// returned: most of W10's open. A table gathered in increasing row-ID order knows its row count and next row ID
/// without a tree, so open sets those and leaves the trees to this object. The states open publishes carry it
/// (``StoreState/pending``) with the pending tables' roots (and their indexes' roots) nil; ``resolve(_:)`` puts the built
/// roots in. Every state that carries it has the same rows in those tables (all of them precede the open's LSN, and
/// anything that changes such a table resolves its state first), so one build serves them all.
///
/// Who resolves: ``Snapshot`` when it reads anything but the catalog and row counts; ``StoreState`` before it changes a
/// pending table (a catch-up or a replayed transaction); ``Store`` before a write transaction, a checkpoint and
/// ``Store/verify()`` (``Store/buildPendingTables()``), which also puts the built trees into the states it shares. Nothing
/// is written before the checkpoint, and the log that holds the rows stays valid until that checkpoint's root record is
/// durable: a crash at any point recovers from the log.
final class PendingTables: Sendable {
    /// The built roots of the pending tables and of their indexes.
    struct Built: Sendable {
        var tables: [TableID: NodeRef?] = [:]
        var indexes: [IndexID: (root: IndexNodeRef?, entryCount: UInt64)] = [:]
    }

    private enum Phase: Sendable {
        /// The gathered puts, and the state open left (the pending tables' and indexes' states as the batch needs
        /// them).
        case gathered(ReplayBatch, base: StoreState)
        case built(Built)
        /// The build found a put it cannot apply (a row an index cannot take, in a log whose checksums were made
        /// valid again): every read of the tables and every write reports it, and the log keeps every commit.
        case failed(StorageError)
    }

    /// The tables whose trees are not built in a state that carries this object.
    let tables: Set<TableID>
    private let tree: BTree
    /// The replay's in-place tag: the nodes built belong to the replay, as if open had built them.
    private let owner: UInt64
    private let phase: Lock<Phase>

    /// - Parameters:
    ///   - batch: the gathered tables, each of whose rows came in increasing order.
    ///   - base: the state at the end of the replay, with those tables' row counts and next row IDs set.
    init(batch: ReplayBatch, tables: Set<TableID>, base: StoreState, tree: BTree, owner: UInt64) {
        self.tables = tables
        self.tree = tree
        self.owner = owner
        self.phase = Lock(.gathered(batch, base: base))
    }

    /// Whether the trees were built (by anyone). False, without waiting, while a build runs: a snapshot taken then
    /// (``Store/snapshot()``) must not wait for the build behind its lock unless it reads the trees. Taking the
    /// snapshot that follows `open` once waited for the whole build the checkpoint after a large recovery had begun
    /// (W10: 0.6 s instead of 0.02 s, one open in five).
    var isBuilt: Bool {
        let built = phase.withLockIfAvailable { phase -> Bool in
            if case .built = phase { return true }
            return false
        }
        return built ?? false
    }

    /// The built roots, built now (under this object's lock: other callers wait for it) if they were not yet.
    ///
    /// - Throws: ``StorageError/corruption(file:offset:reason:)`` naming the log record of a put that cannot be
    ///   applied (or that reads back otherwise, ``ReplayedLog``), every time it is asked once the build found one;
    ///   ``StorageError/io(_:)`` when the log cannot be read again (the next call tries again).
    func built() throws -> Built {
        try phase.withLock { phase throws -> Built in
            switch phase {
            case .built(let built): return built
            case .failed(let error): throw error
            case .gathered(var batch, let base):
                var state = base
                state.pending = nil
                do { try batch.applyAll(to: &state, tree: tree, owner: owner) } catch let error as StorageError {
                    // A put that cannot be applied stays so; an I/O error reading the log again may pass.
                    if case .corruption = error { phase = .failed(error) }
                    throw error
                }
                var built = Built()
                for id in tables {
                    let table = state.tables[id]!
                    built.tables[id] = table.root
                    for index in table.indexes {
                        let index = state.indexes[index.id]!
                        built.indexes[index.id] = (index.root, index.entryCount)
                    }
                }
                // The gathered rows are in the built leaves now: only the roots are kept.
                phase = .built(built)
                return built
            }
        }
    }

    /// `state` with the built trees of the pending tables in place (built now if needed), carrying this object no more;
    /// any other state as it is.
    ///
    /// - Throws: what ``built()`` throws.
    func resolve(_ state: StoreState) throws -> StoreState {
        guard state.pending === self else { return state }
        let built = try built()
        var resolved = state
        resolved.pending = nil
        for (id, root) in built.tables { resolved.tables[id]?.root = root }
        for (id, index) in built.indexes {
            resolved.indexes[id]?.root = index.root
            resolved.indexes[id]?.entryCount = index.entryCount
        }
        return resolved
    }
}
