extension Snapshot {
    /// The bytes of a blob, or nil when this snapshot has no such blob.
    /// - Throws: ``StorageError/corruption(file:offset:reason:)`` naming the blob when it is damaged.
    public func readBlob(_ blob: BlobID) throws -> [UInt8]? {
        try blobReader(blob)?.readAll()
    }

    /// A reader that streams a blob chunk by chunk, or nil when this snapshot has no such blob.
    ///
    /// - Throws: ``StorageError/corruption(file:offset:reason:)`` when the blob's catalog entry is damaged;
    ///   ``StorageError/io(_:)`` when it cannot be read. Damage to the blob itself surfaces from the reader.
    public func blobReader(_ blob: BlobID) throws -> BlobReader? {
        guard let entry = try BlobCatalog.lookup(blob, in: state, tree: tree) else { return nil }
        return BlobReader(blob: blob, entry: entry, blobs: blobs)
    }

    /// The length of a blob in bytes, or nil when this snapshot has no such blob. Reads only the catalog.
    ///
    /// - Throws: ``StorageError/corruption(file:offset:reason:)`` when the blob's catalog entry is damaged;
    ///   ``StorageError/io(_:)`` when it cannot be read.
    public func blobLength(_ blob: BlobID) throws -> UInt64? {
        try BlobCatalog.lookup(blob, in: state, tree: tree)?.rawLength
    }

    /// Calls `body` with the ID and length of every blob this snapshot has, in ID order; `body` returns
    /// false to stop. Reads only the catalog, not the blobs.
    ///
    /// - Throws: ``StorageError/corruption(file:offset:reason:)`` when a catalog entry is damaged;
    ///   ``StorageError/io(_:)`` when the catalog cannot be read; or what `body` throws.
    public func forEachBlob(_ body: (BlobID, UInt64) throws -> Bool) throws {
        guard let table = committed.tableIDs[BlobCatalog.tableName] else { return }
        try tree.forEach(root(of: table), from: 0, through: .max, reverse: false) { key, value in
            try body(BlobID(key), BlobCatalog.entry(value, pages: tree.pages, blob: BlobID(key)).rawLength)
        }
    }
}
