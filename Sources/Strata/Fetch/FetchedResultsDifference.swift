import Foundation

/// What one change of a ``FetchedResultsController``'s content did, by object ID (so any task may read it):
/// the section and object changes, in the order a table view applies them (deletes at old index paths, then
/// inserts at new ones; a move is both), and the content after them.
public struct FetchedResultsDifference: Sendable, Equatable {
    /// A section that appeared or went away.
    public struct SectionChange: Sendable, Equatable {
        /// ``FetchedResultsChangeType/insert`` or ``FetchedResultsChangeType/delete``.
        public var type: FetchedResultsChangeType
        /// The section's index: in the old content for a delete, in the new one for an insert.
        public var index: Int
        /// The section's name.
        public var name: String
    }

    /// An object that entered, left, moved or changed.
    public struct ObjectChange: Sendable, Equatable {
        /// What happened.
        public var type: FetchedResultsChangeType
        /// The object's ID when the change was reported (temporary for an unsaved insert).
        public var objectID: ManagedObjectID
        /// Its index path in the old content (nil for an insert).
        public var indexPath: IndexPath?
        /// Its index path in the new content (nil for a delete).
        public var newIndexPath: IndexPath?
    }

    /// The sections that appeared or went away: deletes first, then inserts.
    public var sectionChanges: [SectionChange]
    /// The objects that changed: deletes, inserts, moves, then updates.
    public var objectChanges: [ObjectChange]
    /// The content after the change.
    public var snapshot: FetchedResultsSnapshot

    /// Whether nothing changed.
    public var isEmpty: Bool { sectionChanges.isEmpty && objectChanges.isEmpty }
}

/// A ``FetchedResultsController``'s content by object ID: its sections' names and objects, in order.
public struct FetchedResultsSnapshot: Sendable, Equatable {
    /// One section.
    public struct Section: Sendable, Equatable {
        /// The section's name.
        public var name: String
        /// Its objects' IDs, in order.
        public var objectIDs: [ManagedObjectID]
    }

    /// The sections, in order.
    public var sections: [Section]

    /// Every object ID, section by section.
    public var objectIDs: [ManagedObjectID] { sections.flatMap(\.objectIDs) }
}

#if !canImport(UIKit) && !canImport(AppKit)
extension IndexPath {
    /// An index path of a row in a section (UIKit's and AppKit's initializer, which Foundation on Linux lacks).
    ///
    /// - Parameters:
    ///   - item: the object's index in its section.
    ///   - section: the section's index.
    public init(item: Int, section: Int) {
        self.init(indexes: [section, item])
    }

    /// The section's index: the first index.
    public var section: Int { self[0] }
    /// The object's index in its section: the second index.
    public var item: Int { self[1] }
}
#endif
