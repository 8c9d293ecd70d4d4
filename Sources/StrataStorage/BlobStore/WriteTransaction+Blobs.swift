import StrataFormat

extension WriteTransaction {
    /// Starts streaming a new blob. Finish it (``BlobWriter/finish()``) before starting another.
    ///
    /// - Returns: a writer; the blob's ID is reserved now and returned by ``BlobWriter/finish()``.
    /// - Throws: ``StorageError/io(_:)`` when a new blob segment cannot be created (or the newest one opened).
    public func makeBlobWriter() throws -> BlobWriter {
        checkActive()
        let catalog = try catalogTable()
        let id = BlobID(state.tables[catalog]!.nextRowID)
        // Reserve the ID now; the catalog row is written by finish(). An unfinished writer's ID may be
        // given again after a reopen: orphans are found by their place in a segment, not by their ID.
        state.tables[catalog]!.nextRowID += 1
        wroteBlobs = true
        return try BlobWriter(transaction: self, blobs: blobs, id: id)
    }

    /// Stores `bytes` as a blob (compressed when that makes it smaller).
    /// - Returns: the blob's ID, to keep in a row.
    /// - Throws: ``StorageError/io(_:)`` when the segment cannot be written; the blob is then not recorded.
    public func storeBlob(_ bytes: [UInt8]) throws -> BlobID {
        let writer = try makeBlobWriter()
        try writer.write(bytes)
        return try writer.finish()
    }

    /// Deletes a blob: its bytes become dead space in their segment, reclaimed by compaction.
    /// - Returns: whether the blob existed.
    /// - Throws: ``StorageError/corruption(file:offset:reason:)`` or ``StorageError/io(_:)`` when a catalog
    ///   page cannot be read.
    @discardableResult
    public func deleteBlob(_ blob: BlobID) throws -> Bool {
        checkActive()
        guard let catalog = state.tableIDs[BlobCatalog.tableName] else { return false }
        return try deleteRow(RowID(blob.rawValue), from: catalog)
    }

    /// The bytes of a blob as this transaction sees it, or nil when there is no such blob.
    ///
    /// - Throws: ``StorageError/corruption(file:offset:reason:)`` naming the blob when it or its catalog
    ///   entry is damaged; ``StorageError/io(_:)`` when it cannot be read.
    public func readBlob(_ blob: BlobID) throws -> [UInt8]? {
        checkActive()
        guard let entry = try BlobCatalog.lookup(blob, in: state, tree: tree) else { return nil }
        return try BlobReader(blob: blob, entry: entry, blobs: blobs, mode: .uncommitted).readAll()
    }

    /// The length of a blob in bytes as this transaction sees it, or nil when there is no such blob.
    ///
    /// - Throws: ``StorageError/corruption(file:offset:reason:)`` when its catalog entry is damaged;
    ///   ``StorageError/io(_:)`` when it cannot be read.
    public func blobLength(_ blob: BlobID) throws -> UInt64? {
        checkActive()
        return try BlobCatalog.lookup(blob, in: state, tree: tree)?.rawLength
    }

    func recordBlob(_ blob: BlobID, entry: BlobCatalogEntry) throws {
        checkActive()
        let catalog = try catalogTable()
        let value = entry.encoded()
        try state.put(table: catalog, row: blob.rawValue, value: .bytes(value), tree: tree, owner: tag)
        value.withUnsafeBytes { bytes in
            log.appendOperation {
                WALOperation.encodePut(tableID: catalog.rawValue, rowID: blob.rawValue, value: bytes, into: &$0)
            }
        }
    }

    private func catalogTable() throws -> TableID {
        if let id = state.tableIDs[BlobCatalog.tableName] { return id }
        return try createTableUnchecked(named: BlobCatalog.tableName)
    }
}
