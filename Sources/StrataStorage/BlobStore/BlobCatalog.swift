import StrataFormat

/// The blob catalog: an engine table, hidden from users, whose row IDs are blob IDs and whose values are
/// ``BlobCatalogEntry`` records. Keeping it in a table makes a blob's existence part of the transaction
/// that stores or deletes it: logged, replayed and checkpointed like any row.
enum BlobCatalog {
    /// The catalog's table name; names starting with ``reservedPrefix`` belong to the engine.
    static let tableName = "strata.blobs"
    static let reservedPrefix = "strata."

    static func entry(_ value: LeafValue, pages: PageStore, blob: BlobID) throws -> BlobCatalogEntry {
        let bytes = try pages.bytes(of: value)
        do {
            return try bytes.withUnsafeBytes { (buffer) throws(FormatError) in try BlobCatalogEntry.decode(buffer) }
        } catch { throw StorageError.corrupt(pages.fileName, at: 0, "catalog entry of \(blob): \(error)") }
    }

    /// The entry of `blob` in `state`, or nil when the blob does not exist there.
    static func lookup(_ blob: BlobID, in state: StoreState, tree: BTree) throws -> BlobCatalogEntry? {
        guard let table = state.tableIDs[tableName], let root = state.tables[table]?.root,
            let value = try tree.get(root, blob.rawValue)
        else { return nil }
        return try entry(value, pages: tree.pages, blob: blob)
    }
}

extension BlobCatalogEntry {
    /// The blob's stored bytes from segment offset `offset` on (0 past its end): a bound on its next record's size,
    /// so that a reader reads a record with one positional read.
    func storedBytes(from offset: UInt64) -> Int {
        let read = offset &- self.offset
        return read <= storedBytes ? Int(clamping: storedBytes - read) : 0
    }
}
