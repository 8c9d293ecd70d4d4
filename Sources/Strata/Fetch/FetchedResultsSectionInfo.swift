/// One section of a ``FetchedResultsController`` (Core Data's `NSFetchedResultsSectionInfo`): the objects
/// with one value at the controller's section key path, in the fetch's order.
public struct FetchedResultsSectionInfo {
    /// The section's value at the section key path, as text ("" for nil; the only section of a controller
    /// without a key path is named "").
    public let name: String
    /// The section's index title: the name's first letter, capitalized
    /// (``FetchedResultsController/sectionIndexTitle(forSectionName:)``).
    public let indexTitle: String?
    /// The section's objects, in order.
    public let objects: [ManagedObject]

    /// How many objects the section holds.
    public var numberOfObjects: Int { objects.count }
}

@available(*, unavailable, message: "a section holds managed objects, which belong to their context's thread")
extension FetchedResultsSectionInfo: Sendable {}
