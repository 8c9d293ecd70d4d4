import StrataLock

/// Decoded, immutable tree nodes by page number (row-tree nodes, ``BTreeNode``; index-tree nodes,
/// ``IndexNode``: one cache of each).
///
/// Pages never change once written (the page file is append-only), so a cached node is never stale.
/// Eviction is CLOCK: each hit sets a reference bit, and the hand clears bits until it finds an entry
/// not used since its last pass.
final class PageCache<Node: AnyObject & Sendable>: Sendable {
    private struct Entry {
        var page: UInt64
        var node: Node
        var referenced: Bool
    }

    private struct State {
        var slots: [UInt64: Int] = [:]
        var entries: [Entry] = []
        var hand = 0
        var hits = 0
        var misses = 0
    }

    private let capacity: Int
    private let state = Lock(State())

    init(capacity: Int) {
        self.capacity = max(16, capacity)
    }

    func node(at page: UInt64) -> Node? {
        state.withLock { state in
            guard let slot = state.slots[page] else {
                state.misses &+= 1
                return nil
            }
            state.hits &+= 1
            state.entries[slot].referenced = true
            return state.entries[slot].node
        }
    }

    /// Caches `node` as page `page`, replacing any entry (a failed checkpoint may have cached a page
    /// number that the next checkpoint then fills with other contents).
    func insert(_ node: Node, at page: UInt64) {
        state.withLock { state in
            if let slot = state.slots[page] {
                state.entries[slot] = Entry(page: page, node: node, referenced: false)
                return
            }
            if state.entries.count < capacity {
                state.slots[page] = state.entries.count
                state.entries.append(Entry(page: page, node: node, referenced: false))
                return
            }
            while state.entries[state.hand].referenced {
                state.entries[state.hand].referenced = false
                state.hand = (state.hand + 1) % state.entries.count
            }
            let victim = state.hand
            state.slots[state.entries[victim].page] = nil
            state.entries[victim] = Entry(page: page, node: node, referenced: false)
            state.slots[page] = victim
            state.hand = (victim + 1) % state.entries.count
        }
    }

    /// Forgets the nodes cached for `pages`: a checkpoint that failed cached them, and another open of the store
    /// (another process) may now write other contents at those page numbers, which this one would never overwrite
    /// in its cache.
    func forget(_ pages: Range<UInt64>) {
        guard !pages.isEmpty else { return }
        state.withLock { state in
            for slot in state.entries.indices where pages.contains(state.entries[slot].page) {
                state.slots[state.entries[slot].page] = nil
                // No page has this number; the entry waits, unreachable, for the hand to reuse its slot.
                state.entries[slot].page = .max
                state.entries[slot].referenced = false
            }
        }
    }

    /// Hits and misses since the cache was made.
    var counters: (hits: Int, misses: Int) { state.withLock { ($0.hits, $0.misses) } }
}
