import StrataFormat

/// Fills in-memory leaves with rows given in increasing row-ID order, each leaf as full as a page holds it (the exact
/// size of FORMAT.md §4.2), each row's bytes copied once, from where they lie, into its leaf's packed values: recovery's
/// ``ReplayBatch`` feeds it row by row straight from the log, and ``BTree/buildLevels(above:owner:)`` builds the tree
/// over its leaves.
struct MemoryLeafBuilder {
    private let limits: BTreeLimits
    private let owner: UInt64
    private var leaves: [BTreeNode] = []
    private var keys: [UInt64] = []
    private var values = LeafValues()
    private var cellBytes = 0
    /// The rows of the last closed leaf: how much room the next one is given at once.
    private var previousLeafRows = 0
    /// The rows added.
    private(set) var count = 0
    /// The last row ID added.
    private(set) var lastKey: UInt64?

    /// - Parameter owner: the tag of the write transaction (or replay) the leaves belong to.
    init(limits: BTreeLimits, owner: UInt64) {
        self.limits = limits
        self.owner = owner
    }

    /// Adds row `key`, larger than every row ID added before (a precondition); its bytes are copied.
    mutating func append(_ key: UInt64, _ value: UnsafeRawBufferPointer) {
        precondition(lastKey.map { key > $0 } ?? true, "row IDs to build must strictly increase")
        let cell =
            value.count > limits.maximumInline
            ? PageFormat.overflowCellSize : PageFormat.leafCellHeaderSize &+ value.count
        if let first = keys.first,
            LeafPage.bodySize(count: keys.count &+ 1, first: first, last: key, cellBytes: cellBytes &+ cell)
                > limits.capacity
        {
            closeLeaf()
        }
        if keys.isEmpty, previousLeafRows > 0 {
            // Room for a leaf like the last one: a leaf grown a row at a time reallocated its arrays eight times.
            keys.reserveCapacity(previousLeafRows)
            values.reserveCapacity(byteCount: limits.capacity, count: previousLeafRows)
        }
        keys.append(key)
        values.append(inline: value)
        cellBytes &+= cell
        count &+= 1
        lastKey = key
    }

    /// The leaves, in row order (the last one closed); the builder is then empty.
    mutating func finish() -> [BTreeNode] {
        if !keys.isEmpty { closeLeaf() }
        defer { leaves = [] }
        return leaves
    }

    private mutating func closeLeaf() {
        leaves.append(
            BTreeNode(level: 0, keys: keys, values: values, children: [], owner: owner, bodySize: cellBytes))
        previousLeafRows = keys.count
        keys = []
        values = LeafValues()
        cellBytes = 0
    }
}
