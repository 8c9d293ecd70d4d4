import StrataFormat

/// The sizes that decide when a node splits or merges, derived from the page size.
struct BTreeLimits: Sendable {
    /// Bytes a node's body may take.
    let capacity: Int
    /// Values longer than this go to overflow chains when written.
    let maximumInline: Int
    /// A node smaller than this after a delete is merged with a neighbour when both fit one page.
    let mergeThreshold: Int

    init(pageSize: Int) {
        capacity = PageFormat.bodyCapacity(pageSize: pageSize)
        maximumInline = PageFormat.maximumInlineValue(pageSize: pageSize)
        mergeThreshold = capacity / 4
    }

    /// The most bytes a leaf cell takes besides its row ID: a value at the inline limit, or an overflow reference.
    var maximumCellSize: Int { max(PageFormat.leafCellHeaderSize + maximumInline, PageFormat.overflowCellSize) }

    /// The most children an internal node holds.
    var maximumChildren: Int { (capacity - PageFormat.internalFirstChildSize) / PageFormat.internalEntrySize + 1 }

    @inline(__always)
    func cellSize(_ value: LeafValue) -> Int { value.cellSize(maximumInline: maximumInline) }

    /// The cell size of a leaf's value `index`.
    @inline(__always)
    func cellSize(_ leaf: BTreeNode, _ index: Int) -> Int { leaf.values.cellSize(index, maximumInline: maximumInline) }

    /// The cell sizes of a leaf's values `range`, added up.
    func cellBytes(_ leaf: BTreeNode, _ range: Range<Int>) -> Int {
        leaf.values.cellBytes(range, maximumInline: maximumInline)
    }

    /// The body a node takes once encoded: a leaf's cells plus its row IDs (which cost what their spread
    /// decides, §4.2); an internal node's `bodySize`.
    @inline(__always)
    func encodedSize(_ node: BTreeNode) -> Int {
        guard node.isLeaf else { return node.bodySize }
        guard let (count, first, last) = node.leafSpread else { return node.bodySize }
        return LeafPage.bodySize(count: count, first: first, last: last, cellBytes: node.bodySize)
    }

    /// Whether the node fits one page.
    @inline(__always)
    func fits(_ node: BTreeNode) -> Bool { encodedSize(node) <= capacity }

    static func internalBodySize(childCount: Int) -> Int { InternalPage.bodySize(childCount: childCount) }
}
