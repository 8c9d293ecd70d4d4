import Strata

/// A department of the company model (``CompanyModel``): one row of the `Department` entity.
///
/// Not the workload's `StrataWorkload.Department` value (the generator's output), which the demo copies into it.
final class Department: ManagedObject {
    @Managed("name") var name: String
    @Managed("budget") var budget: Double
    @ManagedRelationship("employees") var employees: Set<Employee>
}
