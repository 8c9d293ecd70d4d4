import Foundation
import StrataWorkload

/// What the generator says the store must hold after `strata demo` has saved the company: computed while the
/// demo inserts the objects, from the workload's values (not from the objects), and checked after the reopen.
struct DemoExpectations {
    /// The number of employees.
    var employeeCount = 0
    /// The wrapping sum of every employee's salary.
    var salarySum: Int64 = 0
    /// The wrapping sum of ``fingerprint(name:salary:)`` over the employees: independent of the order they
    /// are read in, so a fetch in row order checks against the generator's order.
    var fingerprint: UInt64 = 0
    /// The employees the point lookups read (by their index in the workload), chosen before the load.
    var lookupIndexes: [Int] = []
    /// The workload's values of the employees of ``lookupIndexes``, by index.
    var lookedUp: [Int: StrataWorkload.Employee] = [:]
    /// The indexes of the employees that have a photo, in order.
    var photoIndexes: [Int] = []

    /// Chooses `lookupCount` random employees of `employeeCount` (none when there are no employees).
    init(employeeCount: Int, lookupCount: Int, lookupSeed: UInt64) {
        guard employeeCount > 0 else { return }
        var generator = SplitMix64(seed: lookupSeed)
        lookupIndexes = (0..<lookupCount).map { _ in Int(generator.uniform(0, UInt64(employeeCount - 1))) }
        lookedUp.reserveCapacity(lookupCount)
    }

    /// Records one employee of the workload, at `index`, as inserted.
    mutating func record(_ employee: StrataWorkload.Employee, at index: Int, wanted: Set<Int>, hasPhoto: Bool) {
        employeeCount += 1
        salarySum &+= employee.salary
        fingerprint &+= Self.fingerprint(name: employee.name, salary: employee.salary)
        if wanted.contains(index) { lookedUp[index] = employee }
        if hasPhoto { photoIndexes.append(index) }
    }

    /// An employee's fingerprint: 64-bit FNV-1a of the name's UTF-8, then of the salary's 8 bytes (little-endian).
    static func fingerprint(name: String, salary: Int64) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in name.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        var bits = UInt64(bitPattern: salary)
        for _ in 0..<8 {
            hash = (hash ^ (bits & 0xFF)) &* 0x0000_0100_0000_01B3
            bits >>= 8
        }
        return hash
    }
}
