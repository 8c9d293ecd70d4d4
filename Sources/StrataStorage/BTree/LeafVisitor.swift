import StrataFormat

/// What a put or delete of the tree shows the value it finds under its key, where it lies in the leaf, before the leaf
/// changes (``BTree/put(_:key:value:owner:onlyReplacing:seeing:)``, ``BTree/delete(_:key:owner:seeing:)``).
protocol LeafVisitor {
    /// Sees the value under the key: nil when there is none (a put then inserts). Throwing stops the put or delete
    /// with the tree's contents as they were.
    mutating func visit(_ old: LeafCell?) throws
}

/// What a put stores under its key, decided where the descent finds the key's value in the leaf, before the leaf
/// changes (``BTree/put(_:key:owner:onlyReplacing:writing:)``): index maintenance that compares the old row with the new
/// shares the put's one descent. (A rewrite by a caller's closure goes through ``BTree/ownedLeaf(_:key:owner:)``.)
protocol LeafWriter {
    /// The value to store in place of `old` (nil: the key has none, and the put inserts). Throwing stops the put with
    /// the tree's contents as they were.
    mutating func value(replacing old: LeafCell?) throws -> LeafValue
}

/// Stores a value known before the descent, showing the value it replaces to `visitor` first.
struct ShowingLeafWriter<Visitor: LeafVisitor>: LeafWriter {
    let value: LeafValue
    var visitor: Visitor

    mutating func value(replacing old: LeafCell?) throws -> LeafValue {
        try visitor.visit(old)
        return value
    }
}

/// Keeps a copy of the value a put replaces or a delete removes.
struct LeafCopier: LeafVisitor {
    private(set) var value: LeafValue?

    mutating func visit(_ old: LeafCell?) { value = old.map(LeafValue.init) }
}

/// Shows the value to `first`, then to `second`: a caller's look at a row and index maintenance share one descent. A
/// throw of `first` stops the put or delete before `second` sees anything.
struct ChainedLeafVisitor<First: LeafVisitor, Second: LeafVisitor>: LeafVisitor {
    var first: First
    var second: Second

    mutating func visit(_ old: LeafCell?) throws {
        try first.visit(old)
        try second.visit(old)
    }
}

/// Sees no value: for a put or delete whose caller does not look at the row.
struct IgnoringLeafVisitor: LeafVisitor {
    func visit(_ old: LeafCell?) {}
}

/// Lends the bytes of the value found to `body` (gathered from its overflow chain when it has one); not called when
/// there is none.
struct LeafBytesLender: LeafVisitor {
    let pages: PageStore
    let body: (UnsafeRawBufferPointer) throws -> Void

    func visit(_ old: LeafCell?) throws {
        guard let old else { return }
        try pages.withBytes(of: old, body)
    }
}
