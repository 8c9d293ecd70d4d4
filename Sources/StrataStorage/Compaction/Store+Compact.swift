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
    ///    When the log holds no record and the commit notice names it (so that opening and step 1 write nothing),
    ///    only the header and the log are checked here, and step 2 verifies the rest as it copies it, each page
    ///    checked once as it is read (``CompactionVerification/whileCopying``): any problem removes the new files,
    ///    and this full check then runs, refusing the damage with the same error, or letting the copy run again.
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
        let verifiedIndexes: [String: VerificationReport.IndexSummary]?
        do {
            verifiedIndexes = try refuseUnrepairableDamageUnlessCopyVerifies(in: directory, fileSystem: fileSystem)
            store = try openLocked(
                directory: directory, configuration: configuration, fileSystem: fileSystem, lock: lock)
        } catch {
            lock.unlock()
            throw error
        }
        defer { store.closeWithoutCheckpoint() }
        var report: CompactionReport
        if let verifiedIndexes {
            report = try store.compactHoldingLock(
                progress: progress, bufferPages: bufferPages, verification: .before(verifiedIndexes))
        } else {
            do {
                report = try store.compactHoldingLock(
                    progress: progress, bufferPages: bufferPages, verification: .whileCopying)
            } catch let error as DamageFoundWhileCopying {
                // The new files are gone and nothing else was written: step 0 in full says what the damage is, and
                // refuses it or (an index to rebuild) lets the copy run again.
                store.logger.notice(
                    "compaction found damage while copying; verifying the store", metadata: ["damage": "\(error)"])
                let verified = try refuseUnrepairableDamage(
                    ReadOnlyStore.openWithoutLocking(at: directory, fileSystem: fileSystem))
                report = try store.compactHoldingLock(
                    progress: progress, bufferPages: bufferPages, verification: .before(verified))
            }
        }
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

    /// Step 0: opens the store read-only (the caller holds the lock) and throws for a store this version may not write.
    /// When the log holds no record (so that opening and step 1 write nothing), the rest of the check is left to
    /// step 2, which verifies every page as it copies it (``CompactionVerification/whileCopying``): nil. Otherwise
    /// verifies the store in full first (``refuseUnrepairableDamage(_:)``).
    private static func refuseUnrepairableDamageUnlessCopyVerifies(
        in directory: String, fileSystem: any FileSystem
    ) throws -> [String: VerificationReport.IndexSummary]? {
        let check = try ReadOnlyStore.openWithoutLocking(at: directory, fileSystem: fileSystem)
        guard check.header.isWritable else {
            throw StorageError.readOnlyFeatures(
                path: StoreFileNames.path(directory, StoreFileNames.pageFile),
                features: check.header.unknownReadOnlyCompatibleFeatures)
        }
        // An empty log that follows the checkpoint (nothing to replay, cut or replace), and a commit notice that names
        // them (open posts one otherwise).
        if check.logReport.problems.isEmpty, let log = check.logReport.log, log.records == 0,
            log.fileBytes - log.reservedBytes == UInt64(WALFormat.fileHeaderSize),
            log.lastLSN == check.checkpointState.lsn,
            let notice = commitNotice(in: directory, fileSystem: fileSystem),
            notice.lastCommitLSN == log.lastLSN, notice.logStartLSN == log.startLSN
        {
            return nil
        }
        return try refuseUnrepairableDamage(check)
    }

    /// The commit notice of the writer lock file (FORMAT.md §11.2), read-only; nil when it does not read.
    private static func commitNotice(in directory: String, fileSystem: any FileSystem) -> CommitNotice? {
        let path = StoreFileNames.path(directory, StoreFileNames.writerLock)
        guard let file = try? fileSystem.openFileForReading(at: path) else { return nil }
        defer { try? file.close() }
        return (try? file.read(count: CommitNotice.size, at: 0)).flatMap(CommitNotice.decode)
    }

    /// Verifies the store read-only, as `strata fsck` does, and throws for the first problem that has no remedy.
    ///
    /// - Returns: the summaries of the indexes found whole and in agreement with their tables (no problem names
    ///   them), by name: step 2 copies those in order instead of rebuilding them, when nothing changed since.
    private static func refuseUnrepairableDamage(
        _ check: ReadOnlyStore
    ) throws -> [String: VerificationReport.IndexSummary] {
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
    /// - Parameter verification: whether step 0 verified the store (and which indexes it found whole), or step 2
    ///   verifies it as it copies.
    /// - Throws: ``DamageFoundWhileCopying`` (`verification` `.whileCopying`), having removed the new files.
    private func compactHoldingLock(
        progress: ProgressHandler?, bufferPages: Int, verification: CompactionVerification
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
            // Verified while copied, every index is copied: step 1 changed nothing (the log held no record).
            var verifier: StoreVerifier?
            let verifiedIndexes: [String: VerificationReport.IndexSummary]
            switch verification {
            case .before(let indexes): verifiedIndexes = indexes
            case .whileCopying:
                verifiedIndexes = [:]
                guard !report.checkpointedFirst else {
                    throw DamageFoundWhileCopying(description: "the log held commits")
                }
                verifier = StoreVerifier(pages: pages)
                // Blobs are checked whole first (as `verify()` reads them), then copied, each record checked again.
                var blobVerifier = BlobVerifier(tree: tree, blobs: blobs)
                blobVerifier.verify(state, into: &verifier!.report)
                try verifier!.throwFirstProblem()
            }
            let copied = Set(
                state.indexes.values.filter { index in
                    if verifier != nil {
                        if case .node = index.root { return false }
                        return true
                    }
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
            let (records, indexEntries, expected) = try writeTables(
                of: state, rebuilding: Set(state.indexes.keys).subtracting(copied), into: &writer,
                segments: &segments, progress: progress, verifier: &verifier)
            let indexes = try writeIndexes(
                of: state, copying: copied, entries: indexEntries, into: &writer, verifier: &verifier,
                expected: expected)
            _ = try writer.writeRootRecord(
                RootRecord(
                    walLSN: state.lsn, nextTableID: state.nextTableID, previousRootPage: PageFormat.noPage,
                    tables: records, nextIndexID: state.nextIndexID, indexes: indexes))
            report.verifiedWhileCopying = verifier != nil
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
            if !(error is DamageFoundWhileCopying) {
                logger.error("compaction failed; the store is unchanged", metadata: ["error": "\(error)"])
            }
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
    ///
    /// With a `verifier`, each copied index is walked by it (``StoreVerifier/verifyIndex(_:of:expected:eachEntry:)``,
    /// against the `expected` entries its table's copy folded), and its first problem thrown.
    private func writeIndexes(
        of state: StoreState, copying: Set<IndexID>, entries: [IndexID: PackedIndexEntries],
        into writer: inout PageAppender, verifier: inout StoreVerifier?, expected: [IndexID: ExpectedIndexEntries]
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
            } else if verifier != nil {
                var failure: (any Error)?
                verifier!.verifyIndex(index, of: state, expected: expected[index.id]) { entry in
                    guard failure == nil else { return }
                    do {
                        if try !builder.addIfInOrder(entry, writer: &writer) {
                            failure = DamageFoundWhileCopying(
                                description: "index '\(index.definition.name)' holds entries out of order")
                        }
                    } catch { failure = error }
                }
                try DamageFoundWhileCopying.rethrow(failure)
                try verifier!.throwFirstProblem()
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
    ///
    /// With a `verifier`, the walk is its own (``StoreVerifier/verifyTable(_:eachRow:)``): each page is checked as it
    /// is read and its rows copied, the first problem thrown after each table, and the entries of every other index
    /// folded as ``ExpectedIndexEntries`` for ``writeIndexes(of:copying:entries:into:verifier:expected:)`` to check.
    private func writeTables(
        of state: StoreState, rebuilding: Set<IndexID>, into writer: inout PageAppender,
        segments: inout SegmentCopier, progress: ProgressHandler?, verifier: inout StoreVerifier?
    ) throws -> (
        tables: [RootRecord.Table], indexEntries: [IndexID: PackedIndexEntries],
        expected: [IndexID: ExpectedIndexEntries]
    ) {
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
        var expectedEntries: [IndexID: ExpectedIndexEntries] = [:]
        for table in state.tables.values.sorted(by: { $0.id < $1.id }) {
            let rebuilt = try table.indexes.map(\.id).filter(rebuilding.contains).map { try state.index($0) }
            // The indexes to copy, whose entries the rows must give.
            let checked =
                verifier == nil
                ? [] : try table.indexes.map(\.id).filter { !rebuilding.contains($0) }.map { try state.index($0) }
            var copy = TableCopy(table: table, pages: pages, rebuilding: rebuilt, checking: checked)
            if verifier != nil {
                var failure: (any Error)?
                verifier!.verifyTable(table) { key, cell in
                    guard failure == nil else { return }
                    // The verifier reports rows out of order; the builder must not be handed them.
                    guard copy.follows(key) else {
                        failure = DamageFoundWhileCopying(description: "table '\(table.name)': row \(key) out of order")
                        return
                    }
                    do { try copy.add(key, cell, writer: &writer, segments: &segments, throttle: &throttle) } catch {
                        failure = error
                    }
                }
                try DamageFoundWhileCopying.rethrow(failure)
                try verifier!.throwFirstProblem()
                for (position, index) in checked.enumerated() { expectedEntries[index.id] = copy.expected[position] }
            } else {
                try tree.forEachCell(table.root, from: 0, through: .max, reverse: false) { key, cell in
                    try copy.add(key, cell, writer: &writer, segments: &segments, throttle: &throttle)
                    return true
                }
            }
            let (root, height) = try copy.finish(&writer)
            guard copy.rowCount == table.rowCount else {
                throw StorageError.corrupt(
                    pages.fileName, at: 0,
                    "table '\(table.name)' says it has \(table.rowCount) rows; its tree has \(copy.rowCount)")
            }
            for (position, index) in rebuilt.enumerated() { indexEntries[index.id] = copy.entries[position] }
            records.append(
                RootRecord.Table(
                    tableID: table.id.rawValue, name: table.name, nextRowID: table.nextRowID, rowCount: table.rowCount,
                    rootPage: root, height: height))
        }
        return (records, indexEntries, expectedEntries)
    }
}

extension StoreVerifier {
    /// Throws ``DamageFoundWhileCopying`` naming the first problem found so far, if there is one.
    func throwFirstProblem() throws {
        guard let first = report.problems.first else { return }
        throw DamageFoundWhileCopying(description: first.message)
    }
}

extension DamageFoundWhileCopying {
    /// Rethrows what a copy that verifies met, if anything: an I/O error as it is (the same error the copy throws
    /// after a full verification), any other (a chain or blob that does not read, a row an index cannot take) as
    /// damage for the full verification to judge.
    static func rethrow(_ failure: (any Error)?) throws {
        guard let failure else { return }
        if case StorageError.io = failure { throw failure }
        if failure is DamageFoundWhileCopying { throw failure }
        throw DamageFoundWhileCopying(description: "\(failure)")
    }
}
