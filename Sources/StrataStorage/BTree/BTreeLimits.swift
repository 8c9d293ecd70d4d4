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

    @inline(__always)
    func cellSize(_ value: LeafValue) -> Int { value.cellSize(maximumInline: maximumInline) }

    static func internalBodySize(childCount: Int) -> Int { InternalPage.bodySize(childCount: childCount) }
}
