import Foundation

/// What a ``FetchedResultsController`` tells as its content changes (Core Data's
/// `NSFetchedResultsControllerDelegate`). Every method has an empty default.
///
/// For one change of the content the controller calls, in order: ``controllerWillChangeContent(_:)``, one
/// `didChange` per section (deletes, then inserts), one per object (deletes, inserts, moves, updates),
/// ``controllerDidChangeContent(_:)``, then ``controller(_:didChangeContentWith:)`` with all of it by ID.
/// Unlike Core Data's, all of them are called, whichever the delegate implements.
public protocol FetchedResultsControllerDelegate: AnyObject {
    /// The content is about to change.
    func controllerWillChangeContent(_ controller: any FetchedResultsControlling)
    /// A section appeared (``FetchedResultsChangeType/insert``, at its new index) or went away
    /// (``FetchedResultsChangeType/delete``, at its old index).
    func controller(
        _ controller: any FetchedResultsControlling, didChange sectionInfo: FetchedResultsSectionInfo,
        atSectionIndex sectionIndex: Int, for type: FetchedResultsChangeType)
    /// An object entered (`newIndexPath`), left (`indexPath`), moved (both) or changed in place (both).
    func controller(
        _ controller: any FetchedResultsControlling, didChange anObject: ManagedObject, at indexPath: IndexPath?,
        for type: FetchedResultsChangeType, newIndexPath: IndexPath?)
    /// The content changed.
    func controllerDidChangeContent(_ controller: any FetchedResultsControlling)
    /// The whole change, by object ID, with the content after it.
    func controller(
        _ controller: any FetchedResultsControlling, didChangeContentWith difference: FetchedResultsDifference)
}

extension FetchedResultsControllerDelegate {
    public func controllerWillChangeContent(_ controller: any FetchedResultsControlling) {}
    public func controller(
        _ controller: any FetchedResultsControlling, didChange sectionInfo: FetchedResultsSectionInfo,
        atSectionIndex sectionIndex: Int, for type: FetchedResultsChangeType
    ) {}
    public func controller(
        _ controller: any FetchedResultsControlling, didChange anObject: ManagedObject, at indexPath: IndexPath?,
        for type: FetchedResultsChangeType, newIndexPath: IndexPath?
    ) {}
    public func controllerDidChangeContent(_ controller: any FetchedResultsControlling) {}
    public func controller(
        _ controller: any FetchedResultsControlling, didChangeContentWith difference: FetchedResultsDifference
    ) {}
}

/// A ``FetchedResultsController`` whatever its result type, as its delegate sees it.
public protocol FetchedResultsControlling: AnyObject {
    /// The sections (nil before the first fetch).
    var sections: [FetchedResultsSectionInfo]? { get }
    /// The object at an index path.
    func managedObject(at indexPath: IndexPath) -> ManagedObject
}
