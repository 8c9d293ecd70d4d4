import Foundation
import Strata

/// An employee of the company model (``CompanyModel``): one row of the `Employee` entity.
///
/// Not the workload's `StrataWorkload.Employee` value (the generator's output), which the demo copies into it.
final class Employee: ManagedObject {
    @Managed("name") var name: String
    @Managed("salary") var salary: Int64
    @Managed("hired") var hired: Date
    @Managed("photo") var photo: Data?
    /// The row ID of the employee's department; becomes the `department` relationship when relationships land.
    @ManagedRelationship("department") var department: Department?
}
