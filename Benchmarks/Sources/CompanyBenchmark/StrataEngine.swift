import Logging
import StrataFormat
import StrataStorage
import StrataWorkload

/// Rows of the company workload in Strata's engine: row records (FORMAT.md §6), the format the object store
/// writes and the only one the engine's secondary indexes read, encoded by hand here (as a prepared-statement
/// user of SQLite binds its values) and checked once against `RowRecord.decodeAll`.
///
/// Employee (entity 2, 4 fields): `salary:int64 hired:date department:reference name:string`, 36 to 46 bytes:
/// the form byte `0x21`, entity 2, version 1 and 4 fields in one byte each, four one-byte field ends (every
/// employee's fields take fewer than 256 bytes), then the fields from byte 8. Salary (2 or 3 bytes) and department
/// (1 byte) take as few bytes as hold them; `hired` is stored as a row-record date (seconds since 2001).
/// Department (entity 1, 2 fields): `name:string budget:double`, as the object store lays it out.
enum EmployeeRow {
    static let entityID: UInt16 = 2
    static let fieldCount = 4
    /// Where the fields start: the form byte, three one-byte varints, four one-byte field ends.
    static let fieldsOffset = 8
    /// Field positions, for the indexes.
    static let salaryField = 0
    static let hiredField = 1
    static let departmentField = 2
    static let nameField = 3
    /// 1970-01-01 in seconds since 2001-01-01 (the row-record date's epoch).
    static let unixToReference = 978_307_200.0

    /// Bytes of the shortest two's complement form of `value` (FORMAT.md §6.1).
    @inline(__always)
    static func signedWidth(_ value: Int64) -> Int {
        (64 - UInt64(bitPattern: value ^ (value >> 63)).leadingZeroBitCount + 8) / 8
    }

    /// Bytes of the shortest unsigned form of `value`.
    @inline(__always)
    static func unsignedWidth(_ value: UInt64) -> Int { max(1, (64 - value.leadingZeroBitCount + 7) / 8) }

    static func encode(_ employee: Employee) -> [UInt8] {
        var name = employee.name
        return name.withUTF8 { nameBytes in
            encode(
                salary: employee.salary, hiredBits: (employee.hired - unixToReference).bitPattern,
                department: UInt64(employee.department), name: UnsafeRawBufferPointer(nameBytes))
        }
    }

    static func encode(salary: Int64, hiredBits: UInt64, department: UInt64, name: UnsafeRawBufferPointer) -> [UInt8] {
        let salaryEnd = 1 + signedWidth(salary)
        let hiredEnd = salaryEnd + 9
        let departmentEnd = hiredEnd + 1 + unsignedWidth(department)
        let nameEnd = departmentEnd + 1 + name.count
        return [UInt8](unsafeUninitializedCapacity: fieldsOffset + nameEnd) { buffer, count in
            let raw = UnsafeMutableRawBufferPointer(buffer)
            raw[0] = RowRecord.formatVersion << 4 | 1
            raw[1] = UInt8(entityID)
            raw[2] = 1  // row version
            raw[3] = UInt8(fieldCount)
            raw[4] = UInt8(salaryEnd)
            raw[5] = UInt8(hiredEnd)
            raw[6] = UInt8(departmentEnd)
            raw[7] = UInt8(nameEnd)
            func store(_ bits: UInt64, from start: Int, to end: Int) {
                var rest = bits
                for offset in start..<end {
                    raw[offset] = UInt8(truncatingIfNeeded: rest)
                    rest >>= 8
                }
            }
            raw[fieldsOffset] = RowRecord.Tag.int64.rawValue
            store(UInt64(bitPattern: salary), from: fieldsOffset + 1, to: fieldsOffset + salaryEnd)
            raw[fieldsOffset + salaryEnd] = RowRecord.Tag.date.rawValue
            raw.storeBytes(of: hiredBits.littleEndian, toByteOffset: fieldsOffset + salaryEnd + 1, as: UInt64.self)
            raw[fieldsOffset + hiredEnd] = RowRecord.Tag.reference.rawValue
            store(department, from: fieldsOffset + hiredEnd + 1, to: fieldsOffset + departmentEnd)
            raw[fieldsOffset + departmentEnd] = RowRecord.Tag.string.rawValue
            UnsafeMutableRawBufferPointer(rebasing: raw[(fieldsOffset + departmentEnd + 1)...]).copyMemory(from: name)
            count = fieldsOffset + nameEnd
        }
    }

    /// The salary: its width is its field's end less the tag; 8 bytes are loaded (the date field follows) and
    /// sign-extended from that width.
    @inline(__always)
    static func salary(_ row: UnsafeRawBufferPointer) -> Int64 {
        let width = Int(row[4]) - 1
        let raw = UInt64(littleEndian: row.loadUnaligned(fromByteOffset: fieldsOffset + 1, as: UInt64.self))
        let shift = UInt64(64 - 8 * width)
        return Int64(bitPattern: raw << shift) >> shift
    }

    /// The department's row: after the date field, as wide as its field (8 bytes are loaded: the name follows).
    @inline(__always)
    static func department(_ row: UnsafeRawBufferPointer) -> Int {
        let start = fieldsOffset + Int(row[5]) + 1
        let width = Int(row[6]) - Int(row[5]) - 1
        let raw = UInt64(littleEndian: row.loadUnaligned(fromByteOffset: start, as: UInt64.self))
        return Int(width == 8 ? raw : raw & (1 << UInt64(8 * width) - 1))
    }

    @inline(__always)
    static func nameBytes(_ row: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: row[(fieldsOffset + Int(row[6]) + 1)...])
    }

    @inline(__always)
    static func name(_ row: UnsafeRawBufferPointer) -> String { String(decoding: nameBytes(row), as: UTF8.self) }

    /// Writes `row` with another salary into `new` (empty), as `UPDATE employee SET salary = ?` changes a row: the
    /// bytes as they were, the salary's written over; when its width differs, the fields after it move and the
    /// header's field ends with them.
    static func rewrite(_ row: UnsafeRawBufferPointer, salary: Int64, into new: inout [UInt8]) {
        let salaryEnd = 1 + signedWidth(salary)
        let shift = salaryEnd - Int(row[4])
        if shift == 0 {
            new.append(contentsOf: row)
        } else {
            new.append(contentsOf: UnsafeRawBufferPointer(rebasing: row[..<(fieldsOffset + 1)]))
            new.append(contentsOf: repeatElement(0, count: salaryEnd - 1))
            new.append(contentsOf: UnsafeRawBufferPointer(rebasing: row[(fieldsOffset + Int(row[4]))...]))
            for end in 4..<(4 + fieldCount) { new[end] = UInt8(Int(new[end]) + shift) }
        }
        new.withUnsafeMutableBytes { raw in
            var rest = UInt64(bitPattern: salary)
            for offset in (fieldsOffset + 1)..<(fieldsOffset + salaryEnd) {
                raw[offset] = UInt8(truncatingIfNeeded: rest)
                rest >>= 8
            }
        }
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
        // A salary of another width: the row is laid out again and still decodes.
        for salary: Int64 in [-1, 0, 127, 128, 40_000, 8_388_608, .min, .max] {
            var changed: [UInt8] = []
            bytes.withUnsafeBytes { rewrite($0, salary: salary, into: &changed) }
            let (header, fields) = try RowRecord.decodeAll(changed)
            try check(
                header.entityID == entityID && fields == [.int64(salary)] + expected.dropFirst(),
                "the engine's employee row after rewrite(_:salary:into:)")
            try changed.withUnsafeBytes { raw in
                try check(Self.salary(raw) == salary && department(raw) == employee.department, "salary accessors")
            }
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
