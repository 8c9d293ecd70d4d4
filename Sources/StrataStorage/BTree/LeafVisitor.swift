import StrataFormat

/// What a put or delete of the tree shows the value it finds under its key, where it lies in the leaf, before the leaf
/// changes (``BTree/put(_:key:value:owner:onlyReplacing:seeing:)``, ``BTree/delete(_:key:owner:seeing:)``).
protocol LeafVisitor {
    /// Sees the value under the key: nil when there is none (a put then inserts). Throwing stops the put or delete
    /// with the tree's contents as they were.
    mutating func visit(_ old: LeafCell?) throws
}

/// Keeps a copy of the value a put replaces or a delete removes.
struct LeafCopier: LeafVisitor {
    private(set) var value: LeafValue?

    mutating func visit(_ old: LeafCell?) { value = old.map(LeafValue.init) }
}
