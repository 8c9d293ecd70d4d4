import StrataStorage
import StrataWorkload

/// The demo's row codec: how `strata demo` turns the workload's departments and employees into row bytes.
///
/// A stand-in until the object graph's real record format lands; it exists so the demo can exercise the engine
/// with realistic rows. All integers are little-endian; a `Double` is stored as its IEEE 754 bit pattern.
///
/// ```
/// department := nameLength: uint32 LE, name: nameLength bytes of UTF-8, budget: float64 LE
/// employee   := nameLength: uint32 LE, name: nameLength bytes of UTF-8, salary: int64 LE,
///               hired: float64 LE (seconds since 1970), department: uint64 LE (the department's row ID)
/// ```
///
/// A 15-letter employee is 4 + 15 + 8 + 8 + 8 = 43 bytes. Decoding checks every length against the bytes it is
/// given and that nothing trails the last field.
enum DemoRow {
    /// A row that does not match the layout above.
    struct DecodingError: Error, CustomStringConvertible {
        var description: String
    }

    /// The fields of an employee row, without copying the name out of the row.
    struct EmployeeFields: Equatable {
        var nameByteCount: Int
        var salary: Int64
        var hired: Double
        var departmentID: RowID
    }

    // MARK: - Encoding

    static func encode(_ department: Department) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(4 + department.name.utf8.count + 8)
        appendName(department.name, to: &bytes)
        appendUInt64LE(department.budget.bitPattern, to: &bytes)
        return bytes
    }

    static func encode(_ employee: Employee, departmentID: RowID) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(4 + employee.name.utf8.count + 24)
        appendName(employee.name, to: &bytes)
        appendUInt64LE(UInt64(bitPattern: employee.salary), to: &bytes)
        appendUInt64LE(employee.hired.bitPattern, to: &bytes)
        appendUInt64LE(departmentID.rawValue, to: &bytes)
        return bytes
    }

    // MARK: - Decoding

    static func decodeEmployee(_ bytes: UnsafeRawBufferPointer) throws(DecodingError) -> EmployeeFields {
        let nameByteCount = try nameLength(in: bytes)
        // nameLength checked 4 + nameByteCount <= bytes.count, so these sums do not overflow.
        let fields = 4 + nameByteCount
        guard bytes.count == fields + 24 else {
            throw DecodingError(description: "employee row of \(bytes.count) bytes, expected \(fields + 24)")
        }
        return EmployeeFields(
            nameByteCount: nameByteCount,
            salary: Int64(bitPattern: uint64LE(bytes, at: fields)),
            hired: Double(bitPattern: uint64LE(bytes, at: fields + 8)),
            departmentID: RowID(uint64LE(bytes, at: fields + 16))
        )
    }

    static func decodeDepartment(_ bytes: UnsafeRawBufferPointer) throws(DecodingError) -> Department {
        let nameByteCount = try nameLength(in: bytes)
        // nameLength checked 4 + nameByteCount <= bytes.count, so these sums do not overflow.
        let budget = 4 + nameByteCount
        guard bytes.count == budget + 8 else {
            throw DecodingError(description: "department row of \(bytes.count) bytes, expected \(budget + 8)")
        }
        return Department(
            name: String(decoding: UnsafeRawBufferPointer(rebasing: bytes[4..<budget]), as: UTF8.self),
            budget: Double(bitPattern: uint64LE(bytes, at: budget))
        )
    }

    /// The row's name length, checked to fit in the row after its 4-byte prefix.
    private static func nameLength(in bytes: UnsafeRawBufferPointer) throws(DecodingError) -> Int {
        guard bytes.count >= 4 else {
            throw DecodingError(description: "row of \(bytes.count) bytes has no name length")
        }
        let length = UInt32(littleEndian: bytes.loadUnaligned(as: UInt32.self))
        // Compare in UInt64 so a hostile length cannot overflow Int on 32-bit platforms.
        guard UInt64(length) <= UInt64(bytes.count - 4) else {
            throw DecodingError(description: "name of \(length) bytes in a row of \(bytes.count) bytes")
        }
        return Int(length)
    }

    // MARK: - Helpers

    /// The little-endian `UInt64` at `offset`; the caller has checked `offset + 8 <= bytes.count`.
    private static func uint64LE(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt64 {
        UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    private static func appendName(_ name: String, to bytes: inout [UInt8]) {
        let utf8 = name.utf8
        precondition(utf8.count <= Int(UInt32.max), "name too long for the demo row codec")
        appendUInt32LE(UInt32(utf8.count), to: &bytes)
        bytes.append(contentsOf: utf8)
    }

    private static func appendUInt32LE(_ value: UInt32, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    private static func appendUInt64LE(_ value: UInt64, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }
}
