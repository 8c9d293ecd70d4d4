import Foundation

/// Commits another process made to a store, which this process took in (Core Data's
/// `NSPersistentStoreRemoteChange` notification): see ``StrataStore/addRemoteChangeObserver(_:)``.
///
/// Merge them as a Core Data app does: fetch the persistent history after the last token the app merged, and merge
/// each transaction into its contexts with ``ManagedObjectContext/mergeChanges(fromRemoteContextSave:into:)``.
public struct PersistentStoreRemoteChange: Sendable {
    /// The store that changed (``PersistentStore/identifier``).
    public var storeIdentifier: UUID
    /// The store's newest history token once the change was taken in (Core Data's `NSPersistentHistoryTokenKey`);
    /// nil when the store records no history.
    public var historyToken: PersistentHistoryToken?

    package init(storeIdentifier: UUID, historyToken: PersistentHistoryToken?) {
        self.storeIdentifier = storeIdentifier
        self.historyToken = historyToken
    }
}

/// A registration made by ``StrataStore/addRemoteChangeObserver(_:)``.
public struct RemoteChangeObservation: Hashable, Sendable {
    let id: UUID

    /// A new registration (for stores of other modules that call observers too).
    package init(id: UUID = UUID()) {
        self.id = id
    }
}
