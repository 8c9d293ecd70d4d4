import Logging
import StrataFormat
import StrataStorage
import StrataWorkload

/// Rows of the company workload in Strata's engine: row records (FORMAT.md §6), the format the object store
/// writes and the only one the engine's secondary indexes read, encoded by hand here (as a prepared-statement
/// user of SQLite binds its values) and checked once against `RowRecord.decodeAll`.
///
/// Employee (entity 2, 4 fields): `salary:int64 hired:date department:reference name:string`, 69 to 77 bytes.
/// Salary first, so that scans find it at a fixed offset (30) with one load; `hired` is stored as a row-record
/// date (seconds since 2001). Department (entity 1, 2 fields): `name:string budget:double`, as the object
/// store lays it out.
enum EmployeeRow {
    static let entityID: UInt16 = 2
    static let fieldCount = 4
    /// Where the fields start: the 13-byte header, then 4 field ends of 4 bytes.
    static let fieldsOffset = RowRecord.headerSize + RowRecord.fieldEndSize * fieldCount
    /// Field positions, for the indexes.
    static let salaryField = 0
    static let hiredField = 1
    static let departmentField = 2
    static let nameField = 3
    /// Byte offsets of the payloads (each after its one-byte tag).
    static let salaryOffset = fieldsOffset + 1
    static let hiredOffset = fieldsOffset + 10
    static let departmentOffset = fieldsOffset + 19
    static let nameOffset = fieldsOffset + 28
    /// 1970-01-01 in seconds since 2001-01-01 (the row-record date's epoch).
    static let unixToReference = 978_307_200.0

    static func encode(_ employee: Employee) -> [UInt8] {
        var name = employee.name
        return name.withUTF8 { nameBytes in
            [UInt8](unsafeUninitializedCapacity: nameOffset + nameBytes.count) { buffer, count in
                let raw = UnsafeMutableRawBufferPointer(buffer)
                raw[0] = RowRecord.formatVersion
                raw.storeBytes(of: entityID.littleEndian, toByteOffset: 1, as: UInt16.self)
                raw.storeBytes(of: UInt64(1).littleEndian, toByteOffset: 3, as: UInt64.self)
                raw.storeBytes(of: UInt16(fieldCount).littleEndian, toByteOffset: 11, as: UInt16.self)
                let ends: [UInt32] = [9, 18, 27, UInt32(28 + nameBytes.count)]
                for (index, end) in ends.enumerated() {
                    raw.storeBytes(of: end.littleEndian, toByteOffset: 13 + 4 * index, as: UInt32.self)
                }
                raw[salaryOffset - 1] = RowRecord.Tag.int64.rawValue
                raw.storeBytes(of: employee.salary.littleEndian, toByteOffset: salaryOffset, as: Int64.self)
                raw[hiredOffset - 1] = RowRecord.Tag.date.rawValue
                raw.storeBytes(
                    of: (employee.hired - unixToReference).bitPattern.littleEndian, toByteOffset: hiredOffset,
                    as: UInt64.self)
                raw[departmentOffset - 1] = RowRecord.Tag.reference.rawValue
                raw.storeBytes(
                    of: UInt64(employee.department).littleEndian, toByteOffset: departmentOffset, as: UInt64.self)
                raw[nameOffset - 1] = RowRecord.Tag.string.rawValue
                UnsafeMutableRawBufferPointer(rebasing: raw[nameOffset...]).copyMemory(
                    from: UnsafeRawBufferPointer(nameBytes))
                count = nameOffset + nameBytes.count
            }
        }
    }

    @inline(__always)
    static func salary(_ row: UnsafeRawBufferPointer) -> Int64 {
        Int64(littleEndian: row.loadUnaligned(fromByteOffset: salaryOffset, as: Int64.self))
    }

    @inline(__always)
    static func department(_ row: UnsafeRawBufferPointer) -> Int {
        Int(UInt64(littleEndian: row.loadUnaligned(fromByteOffset: departmentOffset, as: UInt64.self)))
    }

    @inline(__always)
    static func name(_ row: UnsafeRawBufferPointer) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: row[nameOffset...]), as: UTF8.self)
    }

    /// A copy of `row` with another salary.
    static func withSalary(_ row: [UInt8], _ salary: Int64) -> [UInt8] {
        var copy = row
        copy.withUnsafeMutableBytes {
            $0.storeBytes(of: salary.littleEndian, toByteOffset: salaryOffset, as: Int64.self)
        }
        return copy
    }

    /// Checks the hand encoding against the format's own decoder (once, untimed).
    static func checkEncoding(_ employee: Employee) throws {
        let bytes = encode(employee)
        let (header, fields) = try RowRecord.decodeAll(bytes)
        let expected: [RowRecord.Field] = [
            .int64(employee.salary), .date(secondsSinceReferenceDate: employee.hired - unixToReference),
            .reference(UInt64(employee.department)), .string(employee.name),
        ]
        try check(
            header.entityID == entityID && fields == expected,
            "the engine's employee row does not decode as a row record: \(fields)")
        try bytes.withUnsafeBytes { raw in
            try check(
                salary(raw) == employee.salary && department(raw) == employee.department
                    && name(raw) == employee.name, "the engine's employee row accessors")
        }
    }
}

enum DepartmentRow {
    static let entityID: UInt16 = 1
    static let nameField = 0

    static func encode(_ department: Department) -> [UInt8] {
        RowRecord.encode(
            entityID: entityID, rowVersion: 1, fields: [.string(department.name), .double(department.budget)])
    }

    /// The name of a department row.
    static func name(_ row: [UInt8]) throws -> String {
        guard case .string(let name) = try RowRecord.field(at: nameField, in: row) else {
            throw BenchmarkFailure("a department row has no name")
        }
        return name
    }
}

/// Opening and filling the engine's company store.
enum StrataCompany {
    static let departmentTable = "department"
    static let employeeTable = "employee"
    /// The index of WORKLOAD.md's schema on the employee's department (SQLite: `employee_department`).
    static let departmentIndex = "employee_department"
    /// W4b's index on salary, and W4c's on the department's name (SQLite: the same names).
    static let salaryIndex = "employee_salary"
    static let departmentNameIndex = "department_name"

    /// The engine's configuration for every figure: its defaults (4 KiB pages, a 16,384-page cache = 64 MiB,
    /// checkpoint at 64 MiB of log) with the given durability; the engine's own log lines go to standard
    /// error at warning level and above.
    static func configuration(
        durability: StoreConfiguration.Durability = .full, checkpointThresholdBytes: UInt64 = 64 << 20
    ) -> StoreConfiguration {
        StoreConfiguration(
            durability: durability, checkpointThresholdBytes: checkpointThresholdBytes,
            logger: Logger(label: "strata.benchmark"))
    }

    /// Creates an empty store with the two tables.
    static func create(
        at directory: String, configuration: StoreConfiguration = configuration()
    ) throws -> (store: Store, departments: TableID, employees: TableID) {
        remove(directory)
        let store = try Store.open(at: directory, configuration: configuration)
        let (departments, employees) = try store.write { txn in
            let tables = (try txn.createTable(named: departmentTable), try txn.createTable(named: employeeTable))
            // WORKLOAD.md's schema has `CREATE INDEX employee_department ON employee(departmentId)`: the
            // engine keeps the same index from the start, so every insert pays for it on both sides.
            try txn.createIndex(named: departmentIndex, on: tables.1, fields: [EmployeeRow.departmentField])
            return tables
        }
        return (store, departments, employees)
    }

    /// Opens an existing store and finds its tables.
    static func open(
        at directory: String, configuration: StoreConfiguration = configuration()
    ) throws -> (store: Store, departments: TableID, employees: TableID) {
        var configuration = configuration
        configuration.createIfMissing = false
        let store = try Store.open(at: directory, configuration: configuration)
        let snapshot = store.snapshot()
        guard let departments = snapshot.table(named: departmentTable),
            let employees = snapshot.table(named: employeeTable)
        else { throw BenchmarkFailure("\(directory) has no company tables") }
        return (store, departments, employees)
    }

    /// Scans the employees and totals their salaries (the checks' own reading, untimed).
    static func totals(_ snapshot: Snapshot, _ employees: TableID) throws -> (count: Int, salarySum: Int64) {
        var count = 0
        var sum: Int64 = 0
        try snapshot.forEachRow(in: employees) { _, row in
            count += 1
            sum &+= EmployeeRow.salary(row)
            return true
        }
        return (count, sum)
    }
}
