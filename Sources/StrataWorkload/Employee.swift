/// An employee of the company workload.
///
/// WORKLOAD.md: "name = makeName, salary = uniform(30_000, 200_000), hired = 946_684_800 + unit() * 750_000_000
/// (seconds since 1970), department = uniform(1, 100) (the department's row, in insertion order)".
public struct Employee: Hashable, Sendable {
    /// The employee's name: 12 to 20 ASCII letters, the first upper-case.
    public var name: String
    /// The employee's salary, in `30_000...200_000`.
    public var salary: Int64
    /// When the employee was hired, in seconds since 1970-01-01 00:00:00 UTC (a `Date`'s
    /// `timeIntervalSince1970`), in `946_684_800 ..< 1_696_684_800` (2000-01-01 to October 2023).
    public var hired: Double
    /// The employee's department: its 1-based position in ``CompanyWorkload/departments`` (`1...100`), which is
    /// also its row ID when departments are inserted first, in order, into an empty table.
    public var department: Int

    /// Creates an employee.
    ///
    /// - Parameters:
    ///   - name: The employee's name.
    ///   - salary: The employee's salary.
    ///   - hired: The hiring date, in seconds since 1970.
    ///   - department: The 1-based position of the employee's department.
    @inlinable
    public init(name: String, salary: Int64, hired: Double, department: Int) {
        self.name = name
        self.salary = salary
        self.hired = hired
        self.department = department
    }
}
