import Logging
import StrataStorage
import StrataWorkload

/// Rows of the company workload in Strata's engine, encoded compactly by hand (the engine stores bytes).
///
/// Employee: `salary:i64 hired:f64 department:u16 nameLength:u8 name` (little-endian), 31 to 39 bytes; salary
/// first, so that scans decode it with one load. Department: `budget:f64 nameLength:u8 name`.
enum EmployeeRow {
    static let salaryOffset = 0
    static let hiredOffset = 8
    static let departmentOffset = 16
    static let nameLengthOffset = 18
    static let nameOffset = 19

    static func encode(_ employee: Employee) -> [UInt8] {
        var name = employee.name
        return name.withUTF8 { nameBytes in
            [UInt8](unsafeUninitializedCapacity: nameOffset + nameBytes.count) { buffer, count in
                let raw = UnsafeMutableRawBufferPointer(buffer)
                raw.storeBytes(of: employee.salary.littleEndian, toByteOffset: salaryOffset, as: Int64.self)
                raw.storeBytes(of: employee.hired.bitPattern.littleEndian, toByteOffset: hiredOffset, as: UInt64.self)
                raw.storeBytes(
                    of: UInt16(employee.department).littleEndian, toByteOffset: departmentOffset, as: UInt16.self)
                raw[nameLengthOffset] = UInt8(nameBytes.count)
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
        Int(UInt16(littleEndian: row.loadUnaligned(fromByteOffset: departmentOffset, as: UInt16.self)))
    }

    @inline(__always)
    static func name(_ row: UnsafeRawBufferPointer) -> String {
        let length = Int(row[nameLengthOffset])
        return String(
            decoding: UnsafeRawBufferPointer(rebasing: row[nameOffset..<(nameOffset + length)]), as: UTF8.self)
    }

    /// A copy of `row` with another salary.
    static func withSalary(_ row: [UInt8], _ salary: Int64) -> [UInt8] {
        var copy = row
        copy.withUnsafeMutableBytes {
            $0.storeBytes(of: salary.littleEndian, toByteOffset: salaryOffset, as: Int64.self)
        }
        return copy
    }
}

enum DepartmentRow {
    static func encode(_ department: Department) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(9 + department.name.utf8.count)
        withUnsafeBytes(of: department.budget.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(department.name.utf8.count))
        bytes.append(contentsOf: department.name.utf8)
        return bytes
    }
}

/// Opening and filling the engine's company store.
enum StrataCompany {
    static let departmentTable = "department"
    static let employeeTable = "employee"

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
            (try txn.createTable(named: departmentTable), try txn.createTable(named: employeeTable))
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
