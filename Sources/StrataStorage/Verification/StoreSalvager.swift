import StrataFormat
import StrataIO

extension Store {
    /// Copies every readable row and blob of a damaged store into a new store, skipping (and counting)
    /// what cannot be read. The source is only read; it is never repaired in place.
    ///
    /// The algorithm (LevelDB's `repair.cc`, SQLite's `.recover`, in the engine's terms):
    /// 1. Read the source's store header. If it is damaged, rebuild it: the store ID from the log's header
    ///    (or a blob segment's), the page size from the first pages that verify with that ID's salt.
    /// 2. Find the newest valid root record. Create each of its tables in the new store with the same ID
    ///    and name.
    /// 3. Walk each table's tree from its root, skipping every page that does not verify or decode (and the
    ///    subtree under it), rows outside the key range their parents give, and long values whose overflow
    ///    chain is damaged. If a tree's root itself is unreadable, walk the same table's tree in older root
    ///    records instead (through `previousRootPage`, or walking back through the file), newest first:
    ///    its rows may be stale.
    /// 4. Copy every blob of the blob catalog whose records all verify, keeping its blob ID (rows reference
    ///    it); skip the others.
    /// 5. Raise every table's next row ID to the source's, so no row ID is ever handed out twice.
    /// 6. Apply the committed transactions of the source's log after that checkpoint, operation by
    ///    operation, skipping operations that cannot be applied, up to the log's first invalid record.
    /// 7. Close the new store (a checkpoint).
    ///
    /// As with any salvage, the result holds what could be read: rows under damaged pages are gone, rows
    /// taken from an older checkpoint may be out of date, and references to skipped rows or blobs dangle.
    /// The report says how much of each.
    ///
    /// - Parameters:
    ///   - source: the damaged store's directory.
    ///   - destination: where to create the new store; must not exist, or be an empty directory.
    ///   - configuration: for the new store (its page size is taken from the source).
    ///   - fileSystem: the file-system seam.
    ///   - progress: called now and then with rows and blobs copied.
    /// - Throws: ``StorageError/storeNotFound(path:)`` when `source` holds no store;
    ///   ``StorageError/invalidArgument(_:)`` when `destination` is not empty; ``StorageError/io(_:)``;
    ///   ``StorageError/corruption(file:offset:reason:)`` only when not even a header can be rebuilt.
    public static func salvage(
        from source: String, to destination: String, configuration: StoreConfiguration = StoreConfiguration(),
        fileSystem: any FileSystem = PosixFileSystem(), progress: ProgressHandler? = nil
    ) throws -> SalvageReport {
        if fileSystem.exists(at: destination) {
            let names: [String]
            do { names = try fileSystem.contentsOfDirectory(at: destination) } catch { throw StorageError.io(error) }
            guard names.isEmpty else {
                throw StorageError.invalidArgument("the salvage destination \(destination) exists and is not empty")
            }
        }
        var salvager = try StoreSalvager(directory: source, fileSystem: fileSystem)
        defer { salvager.close() }
        var configuration = configuration
        configuration.createIfMissing = true
        configuration.pageSize = salvager.header.pageSize
        configuration.durability = .off
        let target = try Store.open(at: destination, configuration: configuration, fileSystem: fileSystem)
        do {
            try salvager.run(into: target, progress: progress)
            try target.close()
        } catch {
            try? target.close()
            throw error
        }
        configuration.logger.info(
            "store salvaged",
            metadata: [
                "source": "\(source)", "destination": "\(destination)", "rows": "\(salvager.report.rowsCopied)",
                "blobs": "\(salvager.report.blobsCopied)", "pagesSkipped": "\(salvager.report.pagesSkipped)",
            ])
        return salvager.report
    }
}

/// The source side of ``Store/salvage(from:to:configuration:fileSystem:progress:)``.
struct StoreSalvager {
    let directory: String
    let fileSystem: any FileSystem
    let header: StoreHeader
    let pages: PageStore
    let blobs: BlobStore
    let lock: (any FileLock)?
    private(set) var report = SalvageReport()
    /// Root records, newest first, found so far (older ones are looked for only when needed).
    private var rootRecords: [RootRecordLocator.Found] = []
    private var olderSearched = false

    /// Rows and blobs gathered before each write transaction of the new store.
    private static let batchRows = 2_048
    private static let batchBytes = 8 << 20
    private static let batchBlobs = 32

    init(directory: String, fileSystem: any FileSystem) throws {
        let pagePath = StoreFileNames.path(directory, StoreFileNames.pageFile)
        guard fileSystem.exists(at: pagePath) else { throw StorageError.storeNotFound(path: directory) }
        let lockPath = StoreFileNames.path(directory, StoreFileNames.lock)
        var lock: (any FileLock)?
        if fileSystem.exists(at: lockPath) { lock = try? fileSystem.lockExistingFile(at: lockPath) }
        let file: any FileHandle
        do { file = try fileSystem.openFileForReading(at: pagePath) } catch {
            lock?.unlock()
            throw StorageError.io(error)
        }
        var report = SalvageReport()
        let header: StoreHeader
        let fileSize: UInt64
        do {
            (header, fileSize) = try ReadOnlyStore.readHeader(file)
        } catch StorageError.corruption(let path, let offset, let reason) {
            report.note("\(path) @\(offset): \(reason)")
            do {
                (header, fileSize) = try Self.rebuildHeader(file, directory: directory, fileSystem: fileSystem)
            } catch {
                try? file.close()
                lock?.unlock()
                throw error
            }
            report.headerRebuilt = true
        } catch {
            try? file.close()
            lock?.unlock()
            throw error
        }
        self.directory = directory
        self.fileSystem = fileSystem
        self.header = header
        self.lock = lock
        self.report = report
        self.pages = PageStore(
            file: file, pageSize: header.pageSize, salt: header.checksumSalt, cacheCapacity: 1024,
            durablePageCount: fileSize / UInt64(header.pageSize))
        self.blobs = try BlobStore(
            directory: directory, fileSystem: fileSystem, storeID: header.storeID, salt: header.checksumSalt,
            segmentSizeLimit: .max)
        if let newest = try RootRecordLocator(pages: pages).locate(pageCount: pages.pageCount) {
            rootRecords = [newest]
        }
    }

    func close() {
        lock?.unlock()
    }

    /// A header for a store whose page 0 is damaged: the store ID from the log or a segment header, the
    /// page size the first pages verify with.
    static func rebuildHeader(
        _ file: any FileHandle, directory: String, fileSystem: any FileSystem
    ) throws -> (StoreHeader, UInt64) {
        var candidates: [[UInt8]] = []
        let walPath = StoreFileNames.path(directory, StoreFileNames.wal)
        if let wal = try? fileSystem.openFileForReading(at: walPath) {
            if let bytes = try? wal.read(count: WALFormat.fileHeaderSize, at: 0),
                let decoded = try? bytes.withUnsafeBytes({ (buffer) throws(FormatError) in
                    try WALFileHeader.decode(buffer)
                })
            {
                candidates.append(decoded.storeID)
            }
            try? wal.close()
        }
        let names = (try? fileSystem.contentsOfDirectory(at: directory)) ?? []
        for name in names where BlobSegmentFormat.segmentID(fileName: name) != nil {
            guard let segment = try? fileSystem.openFileForReading(at: StoreFileNames.path(directory, name))
            else {
                continue
            }
            defer { try? segment.close() }
            if let bytes = try? segment.read(count: BlobSegmentFormat.headerSize, at: 0),
                let decoded = try? bytes.withUnsafeBytes({ (buffer) throws(FormatError) in
                    try BlobSegmentHeader.decode(buffer)
                }), !candidates.contains(decoded.storeID)
            {
                candidates.append(decoded.storeID)
            }
        }
        let size: UInt64
        do { size = try file.size() } catch { throw StorageError.io(error) }
        for storeID in candidates {
            var pageSize = StoreHeader.minimumPageSize
            while pageSize <= StoreHeader.maximumPageSize {
                let probe = StoreHeader(pageSize: pageSize, storeID: storeID)
                for number in 1...8 where UInt64(number + 1) * UInt64(pageSize) <= size {
                    let bytes = (try? file.read(count: pageSize, at: UInt64(number * pageSize))) ?? []
                    let verifies =
                        bytes.count == pageSize
                        && bytes.withUnsafeBytes { page in
                            (try? PageHeader.decode(page, expectedPageNumber: UInt64(number), salt: probe.checksumSalt))
                                != nil
                        }
                    if verifies { return (probe, size) }
                }
                pageSize *= 2
            }
        }
        throw StorageError.corrupt(
            file.path, at: 0,
            "the store header is damaged and no page verifies with the store ID of the log or a segment")
    }

    // MARK: - Steps 2 to 6

    mutating func run(into target: Store, progress: ProgressHandler?) throws {
        let newest = rootRecords.first
        report.checkpointGeneration = newest?.generation ?? 0
        if newest == nil, pages.pageCount > 1 { report.note("\(pages.fileName): no valid root record; trees are lost") }
        let tables = newest?.record.tables ?? []
        let total = tables.reduce(UInt64(0)) { $0 + $1.rowCount }
        var throttle = ProgressThrottle(progress, phase: "salvaging", total: total)

        // 2. The tables, with their IDs.
        try target.write { txn in
            for table in tables { try Self.createTable(table.tableID, table.name, in: txn) }
        }
        // 3-4. Their rows; the catalog's blobs.
        for table in tables {
            var summary = SalvageReport.Table(
                name: table.name, tableID: table.tableID, rowsExpected: table.rowCount, generation: newest!.generation)
            if table.name == BlobCatalog.tableName {
                var entries: [(BlobID, BlobCatalogEntry)] = []
                var undecodable: [String] = []
                try walkTable(table, summary: &summary) { key, bytes in
                    do {
                        let entry = try bytes.withUnsafeBytes { (buffer) throws(FormatError) in
                            try BlobCatalogEntry.decode(buffer)
                        }
                        entries.append((BlobID(key), entry))
                    } catch { undecodable.append("catalog entry of \(BlobID(key)): \(error)") }
                    throttle.advance()
                }
                for reason in undecodable { report.note(reason) }
                report.blobsSkipped += undecodable.count
                try copyBlobs(entries, into: target)
                summary.rowsCopied = UInt64(report.blobsCopied)
            } else {
                var batch: [(UInt64, [UInt8])] = []
                var batchBytes = 0
                let id = TableID(table.tableID)
                func flush() throws {
                    guard !batch.isEmpty else { return }
                    let rows = batch
                    try target.write { txn in
                        for (row, value) in rows { try Self.upsert(value, row: row, table: id, in: txn) }
                    }
                    batch.removeAll(keepingCapacity: true)
                    batchBytes = 0
                }
                try walkTable(table, summary: &summary) { key, bytes in
                    batch.append((key, bytes))
                    batchBytes += bytes.count
                    throttle.advance()
                    if batch.count >= Self.batchRows || batchBytes >= Self.batchBytes { try flush() }
                }
                try flush()
            }
            report.tables.append(summary)
            report.pagesSkipped += summary.pagesSkipped
            report.valuesSkipped += summary.valuesSkipped
        }
        // 5. Row ID allocators.
        try target.write { txn in
            for table in tables { try Self.reserveRows(table.tableID, upTo: table.nextRowID, in: txn) }
        }
        // 5b. The secondary indexes, rebuilt from the rows copied (an index's pages are never copied: it is
        // derived data). One that cannot be built (a row that is not a row record) is noted and left out.
        for index in newest?.record.indexes ?? [] {
            do { try target.write { txn in try Self.createIndex(index.descriptor, in: txn) } } catch {
                report.note("index '\(index.descriptor.name)' could not be rebuilt: \(error)")
            }
        }
        // 6. The log.
        try applyLog(after: newest?.record.walLSN ?? 0, into: target)
        let counts = target.snapshot().committed.tables
        for index in report.tables.indices {
            report.tables[index].rowsCopied = counts[TableID(report.tables[index].tableID)]?.rowCount ?? 0
        }
        report.rowsCopied = report.tables.filter { $0.name != BlobCatalog.tableName }.reduce(0) { $0 + $1.rowsCopied }
    }

    /// Walks a table's tree, or the same table's tree in an older root record when its root is unreadable.
    private mutating func walkTable(
        _ table: RootRecord.Table, summary: inout SalvageReport.Table, _ body: (UInt64, [UInt8]) throws -> Void
    ) throws {
        guard table.rootPage != PageFormat.noPage else { return }
        if readable(table.rootPage) {
            var visited = Set<UInt64>()
            try walk(
                table.rootPage, lower: 0, upper: nil, depth: 0, table: table.name, visited: &visited, summary: &summary,
                body)
            return
        }
        report.note(
            "\(pages.fileName) @\(pages.offset(of: table.rootPage)): root of table '\(table.name)' is unreadable")
        var index = 1
        while let older = try olderRootRecord(index) {
            index += 1
            guard
                let match = older.record.tables.first(where: { $0.tableID == table.tableID && $0.name == table.name }),
                match.rootPage != PageFormat.noPage, readable(match.rootPage)
            else { continue }
            report.note("table '\(table.name)': rows read from the older checkpoint of generation \(older.generation)")
            summary.generation = older.generation
            var visited = Set<UInt64>()
            try walk(
                match.rootPage, lower: 0, upper: nil, depth: 0, table: table.name, visited: &visited, summary: &summary,
                body)
            return
        }
        summary.pagesSkipped += 1
    }

    private func readable(_ page: UInt64) -> Bool { (try? pages.node(at: page)) != nil }

    /// The root record `index` places older than the newest (1: the previous one), if there is one.
    private mutating func olderRootRecord(_ index: Int) throws -> RootRecordLocator.Found? {
        while rootRecords.count <= index, !olderSearched {
            let current = rootRecords.last!
            var limit = current.firstPage
            // The direct pointer first: the previous record's last page is its first plus its part count, minus one.
            let previous = current.record.previousRootPage
            if previous != PageFormat.noPage, previous < current.firstPage,
                let count = try? pages.withPage(previous, { _, header in try RootRecord.part(of: header).count })
            {
                limit = min(limit, previous + UInt64(count))
            }
            if let found = try RootRecordLocator(pages: pages).locate(pageCount: limit) {
                rootRecords.append(found)
            } else {
                olderSearched = true
            }
        }
        return index < rootRecords.count ? rootRecords[index] : nil
    }

    /// Walks the subtree at `page` (keys in `lower..<upper`), skipping what does not read.
    private mutating func walk(
        _ page: UInt64, lower: UInt64, upper: UInt64?, depth: Int, table: String, visited: inout Set<UInt64>,
        summary: inout SalvageReport.Table, _ body: (UInt64, [UInt8]) throws -> Void
    ) throws {
        func skip(_ reason: String) {
            summary.pagesSkipped += 1
            report.note("\(pages.fileName) @\(pages.offset(of: page)): table '\(table)': \(reason)")
        }
        guard depth < PageFormat.maximumTreeHeight, visited.insert(page).inserted else {
            return skip("page \(page) reached twice or too deep")
        }
        let node: BTreeNode
        do { node = try pages.node(at: page) } catch StorageError.io(let error) { throw StorageError.io(error) } catch {
            return skip("\(error)")
        }
        if node.isLeaf {
            var previous: UInt64?
            for (key, value) in zip(node.keys, node.values) {
                guard key >= lower, upper.map({ key < $0 }) ?? true, previous.map({ key > $0 }) ?? true else {
                    continue
                }
                previous = key
                let bytes: [UInt8]
                do { bytes = try pages.bytes(of: value) } catch StorageError.io(let error) {
                    throw StorageError.io(error)
                } catch {
                    summary.valuesSkipped += 1
                    report.note("table '\(table)' row \(key): \(error)")
                    continue
                }
                try body(key, bytes)
            }
            return
        }
        for index in node.children.indices {
            guard case .page(let child) = node.children[index] else { continue }
            let childLower = index == 0 ? lower : max(lower, node.keys[index])
            let childUpper = index + 1 < node.count ? min(upper ?? .max, node.keys[index + 1]) : upper
            if let childUpper, childUpper <= childLower { continue }
            try walk(
                child, lower: childLower, upper: childUpper, depth: depth + 1, table: table, visited: &visited,
                summary: &summary, body)
        }
    }

    // MARK: - Blobs

    /// Whether every record of a blob verifies, and its content checksum.
    private mutating func blobIsReadable(_ blob: BlobID, _ entry: BlobCatalogEntry) -> Bool {
        let reader = BlobReader(blob: blob, entry: entry, blobs: blobs, mode: .verifyEverything)
        do {
            while try reader.next() != nil {}
            return true
        } catch {
            report.note("\(error)")
            return false
        }
    }

    /// Copies one verified blob into `txn` under its own ID.
    private func copyBlob(_ blob: BlobID, _ entry: BlobCatalogEntry, in txn: WriteTransaction) throws {
        let reader = BlobReader(blob: blob, entry: entry, blobs: blobs, mode: .verifyEverything)
        if try BlobCatalog.lookup(blob, in: txn.state, tree: txn.tree) != nil {
            _ = try txn.deleteBlob(blob)
        }
        txn.wroteBlobs = true
        let writer = try BlobWriter(transaction: txn, blobs: txn.blobs, id: blob)
        while let chunk = try reader.next() { try writer.write(chunk) }
        _ = try writer.finish()
    }

    private mutating func copyBlobs(_ entries: [(BlobID, BlobCatalogEntry)], into target: Store) throws {
        var start = 0
        while start < entries.count {
            var batch: [(BlobID, BlobCatalogEntry)] = []
            var bytes: UInt64 = 0
            while start < entries.count, batch.count < Self.batchBlobs, bytes < UInt64(Self.batchBytes) {
                let (blob, entry) = entries[start]
                start += 1
                guard blobIsReadable(blob, entry) else {
                    report.blobsSkipped += 1
                    continue
                }
                batch.append((blob, entry))
                bytes += entry.storedBytes
            }
            let chosen = batch
            try target.write { txn in
                for (blob, entry) in chosen { try copyBlob(blob, entry, in: txn) }
            }
            report.blobsCopied += batch.count
            report.blobBytesCopied += batch.reduce(0) { $0 + $1.1.rawLength }
        }
    }

    // MARK: - Operations on the new store (inside its write transactions)

    static func createTable(_ id: UInt32, _ name: String, in txn: WriteTransaction) throws {
        if let existing = txn.state.tables[TableID(id)] {
            guard existing.name == name else {
                throw StorageError.invalidArgument("table \(id) is '\(existing.name)', not '\(name)'")
            }
            return
        }
        try txn.state.createTable(id: TableID(id), name: name)
        txn.log.appendOperation { WALOperation.encodeCreateTable(tableID: id, name: name, into: &$0) }
    }

    /// Creates an index under its own ID, filled from the rows salvaged so far.
    static func createIndex(_ descriptor: IndexDescriptor, in txn: WriteTransaction) throws {
        let id = IndexID(descriptor.indexID)
        let definition = IndexDefinition(descriptor)
        try txn.state.createIndex(id: id, definition: definition, tree: txn.tree, owner: txn.tag)
        txn.log.appendOperation { WALOperation.encodeCreateIndex(definition.descriptor(id: id), into: &$0) }
    }

    static func reserveRows(_ id: UInt32, upTo next: UInt64, in txn: WriteTransaction) throws {
        guard let table = txn.state.tables[TableID(id)], table.nextRowID < next else { return }
        try txn.state.reserveRows(table: TableID(id), upTo: next)
        txn.log.appendOperation { WALOperation.encodeReserveRows(tableID: id, nextRowID: next, into: &$0) }
    }

    static func upsert(_ value: [UInt8], row: UInt64, table: TableID, in txn: WriteTransaction) throws {
        guard row < UInt64.max else { throw StorageError.invalidArgument("row ID \(row) out of range") }
        if try txn.tree.get(txn.state.table(table).root, row) != nil {
            try txn.update(RowID(row), in: table, to: value)
        } else {
            try txn.insert(value, into: table, at: RowID(row))
        }
    }

    // MARK: - Step 6: the log

    private mutating func applyLog(after coveredLSN: UInt64, into target: Store) throws {
        let walPath = StoreFileNames.path(directory, StoreFileNames.wal)
        guard let file = try? fileSystem.openFileForReading(at: walPath) else {
            report.note("\(walPath): missing; no change after the checkpoint is recovered")
            return
        }
        defer { try? file.close() }
        let reader = WALReader(file: file)
        let walHeader: WALFileHeader
        do { walHeader = try reader.readHeader() } catch {
            report.note("\(walPath): \(error); no change after the checkpoint is recovered")
            return
        }
        guard walHeader.storeID == header.storeID else {
            report.note("\(walPath): belongs to another store; ignored")
            return
        }
        if walHeader.startLSN > coveredLSN + 1 {
            report.note(
                "\(walPath): starts at LSN \(walHeader.startLSN), after the checkpoint used (\(coveredLSN)): the changes in "
                    + "between are lost; the log is applied over the older state")
        }
        var operations: [WALOperation] = []
        var failure: Error?
        let summary = try reader.read { header, payload, offset in
            guard header.lsn > coveredLSN, failure == nil else { return }
            switch header.type {
            case .operations:
                do { try WALOperation.decodeAll(payload) { operations.append($0) } } catch {
                    report.note("\(walPath) @\(offset): operations record LSN \(header.lsn): \(error)")
                    report.logOperationsSkipped += 1
                }
            case .commit:
                let transaction = operations
                operations.removeAll()
                do { try apply(transaction, into: target) } catch { failure = error }
                report.logTransactionsApplied += 1
            }
        }
        if let failure { throw failure }
        if let reason = summary.stopReason {
            report.note("\(walPath) @\(summary.validEnd): the log does not read past here (\(reason))")
        }
    }

    private mutating func apply(_ operations: [WALOperation], into target: Store) throws {
        var skipped: [String] = []
        var blobsToCopy: [(BlobID, BlobCatalogEntry)] = []
        try target.write { txn in
            for operation in operations {
                do {
                    switch operation {
                    case .createTable(let id, let name):
                        try Self.createTable(id, name, in: txn)
                    case .dropTable(let id):
                        if let table = txn.state.tables[TableID(id)], !table.isEngineTable {
                            try txn.dropTable(TableID(id))
                        }
                    case .put(let id, let row, let value):
                        guard let table = txn.state.tables[TableID(id)] else { throw StorageError.noSuchTable("\(id)") }
                        if table.name == BlobCatalog.tableName {
                            let entry = try value.withUnsafeBytes { (buffer) throws(FormatError) in
                                try BlobCatalogEntry.decode(buffer)
                            }
                            blobsToCopy.append((BlobID(row), entry))
                        } else {
                            try Self.upsert(value, row: row, table: TableID(id), in: txn)
                        }
                    case .delete(let id, let row):
                        guard let table = txn.state.tables[TableID(id)] else { throw StorageError.noSuchTable("\(id)") }
                        if table.name == BlobCatalog.tableName {
                            _ = try txn.deleteBlob(BlobID(row))
                        } else {
                            _ = try txn.deleteRow(RowID(row), from: TableID(id))
                        }
                    case .reserveRows(let id, let next):
                        try Self.reserveRows(id, upTo: next, in: txn)
                    case .createIndex(let descriptor):
                        try Self.createIndex(descriptor, in: txn)
                    case .dropIndex(let id):
                        try txn.dropIndex(IndexID(id))
                    }
                } catch {
                    skipped.append("log operation \(operation.summary): \(error)")
                }
            }
        }
        for reason in skipped { report.note(reason) }
        report.logOperationsSkipped += skipped.count
        let before = report.blobsSkipped
        try copyBlobs(blobsToCopy, into: target)
        report.logOperationsSkipped += report.blobsSkipped - before
    }
}

extension WALOperation {
    /// A short description for reports: the kind, the table and the row, without the value.
    var summary: String {
        switch self {
        case .createTable(let id, let name): "createTable \(id) '\(name)'"
        case .dropTable(let id): "dropTable \(id)"
        case .put(let id, let row, let value): "put table \(id) row \(row) (\(value.count) bytes)"
        case .delete(let id, let row): "delete table \(id) row \(row)"
        case .reserveRows(let id, let next): "reserveRows table \(id) up to \(next)"
        case .createIndex(let descriptor):
            "createIndex \(descriptor.indexID) '\(descriptor.name)' on table \(descriptor.tableID)"
        case .dropIndex(let id): "dropIndex \(id)"
        }
    }
}
