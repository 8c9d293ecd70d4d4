import StrataWorkload

/// The company data of a run and what every figure must find in it, computed from the generator alone (never
/// read back from a store), so that a fast wrong answer fails a check.
struct Company: Sendable {
    /// W4a's predicate: `salary BETWEEN 100000 AND 101800`, about 1% of the rows.
    static let salaryRange: ClosedRange<Int64> = 100_000...101_800
    static let departmentCount = CompanyWorkload.departmentCount

    let count: Int
    let departments: [Department]
    /// Every employee, generated once before any timing so that no figure pays for the generator.
    let employees: [Employee]
    /// Employee `i` (row `i + 1`): salary and FNV-1a of the name.
    let salaries: [Int64]
    let nameHashes: [UInt64]

    init(employeeCount: Int) {
        let workload = CompanyWorkload(employeeCount: employeeCount)
        count = employeeCount
        departments = workload.departments
        employees = Array(workload.employees)
        salaries = employees.map(\.salary)
        nameHashes = employees.map { fnv1a($0.name.utf8) }
    }

    /// The sum, count and per-department sums and counts of a set of salaries (row `i + 1` has `salaries[i]`).
    struct Totals: Equatable {
        var count = 0
        var salarySum: Int64 = 0
        var rangeCount = 0
        var rangeSum: Int64 = 0
        var departmentCounts = [Int](repeating: 0, count: Company.departmentCount + 1)
        var departmentSums = [Int64](repeating: 0, count: Company.departmentCount + 1)
    }

    func totals(salaries: [Int64]) -> Totals {
        var totals = Totals()
        for (index, salary) in salaries.enumerated() {
            totals.count += 1
            totals.salarySum &+= salary
            if Company.salaryRange.contains(salary) {
                totals.rangeCount += 1
                totals.rangeSum &+= salary
            }
            let department = employees[index].department
            totals.departmentCounts[department] += 1
            totals.departmentSums[department] &+= salary
        }
        return totals
    }

    /// The averages a W5 query must return, department `d` at index `d` (index 0 unused).
    static func averages(_ totals: Totals) -> [Double] {
        (0...departmentCount).map { d in
            totals.departmentCounts[d] == 0 ? 0 : Double(totals.departmentSums[d]) / Double(totals.departmentCounts[d])
        }
    }

    // MARK: - Random choices, the same for both sides

    /// The row IDs (1...count) of `lookups` random employees.
    func lookupRows(_ lookups: Int, seed: UInt64) -> [Int64] {
        var generator = SplitMix64(seed: seed)
        return (0..<lookups).map { _ in Int64(generator.uniform(1, UInt64(count))) }
    }

    /// What looking up `rows` must find: the wrapping sums of their salaries and name hashes.
    func lookupChecksum(_ rows: [Int64], salaries: [Int64]) -> (salaries: Int64, names: UInt64) {
        var salarySum: Int64 = 0
        var nameSum: UInt64 = 0
        for row in rows {
            salarySum &+= salaries[Int(row) - 1]
            nameSum &+= nameHashes[Int(row) - 1]
        }
        return (salarySum, nameSum)
    }

    /// W7's updates: 100,000 (or, for a small N, N) random (row, new salary) pairs; a row may come twice, the
    /// last assignment wins.
    func salaryUpdates(_ count: Int, seed: UInt64) -> [(row: Int64, salary: Int64)] {
        var generator = SplitMix64(seed: seed)
        return (0..<count).map { _ in
            (Int64(generator.uniform(1, UInt64(self.count))), Int64(generator.uniform(30_000, 200_000)))
        }
    }

    /// The salaries after applying `updates`.
    func salaries(after updates: [(row: Int64, salary: Int64)]) -> [Int64] {
        var result = salaries
        for update in updates { result[Int(update.row) - 1] = update.salary }
        return result
    }
}
