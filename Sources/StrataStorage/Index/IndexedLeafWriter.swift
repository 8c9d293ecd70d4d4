import StrataFormat

/// A put's writer followed by index maintenance: `writer` makes the new row of the old one, then ``RowIndexing``
/// compares the two, where the tree's one descent finds the old row and before the leaf changes.
struct IndexedLeafWriter<Writer: LeafWriter>: LeafWriter {
    var writer: Writer
    var indexing: RowIndexing

    mutating func value(replacing old: LeafCell?) throws -> LeafValue {
        let new = try writer.value(replacing: old)
        try indexing.visit(old, new: new)
        return new
    }
}
