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

/// One entry of a secondary index read where it lies in its page, for covering scans that need a part or two of
/// each key and no array per entry (``Snapshot/forEachIndexEntryView(in:from:through:reverse:_:)``). Valid only
/// during the call that lends it.
public struct IndexEntryView {
    /// The entry's bytes: the encoded key, then the row ID (at least 9 bytes: index pages are validated so).
    private let bytes: UnsafeRawBufferPointer
    private let indexName: String
    private let file: String

    init(_ bytes: UnsafeRawBufferPointer, indexName: String, file: String) {
        self.bytes = bytes
        self.indexName = indexName
        self.file = file
    }

    /// The row the entry stands for.
    public var row: RowID { RowID(IndexKey.rowID(ofEntry: bytes)) }

    /// Part `index` of the key, decoded without the others after it.
    ///
    /// - Throws: ``StorageError/corruption(file:offset:reason:)`` when the entry does not decode that far.
    public func keyPart(_ index: Int) throws -> RowRecord.Field {
        do {
            return try IndexKey.decodePart(
                index, of: UnsafeRawBufferPointer(rebasing: bytes.dropLast(IndexKey.rowIDSize)))
        } catch {
            throw StorageError.corruption(
                file: file, offset: 0, reason: "index '\(indexName)' holds an entry that does not decode: \(error)")
        }
    }

    /// The whole entry, decoded and copied.
    ///
    /// - Throws: ``StorageError/corruption(file:offset:reason:)`` when the entry does not decode.
    public func decoded() throws -> IndexEntry {
        do {
            let (key, row) = try IndexKey.decodeEntry(bytes)
            return IndexEntry(key: key, row: RowID(row))
        } catch {
            throw StorageError.corruption(
                file: file, offset: 0, reason: "index '\(indexName)' holds an entry that does not decode: \(error)")
        }
    }
}
