/// How an object or a section changed in a ``FetchedResultsController`` (Core Data's
/// `NSFetchedResultsChangeType`, with its raw values).
public enum FetchedResultsChangeType: UInt, Sendable, Hashable {
    /// It entered the results (an object: at its new index path).
    case insert = 1
    /// It left the results (an object: from its old index path).
    case delete = 2
    /// An object changed its place: from its old index path to its new one.
    case move = 3
    /// An object changed and kept its place among the objects that did not move.
    case update = 4
}
