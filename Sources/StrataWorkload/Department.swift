/// A department of the company workload.
///
/// WORKLOAD.md: "100 departments: name = makeName, budget = 100_000 + unit() * 9_900_000".
public struct Department: Hashable, Sendable {
    /// The department's name: 12 to 20 ASCII letters, the first upper-case.
    public var name: String
    /// The department's budget, in `100_000 ..< 10_000_000`.
    public var budget: Double

    /// Creates a department.
    ///
    /// - Parameters:
    ///   - name: The department's name.
    ///   - budget: The department's budget.
    @inlinable
    public init(name: String, budget: Double) {
        self.name = name
        self.budget = budget
    }
}
