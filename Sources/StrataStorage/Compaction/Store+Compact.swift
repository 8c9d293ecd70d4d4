import StrataFormat
import StrataIO

extension Store {
    /// Rewrites the store in `directory` into new files holding only live data, and swaps them in
    /// atomically: dead pages of old checkpoints, deleted and orphaned blob bytes and torn tails are
    /// dropped, and each table's tree is rebuilt with full nodes.
    ///
    /// Compaction is offline: it opens the store (taking its lock, so a store open elsewhere is refused
    /// with ``StorageError/storeInUse(path:processes:)``; recovering it if needed), compacts it and closes it.
    ///
    /// The algorithm (FORMAT.md, "Compaction"):
    /// 0. Take the lock, then check the store read-only, as `strata fsck` does
    ///    (``ReadOnlyStore/verify(checkBlobContents:progress:)``): damage that nothing repairs without losing
    ///    committed data (a damaged page or blob, damage in the middle of the log, a lost checkpoint) refuses
    ///    the compaction **before anything is written**, so a refused compaction changes no file (recovery
    ///    alone would cut the log at mid-log damage and drop the commits after it). What recovery or the
    ///    rebuild of an index fixes (a torn log tail, a damaged or disagreeing index) does not refuse it.
    /// 1. Open the store (recovery), checkpoint, so that the page file holds every commit, and empty the log.
    /// 2. Write `strata.pages.compact`: page 0 (the store header, as it is), then each table's rows in
    ///    row-ID order as a new tree built bottom-up (``TreeBuilder``: children before parents, overflow
    ///    chains before their leaves), then each secondary index, bottom-up (``IndexTreeBuilder``): copied entry
    ///    for entry when step 0 found it whole and in agreement with its table and step 1 changed nothing, else
    ///    rebuilt from its table's rows (their entries made during the table's walk); either way the entries a
    ///    rebuild gives. Then one root record covering the same LSN, with no previous one.
    ///    The blob catalog's rows are rewritten as its blobs are copied, record by record and verified,
    ///    into new segments numbered above every segment in the directory (``SegmentCopier``). Blob IDs
    ///    do not change: rows keep referencing them.
    /// 3. Sync the new segments, sync the new page file, sync the directory.
    /// 4. Rename `strata.pages.compact` over `strata.pages` and sync the directory: **the commit point**.
    ///    A crash before it leaves the old store (the new files are unreferenced garbage, which the next
    ///    compaction overwrites or deletes); after it, the new one.
    /// 5. Delete every old segment and sync the directory (no sync when there was none). A crash (or an
    ///    error) here leaves old segments that nothing references: verification counts them as orphaned
    ///    bytes; the next compaction deletes them.
    ///
    /// Any failure before step 4 deletes the new files and leaves the store as it was. Compaction needs
    /// free space for a second copy of the live data.
    ///
    /// - Parameters:
    ///   - directory: the store's directory.
    ///   - configuration: the configuration to open the store with (its blob segment size limit also
    ///     sizes the new segments); `createIfMissing` is ignored: a missing store is an error.
    ///   - fileSystem: the file-system seam.
    ///   - progress: called now and then with rows and blob chunks copied.
    /// - Returns: the sizes before and after, and what was copied.
    /// - Throws: ``StorageError/storeNotFound(path:)``, ``StorageError/storeInUse(path:processes:)``,
    ///   ``StorageError/corruption(file:offset:reason:)`` when the store has damage that compaction cannot
    ///   carry over without losing committed data (nothing is changed then: use `strata fsck --salvage`),
    ///   ``StorageError/unsupportedFormat(path:reason:)`` (also for read-only-compatible features this version
    ///   does not know), ``StorageError/io(_:)``.
    public static func compact(
        at directory: String, configuration: StoreConfiguration = StoreConfiguration(),
        fileSystem: any FileSystem = PosixFileSystem(), progress: ProgressHandler? = nil
    ) throws -> CompactionReport {
        try compact(
            at: directory, configuration: configuration, fileSystem: fileSystem, progress: progress, bufferPages: 256)
    }

    /// ``compact(at:configuration:fileSystem:progress:)`` writing the page file `bufferPages` pages at a
    /// time (crash tests use small values, for more crash points).
    static func compact(
        at directory: String, configuration: StoreConfiguration, fileSystem: any FileSystem, progress: ProgressHandler?,
        bufferPages: Int
    ) throws -> CompactionReport {
        var configuration = configuration
        configuration.createIfMissing = false
        let clock = ContinuousClock()
        let started = clock.now
        // 0. The lock, then the check; no file is created (not even the lock file) for a missing store.
        guard fileSystem.exists(at: StoreFileNames.path(directory, StoreFileNames.pageFile)) else {
            throw StorageError.storeNotFound(path: directory)
        }
        let lock: any FileLock
        do { lock = try fileSystem.lockFile(at: StoreFileNames.path(directory, StoreFileNames.lock)) } catch {
            if error.code == .wouldBlock { throw StorageError.inUse(directory, fileSystem: fileSystem) }
            throw StorageError.io(error)
        }
        let store: Store
        let verifiedIndexes: [String: VerificationReport.IndexSummary]
        do {
            verifiedIndexes = try refuseUnrepairableDamage(in: directory, fileSystem: fileSystem)
            store = try openLocked(
                directory: directory, configuration: configuration, fileSystem: fileSystem, lock: lock)
        } catch {
            lock.unlock()
            throw error
        }
        defer { store.closeWithoutCheckpoint() }
        var report = try store.compactHoldingLock(
            progress: progress, bufferPages: bufferPages, verifiedIndexes: verifiedIndexes)
        let elapsed = clock.now - started
        report.seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        store.logger.info(
            "store compacted",
            metadata: [
                "directory": "\(directory)", "bytesBefore": "\(report.bytesBefore)",
                "bytesAfter": "\(report.bytesAfter)",
                "rows": "\(report.rowCount)", "blobs": "\(report.blobsCopied)",
            ])
        return report
    }

    /// Step 0: verifies the store read-only (the caller holds the lock) and throws for the first problem that
    /// has no remedy, or for a store this version may not write.
    ///
    /// - Returns: the summaries of the indexes found whole and in agreement with their tables (no problem names
    ///   them), by name: step 2 copies those in order instead of rebuilding them, when nothing changed since.
    private static func refuseUnrepairableDamage(
        in directory: String, fileSystem: any FileSystem
    ) throws -> [String: VerificationReport.IndexSummary] {
        let check = try ReadOnlyStore.openWithoutLocking(at: directory, fileSystem: fileSystem)
        guard check.header.isWritable else {
            throw StorageError.readOnlyFeatures(
                path: StoreFileNames.path(directory, StoreFileNames.pageFile),
                features: check.header.unknownReadOnlyCompatibleFeatures)
        }
        let report = check.verify()
        let unrepairable = report.problems.filter { $0.remedy == nil }
        guard let first = unrepairable.first else {
            let damaged = Set(report.problems.compactMap(\.index))
            var verified: [String: VerificationReport.IndexSummary] = [:]
            for index in report.indexes where !damaged.contains(index.name) { verified[index.name] = index }
            return verified
        }
        let more = unrepairable.count > 1 ? " (and \(unrepairable.count - 1) more problems)" : ""
        throw StorageError.corruption(
            file: first.file, offset: first.offset ?? 0,
            reason: "\(first.message)\(more): compaction refused, as it would lose committed data; nothing was "
                + "changed")
    }

    /// Closes a store whose files compaction replaced: nothing may be written through it any more (its page
    /// file handle names the old file), so unlike ``close()`` it does not checkpoint.
    func closeWithoutCheckpoint() {
        writerGate.wait()
        defer { writerGate.signal() }
        if shared.withLock({ $0.closed }) { return }
        shared.withLock { $0.closed = true }
        wal.close()
        lock.unlock()
    }

    private func fileSize(_ path: String) throws -> UInt64 {
        do {
            let file = try fileSystem.openFile(at: path, mode: .existing)
            defer { try? file.close() }
            return try file.size()
        } catch { throw StorageError.io(error) }
    }

    /// Steps 1 to 5 of ``compact(at:configuration:fileSystem:progress:)`` on this store, which is then closed.
    ///
    /// - Parameter verifiedIndexes: the indexes step 0 found whole and in agreement with their tables.
    private func compactHoldingLock(
        progress: ProgressHandler?, bufferPages: Int, verifiedIndexes: [String: VerificationReport.IndexSummary]
    ) throws -> CompactionReport {
        writerGate.wait()
        defer { writerGate.signal() }
        var report = CompactionReport()
        let pagePath = StoreFileNames.path(directory, StoreFileNames.pageFile)
        let walPath = StoreFileNames.path(directory, StoreFileNames.wal)
        let compactPath = StoreFileNames.path(directory, StoreFileNames.pageFileCompacted)

        // 1. Everything into the page file; an empty log.
        report.checkpointedFirst =
            recoveryReport.replayedTransactions > 0 || shared.withLock { $0.latest.lsn > $0.checkpointLSN }
        try checkpointHoldingGate()
        let (state, generation) = shared.withLock { ($0.latest, $0.generation) }
        if wal.size > UInt64(WALFormat.fileHeaderSize) { try resetLog(startLSN: state.lsn + 1) }

        let names: [String]
        do { names = try fileSystem.contentsOfDirectory(at: directory) } catch { throw StorageError.io(error) }
        let oldSegments = names.compactMap(BlobSegmentFormat.segmentID(fileName:)).sorted()
        report.segmentsBefore = oldSegments
        report.pageFileBytesBefore = try fileSize(pagePath)
        report.walBytes = try fileSize(walPath)
        for id in oldSegments { report.segmentBytesBefore += try fileSize(blobs.path(of: id)) }
        let leftover = names.contains(StoreFileNames.pageFileCompacted) ? try fileSize(compactPath) : 0
        // The writer lock file holds the 32-byte commit notice (FORMAT.md §11.2), the same before and after.
        let writerFile = StoreFileNames.path(directory, StoreFileNames.writerLock)
        let notice = names.contains(StoreFileNames.writerLock) ? try fileSize(writerFile) : 0
        report.bytesBefore =
            report.pageFileBytesBefore + report.walBytes + report.segmentBytesBefore + leftover + notice

        // 2. The new page file and segments.
        var segments = SegmentCopier(
            source: blobs, firstID: (oldSegments.last ?? 0) + 1, sizeLimit: configuration.blobSegmentSizeLimit)
        defer { segments.closeAll() }
        var newFile: (any FileHandle)?
        var renamed = false
        do {
            let file: any FileHandle
            do { file = try fileSystem.openFile(at: compactPath, mode: .truncate) } catch {
                throw StorageError.io(error)
            }
            newFile = file
            let firstPage: [UInt8]
            do { firstPage = try pages.file.read(count: pageSize, at: 0) } catch { throw StorageError.io(error) }
            guard firstPage.count == pageSize else {
                throw StorageError.corrupt(pagePath, at: 0, "the header page is cut short")
            }
            var writer = try PageAppender(
                file: file, firstPage: firstPage, salt: header.checksumSalt, generation: generation + 1,
                bufferPages: bufferPages)
            // An index step 0 verified is copied in order when the state is the one it verified: nothing replayed or
            // checkpointed since, the same root page and entry count. Every other index is rebuilt from the rows.
            let copied = Set(
                state.indexes.values.filter { index in
                    guard !report.checkpointedFirst, let summary = verifiedIndexes[index.definition.name] else {
                        return false
                    }
                    let rootPage: UInt64?
                    switch index.root {
                    case .page(let page): rootPage = page
                    case nil: rootPage = nil
                    case .node: return false
                    }
                    return summary.indexID == index.id.rawValue && summary.rootPage == rootPage
                        && summary.entryCount == index.entryCount && summary.unwrittenNodes == 0
                }.map(\.id))
            let (records, indexEntries) = try writeTables(
                of: state, rebuilding: Set(state.indexes.keys).subtracting(copied), into: &writer,
                segments: &segments, progress: progress)
            let indexes = try writeIndexes(of: state, copying: copied, entries: indexEntries, into: &writer)
            _ = try writer.writeRootRecord(
                RootRecord(
                    walLSN: state.lsn, nextTableID: state.nextTableID, previousRootPage: PageFormat.noPage,
                    tables: records, nextIndexID: state.nextIndexID, indexes: indexes))
            report.indexCount = indexes.count
            report.indexesCopied = copied.count
            report.indexEntryCount = indexes.reduce(0) { $0 + $1.entryCount }
            try writer.flush()
            report.tableCount = records.count
            report.rowCount = records.reduce(0) { $0 + $1.rowCount }
            report.treePagesWritten = writer.treePages
            report.overflowPagesWritten = writer.overflowPages
            report.rootRecordPagesWritten = writer.rootRecordPages
            report.pageFileBytesAfter = writer.fileBytes
            report.generation = generation + 1

            // 3. Durable before they can be referenced.
            try segments.syncAll()
            do {
                try file.sync()
                try fileSystem.syncDirectory(at: directory)
            } catch { throw StorageError.io(error) }

            // 4. The swap.
            do { try fileSystem.rename(from: compactPath, to: pagePath) } catch { throw StorageError.io(error) }
            renamed = true
        } catch {
            // Nothing references the new files yet: remove them (a leftover is harmless garbage if this fails).
            try? newFile?.close()
            if !renamed {
                try? fileSystem.removeFile(at: compactPath)
                for id in segments.createdIDs { try? fileSystem.removeFile(at: blobs.path(of: id)) }
                try? fileSystem.syncDirectory(at: directory)
            }
            logger.error("compaction failed; the store is unchanged", metadata: ["error": "\(error)"])
            throw error
        }
        try? newFile?.close()
        do { try fileSystem.syncDirectory(at: directory) } catch {
            // The rename is visible but may not be durable: a crash could bring either page file back,
            // and both are complete, so no old segment may be deleted yet.
            logger.error(
                "compaction swapped the page file but could not sync the directory", metadata: ["error": "\(error)"])
            throw StorageError.io(error)
        }

        // 5. The old segments are garbage now.
        report.segmentsAfter = segments.createdIDs
        report.blobsCopied = segments.blobsCopied
        report.blobBytesCopied = segments.bytesCopied
        report.segmentBytesAfter = segments.segmentBytes
        var remaining: UInt64 = 0
        do {
            for (index, id) in oldSegments.enumerated() {
                do { try fileSystem.removeFile(at: blobs.path(of: id)) } catch {
                    for rest in oldSegments[index...] { remaining += (try? fileSize(blobs.path(of: rest))) ?? 0 }
                    throw error
                }
            }
            // Nothing deleted, nothing to make durable: the directory is as step 4's sync left it.
            if !oldSegments.isEmpty { try fileSystem.syncDirectory(at: directory) }
        } catch {
            report.cleanupFailure = "\(error)"
            logger.warning(
                "compaction succeeded but old blob segments could not be removed; the next compaction removes them",
                metadata: ["error": "\(error)"])
        }
        report.bytesAfter = report.pageFileBytesAfter + report.walBytes + report.segmentBytesAfter + remaining + notice
        report.bytesReclaimed = report.bytesBefore > report.bytesAfter ? report.bytesBefore - report.bytesAfter : 0
        return report
    }

    /// Writes every secondary index's tree (in index-ID order) and returns their root record entries.
    ///
    /// An index in `copying` is one step 0 verified, unchanged since: its entries are copied in the order they lie
    /// (no entry is made from a row, nothing is sorted), their order checked. Any other index is rebuilt from its
    /// `entries` (those ``writeTables(of:rebuilding:into:segments:progress:)`` made from its table's rows), so that it
    /// agrees with its table even if the old one did not: they lie packed in one buffer in row order, are sorted by
    /// integer prefixes (a counting sort by key when few keys repeat over many rows) and handed to the leaves lent.
    /// An array per entry and a closure per comparison were 70% of W12's compaction (issue 16).
    private func writeIndexes(
        of state: StoreState, copying: Set<IndexID>, entries: [IndexID: PackedIndexEntries],
        into writer: inout PageAppender
    ) throws -> [RootRecord.Index] {
        var roots: [IndexID: (page: UInt64, height: Int)] = [:]
        var rebuilt = state
        for index in state.indexes.values.sorted(by: { $0.id < $1.id }) {
            var builder = IndexTreeBuilder(pageSize: pageSize)
            if !copying.contains(index.id) {
                // Made for every index of an existing table.
                _ = try state.table(index.definition.table)
                let packed = entries[index.id] ?? PackedIndexEntries()
                // Every entry ends with its row's ID, and the rows were walked in increasing order: entries are
                // distinct.
                try packed.forEach(packed.sorted(inRowOrder: true)) { try builder.add($0, writer: &writer) }
            } else {
                let name = index.definition.name
                try IndexTree(pages: pages).forEach(index.root, from: nil, below: nil, reverse: false) { entry in
                    guard try builder.addIfInOrder(entry, writer: &writer) else {
                        throw StorageError.corrupt(pages.fileName, at: 0, "index '\(name)' holds entries out of order")
                    }
                    return true
                }
                guard builder.entryCount == index.entryCount else {
                    throw StorageError.corrupt(
                        pages.fileName, at: 0,
                        "index '\(name)' says it has \(index.entryCount) entries; its tree has \(builder.entryCount)")
                }
            }
            let (root, height) = try builder.finish(&writer)
            roots[index.id] = (root, height)
            rebuilt.indexes[index.id]?.entryCount = builder.entryCount
        }
        return rebuilt.indexRecords(roots: roots)
    }

    /// Writes every table's tree (in table-ID order) and returns the root record's table entries, and the entries of
    /// each index in `rebuilding`, made from the rows on the way (one walk of each table).
    private func writeTables(
        of state: StoreState, rebuilding: Set<IndexID>, into writer: inout PageAppender,
        segments: inout SegmentCopier, progress: ProgressHandler?
    ) throws -> (tables: [RootRecord.Table], indexEntries: [IndexID: PackedIndexEntries]) {
        var total: UInt64 = 0
        for table in state.tables.values { total += table.rowCount }
        if let catalog = state.tableIDs[BlobCatalog.tableName] {
            try tree.forEach(state.table(catalog).root, from: 0, through: .max, reverse: false) { key, value in
                total += UInt64(try BlobCatalog.entry(value, pages: pages, blob: BlobID(key)).chunkCount)
                return true
            }
        }
        var throttle = ProgressThrottle(progress, phase: "compacting", total: total)
        var records: [RootRecord.Table] = []
        var indexEntries: [IndexID: PackedIndexEntries] = [:]
        for table in state.tables.values.sorted(by: { $0.id < $1.id }) {
            var builder = TreeBuilder(pageSize: pageSize)
            let isCatalog = table.name == BlobCatalog.tableName
            let indexes = try table.indexes.map(\.id).filter(rebuilding.contains).map { try state.index($0) }
            var entries = indexes.map { _ in PackedIndexEntries() }
            try tree.forEachCell(table.root, from: 0, through: .max, reverse: false) { key, cell in
                try pages.withBytes(of: cell) { bytes in
                    for position in indexes.indices {
                        do {
                            try entries[position].append(
                                of: indexes[position].definition, row: key, bytes: bytes, tag: 0, limit: .max,
                                pages: pages)
                        } catch StorageError.invalidArgument(let reason) {
                            // A stored row the index cannot take is damage, not a caller's bad argument.
                            throw StorageError.corrupt(pages.fileName, at: 0, reason)
                        }
                    }
                    // Copied where it lies into the new leaf: no array per row.
                    if !isCatalog { try builder.add(key, bytes, writer: &writer) }
                }
                if isCatalog {
                    let entry = try BlobCatalog.entry(LeafValue(cell), pages: pages, blob: BlobID(key))
                    try builder.add(
                        key, try segments.copy(BlobID(key), entry) { throttle.advance() }.encoded(), writer: &writer)
                }
                throttle.advance()
                return true
            }
            let (root, height) = try builder.finish(&writer)
            guard builder.rowCount == table.rowCount else {
                throw StorageError.corrupt(
                    pages.fileName, at: 0,
                    "table '\(table.name)' says it has \(table.rowCount) rows; its tree has \(builder.rowCount)")
            }
            for (position, index) in indexes.enumerated() { indexEntries[index.id] = entries[position] }
            records.append(
                RootRecord.Table(
                    tableID: table.id.rawValue, name: table.name, nextRowID: table.nextRowID, rowCount: table.rowCount,
                    rootPage: root, height: height))
        }
        return (records, indexEntries)
    }
}
