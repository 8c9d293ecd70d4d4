extension Snapshot {
    /// The bytes of a blob, or nil when this snapshot has no such blob.
    /// - Throws: ``StorageError/corruption(file:offset:reason:)`` naming the blob when it is damaged.
    public func readBlob(_ blob: BlobID) throws -> [UInt8]? {
        try blobReader(blob)?.readAll()
    }

    /// A reader that streams a blob chunk by chunk, or nil when this snapshot has no such blob.
    public func blobReader(_ blob: BlobID) throws -> BlobReader? {
        guard let entry = try BlobCatalog.lookup(blob, in: state, tree: tree) else { return nil }
        return BlobReader(blob: blob, entry: entry, blobs: blobs)
    }

    /// The length of a blob, or nil when this snapshot has no such blob.
    public func blobLength(_ blob: BlobID) throws -> UInt64? {
        try BlobCatalog.lookup(blob, in: state, tree: tree)?.rawLength
    }

    /// Every blob this snapshot has, in ID order.
    public func forEachBlob(_ body: (BlobID, UInt64) throws -> Bool) throws {
        guard let table = state.tableIDs[BlobCatalog.tableName] else { return }
        try tree.forEach(state.table(table).root, from: 0, through: .max, reverse: false) { key, value in
            try body(BlobID(key), BlobCatalog.entry(value, pages: tree.pages, blob: BlobID(key)).rawLength)
        }
    }
}
