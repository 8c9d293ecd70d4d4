import StrataFormat

/// One entry of a secondary index: a row's key and the row.
///
/// Keys come back decoded from the index's order-preserving encoding, so they are normalised as
/// FORMAT.md ("Index keys") says: `-0.0` as `0.0`, every NaN as the canonical NaN, decimals without
/// trailing zeros.
public struct IndexEntry: Sendable, Hashable {
    /// The key's parts, one per field of the index's definition.
    public let key: [RowRecord.Field]
    /// The row the entry stands for.
    public let row: RowID

    /// An entry from its parts.
    public init(key: [RowRecord.Field], row: RowID) {
        self.key = key
        self.row = row
    }
}
