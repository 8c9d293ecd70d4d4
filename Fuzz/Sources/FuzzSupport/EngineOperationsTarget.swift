import StrataFormat
import StrataIO
import StrataStorage

/// The operations of FuzzEngineOperations, by opcode (the input byte modulo their count).
public enum EngineOp: UInt8, CaseIterable, Sendable {
    case createTable, insert, update, delete, dropTable, transaction, storeBlob, deleteBlob, checkpoint, crash
    case reopen, verify, compare, reserveAndInsert, compact, graph, holdSnapshot
}

/// What the engine should hold: a simple reference model, updated only after a commit is acknowledged.
struct EngineModel {
    struct Table {
        var id: TableID
        var rows: [UInt64: [UInt8]] = [:]
        var nextRowID: UInt64 = 1
    }
    var tables: [String: Table] = [:]
    var blobs: [BlobID: [UInt8]] = [:]
    /// Every table ID ever given out: IDs are never reused.
    var tableIDsEverUsed: Set<TableID> = []
}

/// A snapshot taken earlier, with the model at that moment: it must go on showing exactly that.
struct HeldSnapshot {
    var snapshot: Snapshot
    var model: EngineModel
}

/// FuzzEngineOperations: the input is a script of engine operations (``EngineOp``) run against a store in an
/// `InMemoryFileSystem` or on the real file system, and, step by step, against ``EngineModel``.
///
/// ```
/// script := pageSize:u8 settings:u8 (opcode:u8 operands)*      at most 64 operations
/// ```
/// `pageSize` is `512 << (b % 4)`; `settings` picks the checkpoint threshold (1 KiB, 8 KiB or 64 MiB: automatic
/// checkpoints happen), the page cache (4, 64 or 16,384 pages: evictions happen) and the segment size limit
/// (4 KiB, 64 KiB, 256 MiB: segments roll over), and `settings / 27` whether the store lives in an
/// `InMemoryFileSystem` (even) or in a directory under /dev/shm read through `PosixFileSystem` (odd), where
/// committed pages are read in place through the page map (FORMAT.md §4.10: regions that grow with each
/// checkpoint while a held snapshot reads older ones, a new mapping after compaction's rename). Durability is
/// `.full`, so a simulated crash must lose nothing that was acknowledged: in memory,
/// `InMemoryFileSystem.crashImage` under a policy from the input (unsynced data dropped, kept in part, or the last
/// sector garbled); on the real file system, a process crash (the store dropped without a close, its files as
/// the kernel holds them).
///
/// Checks after every step: the rows and blobs touched read back as the model says; a full comparison
/// (tables, row counts, next row IDs, every row in order, every blob) after every crash, reopen, checkpoint,
/// compaction and every 8 steps; `verify()` clean whenever asked and after every crash, reopen and compaction;
/// a held snapshot keeps showing its moment; errors are the documented `StorageError` cases; nothing traps.
/// `graph` steps save and fetch through a `ManagedObjectContext` (``GraphHarness``).
public func fuzzEngineOperations(_ data: UnsafeRawBufferPointer) {
    var input = FuzzInput(data)
    var harness = EngineHarness(input: &input)
    harness.run(&input)
    harness.finish()
}

struct EngineHarness {
    static let tableNames = ["a", "b", "c", "d", "e", "f"]
    static let valueLengths = [0, 1, 7, 50, 100, 107, 108, 200, 500, 1000, 2000, 5000, 17_000]
    static let blobLengths = [0, 1, 100, 1000, 5000, 20_000, 70_000]
    static let maximumOperations = 64

    /// The store's file system; ``memory`` when that is an `InMemoryFileSystem`, nil on the real one.
    var fileSystem: any FileSystem
    var memory: InMemoryFileSystem?
    let directory: String
    var configuration: StoreConfiguration
    var store: Store?
    var model = EngineModel()
    var held: HeldSnapshot?
    var step = 0
    var graph = GraphHarness()
    var modelBlobBytes = 0

    init(input: inout FuzzInput) {
        let pageSize = 512 << Int(input.byte() % 4)
        let settings = input.byte()
        configuration = StoreConfiguration(
            createIfMissing: true, durability: .full, pageSize: pageSize,
            checkpointThresholdBytes: [1 << 10, 8 << 10, 64 << 20][Int(settings % 3)],
            pageCacheCapacity: [4, 64, 16_384][Int(settings / 3 % 3)],
            blobSegmentSizeLimit: [4 << 10, 64 << 10, 256 << 20][Int(settings / 9 % 3)],
            logger: quietLogger)
        if settings / 27 % 2 == 1 {
            fileSystem = PosixFileSystem()
            directory = ScratchDirectory.path("engine")  // Store.open creates it
        } else {
            let memory = InMemoryFileSystem()
            directory = "/db"
            do {
                try memory.createDirectory(at: directory)
                try memory.syncDirectory(at: "/")
            } catch { fuzzFail("in-memory file system: \(error)") }
            fileSystem = memory
            self.memory = memory
        }
        store = open("creating the store")
    }

    mutating func finish() {
        compareAll("at the end")
        if let store { must("closing") { try store.close() } }
        store = nil
        held = nil
        graph.tearDown()
        if memory == nil { ScratchDirectory.remove(directory) }
    }

    // MARK: - Helpers

    func open(_ when: String) -> Store {
        must("opening the store \(when)") {
            try Store.open(at: directory, configuration: configuration, fileSystem: fileSystem)
        }
    }

    /// Runs an engine call that must succeed.
    @discardableResult
    func must<T>(_ what: String, _ body: () throws -> T) -> T {
        do { return try body() } catch { fuzzFail("\(what) failed at step \(step): \(error)") }
    }

    var engine: Store { store! }

    func value(_ input: inout FuzzInput) -> [UInt8] {
        let length = Self.valueLengths[Int(input.byte()) % Self.valueLengths.count]
        let seed = input.byte()
        var random = FuzzRandom(seed: UInt64(seed) | UInt64(step) << 8)
        return random.bytes(length, compressible: seed & 1 == 1)
    }

    /// A table name from the input, its model entry (nil when the model has no such table) and an ID to use
    /// (a never-used one for a missing table, which the engine must reject).
    func table(_ input: inout FuzzInput) -> (name: String, model: EngineModel.Table?, id: TableID) {
        let name = Self.tableNames[Int(input.byte()) % Self.tableNames.count]
        let entry = model.tables[name]
        return (name, entry, entry?.id ?? TableID(60_000))
    }

    /// A row of the table from the input: an existing one, or (high bit) one that does not exist.
    func row(_ input: inout FuzzInput, in table: EngineModel.Table?) -> UInt64 {
        let selector = input.byte()
        let keys = table.map { $0.rows.keys.sorted() } ?? []
        if selector & 0x80 != 0 || keys.isEmpty { return (table?.nextRowID ?? 1) + UInt64(selector & 0x7F) }
        return keys[Int(selector) % keys.count]
    }

    /// Checks that a thrown error is the expected `StorageError` case.
    func expectError(_ error: Error, _ matches: (StorageError) -> Bool, _ what: String) {
        guard let storageError = error as? StorageError, matches(storageError) else {
            fuzzFail("\(what) at step \(step) threw \(error)")
        }
    }

    func checkRow(_ table: String, _ row: UInt64) {
        guard let entry = model.tables[table] else { return }
        let actual = must("reading row \(row) of \(table)") { try engine.snapshot().row(RowID(row), in: entry.id) }
        fuzzCheck(
            actual == entry.rows[row],
            "row \(row) of \(table) reads \(actual?.count ?? -1) bytes, model \(entry.rows[row]?.count ?? -1) at step \(step)"
        )
    }

    // MARK: - Running

    mutating func run(_ input: inout FuzzInput) {
        while !input.isEmpty, step < Self.maximumOperations {
            step += 1
            let op = EngineOp(rawValue: input.byte() % UInt8(EngineOp.allCases.count))!
            perform(op, &input)
            if step % 8 == 0 { compareAll("every 8 steps") }
        }
    }

    mutating func perform(_ op: EngineOp, _ input: inout FuzzInput) {
        switch op {
        case .createTable: createTable(&input)
        case .insert: insert(&input)
        case .update: update(&input)
        case .delete: delete(&input)
        case .dropTable: dropTable(&input)
        case .transaction: transaction(&input)
        case .storeBlob: storeBlob(&input)
        case .deleteBlob: deleteBlob(&input)
        case .checkpoint:
            must("checkpoint") { try engine.checkpoint() }
            compareAll("after a checkpoint")
        case .crash: crash(&input)
        case .reopen:
            must("closing") { try engine.close() }
            store = nil
            store = open("after a close")
            compareAll("after a reopen")
            verify("after a reopen")
        case .verify: verify("when asked")
        case .compare: compareAll("when asked")
        case .reserveAndInsert: reserveAndInsert(&input)
        case .compact: compact()
        case .graph: graph.perform(&input, step: step)
        case .holdSnapshot:
            if held == nil { held = HeldSnapshot(snapshot: engine.snapshot(), model: model) }
        }
    }

    mutating func createTable(_ input: inout FuzzInput) {
        let (name, entry, _) = table(&input)
        do {
            let id = try engine.write { try $0.createTable(named: name) }
            fuzzCheck(entry == nil, "created table \(name), which exists")
            fuzzCheck(!model.tableIDsEverUsed.contains(id), "table ID \(id) reused")
            model.tableIDsEverUsed.insert(id)
            model.tables[name] = EngineModel.Table(id: id)
        } catch {
            expectError(error, { if case .tableExists = $0 { entry != nil } else { false } }, "createTable(\(name))")
        }
    }

    mutating func insert(_ input: inout FuzzInput) {
        let (name, entry, id) = table(&input)
        let bytes = value(&input)
        do {
            let row = try engine.write { try $0.insert(bytes, into: id) }
            guard let entry else { fuzzFail("inserted into missing table \(name)") }
            fuzzCheck(
                row.rawValue >= entry.nextRowID && entry.rows[row.rawValue] == nil,
                "insert gave row \(row), next \(entry.nextRowID)")
            model.tables[name]!.rows[row.rawValue] = bytes
            model.tables[name]!.nextRowID = row.rawValue + 1
            checkRow(name, row.rawValue)
        } catch {
            expectError(error, { if case .noSuchTable = $0 { entry == nil } else { false } }, "insert into \(name)")
        }
    }

    mutating func update(_ input: inout FuzzInput) {
        let (name, entry, id) = table(&input)
        let row = row(&input, in: entry)
        let bytes = value(&input)
        do {
            try engine.write { try $0.update(RowID(row), in: id, to: bytes) }
            fuzzCheck(entry?.rows[row] != nil, "updated missing row \(row) of \(name)")
            model.tables[name]!.rows[row] = bytes
            checkRow(name, row)
        } catch {
            expectError(
                error,
                {
                    switch $0 {
                    case .noSuchTable: entry == nil
                    case .rowNotFound: entry != nil && entry!.rows[row] == nil
                    default: false
                    }
                }, "update of row \(row) of \(name)")
        }
    }

    mutating func delete(_ input: inout FuzzInput) {
        let (name, entry, id) = table(&input)
        let row = row(&input, in: entry)
        do {
            let existed = try engine.write { try $0.delete(RowID(row), from: id) }
            guard let entry else { fuzzFail("deleted from missing table \(name)") }
            fuzzCheck(existed == (entry.rows[row] != nil), "delete of row \(row) of \(name) returned \(existed)")
            model.tables[name]!.rows[row] = nil
            checkRow(name, row)
        } catch {
            expectError(error, { if case .noSuchTable = $0 { entry == nil } else { false } }, "delete from \(name)")
        }
    }

    mutating func dropTable(_ input: inout FuzzInput) {
        let (name, entry, id) = table(&input)
        do {
            try engine.write { try $0.dropTable(id) }
            fuzzCheck(entry != nil, "dropped missing table \(name)")
            model.tables[name] = nil
            fuzzCheck(engine.snapshot().table(named: name) == nil, "dropped table \(name) still listed")
        } catch {
            expectError(error, { if case .noSuchTable = $0 { entry == nil } else { false } }, "dropTable(\(name))")
        }
    }

    struct Abort: Error {}

    /// Several inserts, updates and deletes in one transaction on one table; aborted when the input says so
    /// (then nothing may change).
    mutating func transaction(_ input: inout FuzzInput) {
        let (name, entry, id) = table(&input)
        let control = input.byte()
        let abort = control & 0x80 != 0
        guard var working = entry else { return }
        let before = model
        var operations: [(kind: Int, row: UInt64, value: [UInt8])] = []
        for _ in 0..<(Int(control % 6) + 1) {
            let kind = Int(input.byte() % 3)
            let row = row(&input, in: working)
            let bytes = kind == 2 ? [] : value(&input)
            operations.append((kind, row, bytes))
            // Track the rows the transaction makes so that later operations can pick them.
            switch kind {
            case 0: working.rows[working.nextRowID] = bytes; working.nextRowID += 1
            case 1: if working.rows[row] != nil { working.rows[row] = bytes }
            default: working.rows[row] = nil
            }
        }
        var expected = entry!
        do {
            try engine.write { txn in
                for operation in operations {
                    switch operation.kind {
                    case 0:
                        let row = try txn.insert(operation.value, into: id)
                        fuzzCheck(
                            row.rawValue == expected.nextRowID,
                            "insert in a transaction gave \(row), expected \(expected.nextRowID)")
                        expected.rows[row.rawValue] = operation.value
                        expected.nextRowID = row.rawValue + 1
                    case 1:
                        if expected.rows[operation.row] != nil {
                            try txn.update(RowID(operation.row), in: id, to: operation.value)
                            expected.rows[operation.row] = operation.value
                        }
                    default:
                        let existed = try txn.delete(RowID(operation.row), from: id)
                        fuzzCheck(
                            existed == (expected.rows[operation.row] != nil),
                            "delete in a transaction returned \(existed)")
                        expected.rows[operation.row] = nil
                    }
                    let seen = try txn.row(RowID(operation.row), in: id)
                    if operation.kind != 0 {
                        fuzzCheck(seen == expected.rows[operation.row], "a transaction does not see its own write")
                    }
                }
                let count = try txn.rowCount(in: id)
                fuzzCheck(count == expected.rows.count, "row count inside a transaction")
                if abort { throw Abort() }
            }
            fuzzCheck(!abort, "an aborted transaction committed")
            model.tables[name] = expected
        } catch is Abort {
            model = before
        } catch {
            fuzzFail("transaction on \(name) failed at step \(step): \(error)")
        }
        compareTable(name, engine.snapshot(), model, "after a transaction")
    }

    mutating func storeBlob(_ input: inout FuzzInput) {
        let selector = input.byte()
        let seed = input.byte()
        var length = Self.blobLengths[Int(selector) % Self.blobLengths.count]
        // Now and then a blob of more than one chunk (1 MiB), kept rare: it costs milliseconds under ASan.
        if selector == 0xFF { length = BlobSegmentFormat.chunkSize + Int(seed) }
        guard modelBlobBytes + length <= 8 << 20 else { return }
        var random = FuzzRandom(seed: UInt64(seed) | UInt64(step) << 8)
        let bytes = random.bytes(length, compressible: seed & 1 == 1)
        let abort = seed & 0x80 != 0 && selector & 1 == 1
        do {
            let blob = try engine.write { txn -> BlobID in
                let blob = try txn.storeBlob(bytes)
                let read = try txn.readBlob(blob)
                fuzzCheck(read == bytes, "a transaction does not read back its blob")
                if abort { throw Abort() }
                return blob
            }
            fuzzCheck(model.blobs[blob] == nil, "\(blob) given twice")
            model.blobs[blob] = bytes
            modelBlobBytes += length
            let read = must("reading \(blob)") { try engine.snapshot().readBlob(blob) }
            fuzzCheck(read == bytes, "\(blob) reads back wrong")
        } catch is Abort {
        } catch {
            fuzzFail("storing a blob of \(length) bytes failed at step \(step): \(error)")
        }
    }

    mutating func deleteBlob(_ input: inout FuzzInput) {
        let selector = input.byte()
        let ids = model.blobs.keys.sorted()
        let blob =
            ids.isEmpty || selector & 0x80 != 0 ? BlobID(1_000 + UInt64(selector)) : ids[Int(selector) % ids.count]
        let existed = must("deleting \(blob)") { try engine.write { try $0.deleteBlob(blob) } }
        fuzzCheck(existed == (model.blobs[blob] != nil), "deleteBlob(\(blob)) returned \(existed)")
        if let bytes = model.blobs.removeValue(forKey: blob) { modelBlobBytes -= bytes.count }
        fuzzCheck(
            must("reading a deleted blob") { try engine.snapshot().readBlob(blob) } == nil,
            "deleted \(blob) still reads")
    }

    mutating func reserveAndInsert(_ input: inout FuzzInput) {
        let (name, entry, id) = table(&input)
        let count = Int(input.byte() % 4) + 1
        let bytes = value(&input)
        do {
            let first = try engine.write { txn -> RowID in
                let first = try txn.reserveRowIDs(count, in: id)
                try txn.insert(bytes, into: id, at: first)
                return first
            }
            guard let entry else { fuzzFail("reserved rows in missing table \(name)") }
            fuzzCheck(first.rawValue == entry.nextRowID, "reserved \(first), expected \(entry.nextRowID)")
            model.tables[name]!.rows[first.rawValue] = bytes
            model.tables[name]!.nextRowID = first.rawValue + UInt64(count)
            checkRow(name, first.rawValue)
        } catch {
            expectError(
                error, { if case .noSuchTable = $0 { entry == nil } else { false } }, "reserveRowIDs in \(name)")
        }
    }

    mutating func crash(_ input: inout FuzzInput) {
        let selector = input.byte()
        let seed = UInt64(input.byte())
        let policy: InMemoryFileSystem.CrashPolicy =
            switch selector % 3 {
            case 0: .dropUnsynced
            case 1: .keepUnsyncedPrefix(seed: seed)
            default: .garbleLastSector(seed: seed)
            }
        guard let memory else {
            // A process crash: the store goes without a close; the kernel keeps every write. A held snapshot would
            // keep its lock, as the crashed process's would have: it goes too.
            held = nil
            store = nil
            store = open("after a process crash")
            compareAll("after a process crash")
            verify("after a process crash")
            return
        }
        let image = memory.crashImage(policy: policy)
        store = nil  // the old store goes with the old file system, without a close
        fileSystem = image
        self.memory = image
        store = open("after a crash (\(policy))")
        compareAll("after a crash (\(policy))")
        verify("after a crash (\(policy))")
    }

    mutating func compact() {
        must("closing before compaction") { try engine.close() }
        store = nil
        held = nil  // compaction deletes the segments an old snapshot reads
        must("compaction") {
            try Store.compact(at: directory, configuration: configuration, fileSystem: fileSystem)
        }
        store = open("after compaction")
        compareAll("after compaction")
        verify("after compaction")
    }

    func verify(_ when: String) {
        let report = must("verify") { try engine.verify() }
        fuzzCheck(report.isClean, "verify() \(when) at step \(step) is not clean: \(report)")
    }

    // MARK: - Comparing with the model

    mutating func compareAll(_ when: String) {
        let snapshot = engine.snapshot()
        compare(snapshot, model, when)
        if let held {
            compare(held.snapshot, held.model, "(held snapshot) " + when)
            self.held = nil
        }
    }

    func compare(_ snapshot: Snapshot, _ model: EngineModel, _ when: String) {
        fuzzCheck(
            snapshot.tableNames == model.tables.keys.sorted(),
            "tables \(snapshot.tableNames), model \(model.tables.keys.sorted()) \(when) at step \(step)")
        for name in model.tables.keys { compareTable(name, snapshot, model, when) }
        var blobs: [(BlobID, UInt64)] = []
        must("listing blobs") {
            try snapshot.forEachBlob {
                blobs.append(($0, $1)); return true
            }
        }
        let expected = model.blobs.keys.sorted()
        fuzzCheck(blobs.map(\.0) == expected, "blobs \(blobs.map(\.0)), model \(expected) \(when) at step \(step)")
        for (blob, length) in blobs {
            let bytes = model.blobs[blob]!
            fuzzCheck(
                length == UInt64(bytes.count), "\(blob) listed with \(length) bytes, model \(bytes.count) \(when)")
            fuzzCheck(
                must("reading \(blob)") { try snapshot.readBlob(blob) } == bytes,
                "\(blob) reads wrong \(when) at step \(step)")
        }
    }

    func compareTable(_ name: String, _ snapshot: Snapshot, _ model: EngineModel, _ when: String) {
        guard let entry = model.tables[name] else {
            fuzzCheck(snapshot.table(named: name) == nil, "table \(name) exists, not in the model, \(when)")
            return
        }
        fuzzCheck(
            snapshot.table(named: name) == entry.id,
            "table \(name) has ID \(String(describing: snapshot.table(named: name))), model \(entry.id) \(when)")
        fuzzCheck(
            must("rowCount") { try snapshot.rowCount(in: entry.id) } == entry.rows.count,
            "row count of \(name) \(when) at step \(step)")
        fuzzCheck(
            must("nextRowID") { try snapshot.nextRowID(in: entry.id) } == RowID(entry.nextRowID),
            "next row ID of \(name) \(when) at step \(step)")
        var rows: [(UInt64, [UInt8])] = []
        must("scanning \(name)") {
            try snapshot.forEachRow(in: entry.id) {
                rows.append(($0.rawValue, Array($1))); return true
            }
        }
        let expected = entry.rows.sorted { $0.key < $1.key }
        fuzzCheck(
            rows.map(\.0) == expected.map(\.key) && rows.map(\.1) == expected.map(\.value),
            "rows of \(name) differ from the model \(when) at step \(step): \(rows.map(\.0)) vs \(expected.map(\.key))")
        var reversed: [UInt64] = []
        must("scanning \(name) backwards") {
            try snapshot.forEachRow(in: entry.id, reverse: true) { row, _ in
                reversed.append(row.rawValue); return true
            }
        }
        fuzzCheck(reversed == expected.map(\.key).reversed(), "reverse scan of \(name) \(when) at step \(step)")
    }
}
