import StrataFormat

/// Lends the row an update finds to the caller's rewrite and stores the bytes it writes, which it keeps in the
/// transaction's ``WriteTransaction/rewritten`` for the log record (``WriteTransaction/update(_:in:rewriting:)``).
struct RowRewriter: LeafWriter {
    let transaction: WriteTransaction
    let body: (UnsafeRawBufferPointer, inout [UInt8]) throws -> Void

    mutating func value(replacing old: LeafCell?) throws -> LeafValue {
        guard let old else { preconditionFailure("an update rewrites only a row that exists (onlyReplacing)") }
        transaction.rewritten.removeAll(keepingCapacity: true)
        try transaction.tree.pages.withBytes(of: old) { try body($0, &transaction.rewritten) }
        try transaction.checkSize(transaction.rewritten)
        return .bytes(transaction.rewritten)
    }
}
