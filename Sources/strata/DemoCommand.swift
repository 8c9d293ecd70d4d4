import ArgumentParser
import Foundation
import Logging
import StrataStorage
import StrataWorkload

/// `strata demo`: loads the company workload into a fresh store with the storage engine, checks every row comes
/// back, and reports how long each step took.
///
/// Steps, each timed and printed as it ends:
///
/// 1. Remove the previous demo store at DIRECTORY (see "Fresh store" below), then create the store.
/// 2. Bulk load: create tables `department` and `employee`, insert the 100 departments and N employees of
///    WORKLOAD.md (``CompanyWorkload``) in one write transaction, rows encoded by ``DemoRow``.
/// 3. Scan all employees by row ID and check the count, the salary sum and a checksum of every row's bytes
///    against what was inserted.
/// 4. 10,000 point lookups of random employees by row ID, each row compared with what was inserted.
/// 5. Close the store (closing checkpoints: the load's pages reach the page file); reopen it (recovery replays
///    whatever the log holds beyond the checkpoint); check the departments, and count and scan the employees
///    again with the same checks.
/// 6. Checkpoint (little or nothing left to write after a clean close), close, and print the store's files and
///    their sizes, what recovery did at the reopen, and the engine's counters.
///
/// Fresh store: the demo always starts from an empty store so that runs are repeatable. If DIRECTORY exists it
/// must be empty or hold a Strata store (its page file), and it is removed first; anything else is refused, so
/// a mistyped path never deletes unrelated files. The store is left in place afterwards for inspection.
///
/// Any check that does not hold stops the demo with exit code 1 and a message naming the check.
struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Load the company workload into a fresh store, verify it, and time each step.",
        discussion: """
            Creates DIRECTORY (removing a previous demo store there first: the demo always starts fresh and \
            refuses a non-empty directory that is not a Strata store), bulk-loads 100 departments and N \
            employees in one transaction, reads them back by a range scan and by 10,000 random point lookups, \
            closes, reopens and verifies again, checkpoints, and prints each step's time and rate.
            """
    )

    @Argument(help: "The store directory (removed first if it holds a previous store).")
    var directory = "strata-demo-store"

    @Option(name: .long, help: "The number of employees to load (N).")
    var employees = 100_000

    @Option(
        name: .long,
        help: "When commits are durable: full (synced), normal (synced within 100 ms) or off (at checkpoints)."
    )
    var durability = DurabilityChoice.full

    @OptionGroup var logging: LoggingOptions

    /// The number of random point lookups of step 4.
    static let lookupCount = 10_000
    /// The seed of the generator choosing which employees step 4 looks up.
    static let lookupSeed: UInt64 = 1

    func validate() throws {
        guard employees >= 0 else { throw ValidationError("--employees must not be negative") }
        guard !directory.isEmpty else { throw ValidationError("the store directory must not be empty") }
    }

    func run() throws {
        logging.bootstrap()
        var demo = DemoRun(
            directory: URL(fileURLWithPath: directory).standardizedFileURL.path,
            employeeCount: employees,
            durability: durability.engineValue,
            durabilityName: durability.rawValue
        )
        try demo.run()
    }
}

extension DemoCommand {
    /// The values of `--durability`.
    enum DurabilityChoice: String, ExpressibleByArgument, CaseIterable {
        case full, normal, off

        /// The engine's setting for this choice.
        var engineValue: StoreConfiguration.Durability {
            switch self {
            case .full: .full
            case .normal: .normal(maxDelayMilliseconds: 100)
            case .off: .off
            }
        }
    }
}

/// A check of the demo that did not hold, or a store the demo refuses to remove.
struct DemoFailure: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) {
        self.description = description
    }
}

/// One run of the demo: the steps of ``DemoCommand`` and what they must find.
private struct DemoRun {
    let directory: String
    let employeeCount: Int
    let durability: StoreConfiguration.Durability
    let durabilityName: String
    let workload: CompanyWorkload
    let report = DemoReport()

    /// What the bulk load inserted, to check every read against.
    private var inserted = InsertedEmployees()

    init(directory: String, employeeCount: Int, durability: StoreConfiguration.Durability, durabilityName: String) {
        self.directory = directory
        self.employeeCount = employeeCount
        self.durability = durability
        self.durabilityName = durabilityName
        self.workload = CompanyWorkload(employeeCount: employeeCount)
    }

    mutating func run() throws {
        print(
            "strata demo: \(workload.departments.count) departments + \(DemoReport.grouped(employeeCount)) employees, "
                + "durability \(durabilityName)"
        )
        print("store: \(directory)")
        print("machine: \(DemoReport.machineDescription)")
        let removed = try removePreviousStore()
        if removed { print("(removed the previous demo store)") }
        report.printHeader()

        var store = try report.measure("create store") {
            try Store.open(at: directory, configuration: configuration(createIfMissing: true))
        }
        let (tables, inserted) = try report.measure(
            "bulk load (1 transaction)",
            rows: CompanyWorkload.departmentCount + employeeCount
        ) {
            try bulkLoad(into: store)
        }
        self.inserted = inserted
        let snapshot = store.snapshot()
        try report.measure("scan employees + verify", rows: employeeCount) {
            try verifyEmployees(in: snapshot, table: tables.employee, when: "after the bulk load")
        }
        try report.measure("point lookups", rows: Self.lookupCountFor(employeeCount)) {
            try lookUpRandomEmployees(in: snapshot, table: tables.employee)
        }
        // Closing checkpoints: this is where the bulk load's pages reach the page file.
        try report.measure("close (checkpoints)") { try store.close() }

        store = try report.measure("reopen") {
            try Store.open(at: directory, configuration: configuration(createIfMissing: false))
        }
        try report.measure("count + verify after reopen", rows: CompanyWorkload.departmentCount + employeeCount) {
            try verifyAfterReopen(store.snapshot())
        }
        try report.measure("checkpoint") { try store.checkpoint() }
        let statistics = store.statistics
        try report.measure("close") { try store.close() }

        report.printFiles(in: directory)
        report.printEngine(recovery: store.recoveryReport, statistics: statistics)
        print("all checks passed")
    }

    private func configuration(createIfMissing: Bool) -> StoreConfiguration {
        StoreConfiguration(createIfMissing: createIfMissing, durability: durability)
    }

    private static func lookupCountFor(_ employeeCount: Int) -> Int {
        employeeCount == 0 ? 0 : DemoCommand.lookupCount
    }

    // MARK: - Fresh store

    /// Removes `directory` if it is empty or holds a Strata store; refuses anything else.
    ///
    /// - Returns: Whether something was removed.
    private func removePreviousStore() throws -> Bool {
        let files = FileManager.default
        var isDirectory: ObjCBool = false
        guard files.fileExists(atPath: directory, isDirectory: &isDirectory) else { return false }
        guard isDirectory.boolValue else {
            throw DemoFailure("\(directory) exists and is not a directory; choose another store directory")
        }
        let entries = try files.contentsOfDirectory(atPath: directory)
        guard entries.isEmpty || Store.exists(at: directory) else {
            throw DemoFailure(
                "\(directory) is not empty and holds no Strata store; "
                    + "the demo removes only a previous store: choose another directory or remove it yourself"
            )
        }
        try Store.destroy(at: directory)
        return !entries.isEmpty
    }

    // MARK: - Steps

    private func bulkLoad(
        into store: Store
    ) throws -> (tables: (department: TableID, employee: TableID), inserted: InsertedEmployees) {
        let workload = self.workload
        return try store.write { transaction in
            let department = try transaction.createTable(named: "department")
            let employee = try transaction.createTable(named: "employee")
            var departmentIDs: [RowID] = []
            departmentIDs.reserveCapacity(workload.departments.count)
            for row in workload.departments {
                departmentIDs.append(try transaction.insert(DemoRow.encode(row), into: department))
            }
            var inserted = InsertedEmployees(departmentIDs: departmentIDs, capacity: workload.employees.count)
            for row in workload.employees {
                let bytes = DemoRow.encode(row, departmentID: departmentIDs[row.department - 1])
                let id = try transaction.insert(bytes, into: employee)
                bytes.withUnsafeBytes { inserted.append(id: id, salary: row.salary, bytes: $0) }
            }
            return ((department: department, employee: employee), inserted)
        }
    }

    private func verifyEmployees(in snapshot: Snapshot, table: TableID, when: String) throws {
        var count = 0
        var salaries: Int64 = 0
        var checksum: UInt64 = 0
        var previous: RowID?
        var failure: String?
        try snapshot.forEachRow(in: table) { id, bytes in
            if let previous, id <= previous {
                failure = "the scan returned \(id) after \(previous)"
                return false
            }
            previous = id
            do {
                salaries &+= try DemoRow.decodeEmployee(bytes).salary
            } catch {
                failure = "employee \(id): \(error)"
                return false
            }
            checksum &+= fnv1a(bytes)
            count += 1
            return true
        }
        if let failure { throw DemoFailure("check failed: scan \(when): \(failure)") }
        try check(count == inserted.count, "scan \(when): \(count) employees, expected \(inserted.count)")
        try check(
            salaries == inserted.salarySum,
            "scan \(when): salary sum \(salaries), expected \(inserted.salarySum)"
        )
        try check(checksum == inserted.checksum, "scan \(when): the rows' bytes differ from those inserted")
        let rowCount = try snapshot.rowCount(in: table)
        try check(rowCount == inserted.count, "rowCount \(when): \(rowCount), expected \(inserted.count)")
    }

    private func lookUpRandomEmployees(in snapshot: Snapshot, table: TableID) throws {
        guard inserted.count > 0 else { return }
        var generator = SplitMix64(seed: DemoCommand.lookupSeed)
        for _ in 0..<DemoCommand.lookupCount {
            let index = Int(generator.uniform(0, UInt64(inserted.count - 1)))
            let id = inserted.rowIDs[index]
            let found = try snapshot.withRow(id, in: table) { bytes in
                _ = try DemoRow.decodeEmployee(bytes)  // Checks the layout; the hash checks every byte.
                return fnv1a(bytes) == inserted.rowHashes[index]
            }
            guard let matches = found else { throw DemoFailure("point lookup: employee \(id) not found") }
            try check(matches, "point lookup: employee \(id) differs from the row inserted")
        }
    }

    private func verifyAfterReopen(_ snapshot: Snapshot) throws {
        guard let department = snapshot.table(named: "department") else {
            throw DemoFailure("after reopen: no table 'department'")
        }
        guard let employee = snapshot.table(named: "employee") else {
            throw DemoFailure("after reopen: no table 'employee'")
        }
        for (index, id) in inserted.departmentIDs.enumerated() {
            guard let row = try snapshot.row(id, in: department) else {
                throw DemoFailure("after reopen: department \(id) not found")
            }
            let decoded = try row.withUnsafeBytes { try DemoRow.decodeDepartment($0) }
            try check(
                decoded == workload.departments[index],
                "after reopen: department \(id) differs from the row inserted"
            )
        }
        let departments = try snapshot.rowCount(in: department)
        try check(
            departments == workload.departments.count,
            "after reopen: \(departments) departments, expected \(workload.departments.count)"
        )
        try verifyEmployees(in: snapshot, table: employee, when: "after reopen")
    }

    private func check(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        if !condition { throw DemoFailure("check failed: " + message()) }
    }
}

/// What the bulk load inserted into `employee`: the row IDs and enough to check each row and the whole table.
private struct InsertedEmployees {
    var departmentIDs: [RowID] = []
    var rowIDs: [RowID] = []
    /// FNV-1a of each row's bytes.
    var rowHashes: [UInt64] = []
    var salarySum: Int64 = 0
    /// The wrapping sum of ``rowHashes``: independent of the order rows are read in.
    var checksum: UInt64 = 0

    var count: Int { rowIDs.count }

    init() {}

    init(departmentIDs: [RowID], capacity: Int) {
        self.departmentIDs = departmentIDs
        rowIDs.reserveCapacity(capacity)
        rowHashes.reserveCapacity(capacity)
    }

    mutating func append(id: RowID, salary: Int64, bytes: UnsafeRawBufferPointer) {
        let hash = fnv1a(bytes)
        rowIDs.append(id)
        rowHashes.append(hash)
        salarySum &+= salary
        checksum &+= hash
    }
}

/// 64-bit FNV-1a of `bytes`: the demo's fingerprint of a row.
private func fnv1a(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    for byte in bytes {
        hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
    }
    return hash
}
