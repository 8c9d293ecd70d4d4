/// The exact data of WORKLOAD.md's company workload: 100 departments, then N employees, from one generator.
///
/// One ``SplitMix64`` seeded with 42 makes the departments first, then the employees, in this order, so every
/// runner writes the same rows. The departments are a small array; the employees are a lazy sequence that
/// regenerates them on each iteration, so a million employees never need a big array.
///
/// For example:
///
/// ```swift
/// let workload = CompanyWorkload(employeeCount: 100_000)
/// for department in workload.departments { insert(department) }
/// var salaries: Int64 = 0
/// for employee in workload.employees { salaries += employee.salary }
/// ```
///
/// ## Topics
///
/// ### Creating the workload
/// - ``init(employeeCount:)``
/// - ``defaultEmployeeCount``
/// - ``seed``
///
/// ### The data
/// - ``departments``
/// - ``employees``
/// - ``Employees``
public struct CompanyWorkload: Sendable {
    /// The seed of the company data's generator: 42.
    public static let seed: UInt64 = 42
    /// The number of departments: 100.
    public static let departmentCount = 100
    /// N, the number of employees of a full run: 1,000,000.
    public static let defaultEmployeeCount = 1_000_000

    /// The 100 departments, in insertion order (department `k` of an employee is `departments[k - 1]`).
    public let departments: [Department]
    /// The employees, generated on demand, in insertion order.
    public let employees: Employees

    /// Makes the departments and prepares the employees.
    ///
    /// - Parameter employeeCount: N, the number of employees; not negative.
    public init(employeeCount: Int = defaultEmployeeCount) {
        precondition(employeeCount >= 0, "employeeCount must not be negative")
        var generator = SplitMix64(seed: Self.seed)
        var departments: [Department] = []
        departments.reserveCapacity(Self.departmentCount)
        for _ in 0..<Self.departmentCount {
            let name = generator.makeName()
            let budget = 100_000 + generator.unit() * 9_900_000
            departments.append(Department(name: name, budget: budget))
        }
        self.departments = departments
        self.employees = Employees(count: employeeCount, generator: generator)
    }
}
