import Foundation
import StrataQuery

/// Keeps the results of a fetch request up to date as its context changes, cut into sections, for a list or
/// table (Core Data's `NSFetchedResultsController`).
///
/// After ``performFetch()``, the controller follows its context: inserts, deletes and changes in the context,
/// saves, merges from other contexts (``ManagedObjectContext/mergeChanges(fromContextDidSave:)`` and
/// ``ManagedObjectContext/automaticallyMergesChangesFromParent``), undo, and objects that enter or leave the
/// predicate by changing. It evaluates the predicate and the sort keys on the changed objects in memory, with
/// the fetch's own evaluator and order (objects the sort keys find equal are in row order, unsaved inserts
/// last), and reports each change of its content to its ``delegate`` and to its ``differences()`` streams.
///
/// For example:
/// ```swift
/// let request = FetchRequest<Employee>(entityName: "Employee")
/// request.sortKeys = [SortKey("department.name"), SortKey("name")]
/// let controller = FetchedResultsController(
///     fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: "department.name")
/// try controller.performFetch()
/// let first = controller.object(at: IndexPath(item: 0, section: 0))
/// ```
///
/// The request's sort keys must order the objects by section first (as in Core Data). With a
/// ``FetchRequest/fetchBatchSize`` the fetch returns faults filled a batch at a time; placing a changed object
/// reads only the objects a binary search compares it with, but a section key path reads every object's value.
/// ``FetchRequest/fetchOffset`` and ``FetchRequest/fetchLimit`` apply to ``performFetch()`` only.
///
/// ## Topics
/// - ``performFetch()``
/// - ``fetchedObjects``
/// - ``sections``
/// - ``object(at:)``
/// - ``indexPath(forObject:)``
/// - ``delegate``
/// - ``differences()``
public final class FetchedResultsController<Result: ManagedObject>: FetchedResultsControlling {
    /// The request whose results the controller keeps.
    public let fetchRequest: FetchRequest<Result>
    /// The context the controller fetches in and follows.
    public let managedObjectContext: ManagedObjectContext
    /// The key path whose value names each object's section (nil: one section).
    public let sectionNameKeyPath: String?
    /// Core Data's section cache name: accepted and unused (sections are computed in memory).
    public let cacheName: String?
    /// What the controller tells of each change of its content.
    public weak var delegate: (any FetchedResultsControllerDelegate)?

    private var content: FetchedResultsContent?
    private var entity: EntityDescription?
    /// The sort keys' values of placed objects (reused by binary searches; dropped when the object changes).
    private var sortValues: [ObjectIdentifier: [QueryValue]] = [:]
    /// The section names of placed objects (dropped when the object changes).
    private var sectionNames: [ObjectIdentifier: String] = [:]
    /// Placed objects that were unsaved inserts: a save gives them row IDs, and so another place among equals.
    private var placedAsInserted = Set<ObjectIdentifier>()
    private let streams = DifferenceStreams()

    /// Makes a controller; nothing is fetched until ``performFetch()``.
    ///
    /// - Parameters:
    ///   - fetchRequest: the request: managed-object results, sort keys ordering by section first.
    ///   - managedObjectContext: the context to fetch in and follow.
    ///   - sectionNameKeyPath: the key path naming each object's section, or nil for one section.
    ///   - cacheName: unused (Core Data's section cache).
    public init(
        fetchRequest: FetchRequest<Result>, managedObjectContext: ManagedObjectContext,
        sectionNameKeyPath: String? = nil, cacheName: String? = nil
    ) {
        self.fetchRequest = fetchRequest
        self.managedObjectContext = managedObjectContext
        self.sectionNameKeyPath = sectionNameKeyPath
        self.cacheName = cacheName
    }

    deinit {
        managedObjectContext.removeChangeTracker(self)
        streams.finishAll()
    }

    // MARK: - Results

    /// Fetches the request's results (with the context's pending changes) and starts following the context.
    /// The delegate is not told; ``differences()`` streams get the change from the previous content.
    ///
    /// - Throws: what ``ManagedObjectContext/fetch(_:)`` throws; `PredicateEvaluationError` when a section
    ///   name or sort key cannot be read.
    public func performFetch() throws {
        precondition(fetchRequest.resultType == .managedObject, "a fetched results controller fetches managed objects")
        entity = try managedObjectContext.fetchEntity(of: fetchRequest)
        let objects = try managedObjectContext.fetch(fetchRequest)
        sortValues = [:]
        sectionNames = [:]
        placedAsInserted = Set(objects.filter(\.isInserted).map { ObjectIdentifier($0) })
        let old = content ?? FetchedResultsContent(keepsOneSection: sectionNameKeyPath == nil)
        let new = try makeContent(objects)
        content = new
        managedObjectContext.addChangeTracker(self)
        let all = Set(old.objects.map { ObjectIdentifier($0) } + objects.map { ObjectIdentifier($0) })
        let diff = FetchedResultsDiff(from: old, to: new, candidates: all, updated: [])
        streams.yield(difference(diff, new))
    }

    /// The results, in order (nil before ``performFetch()``).
    public var fetchedObjects: [Result]? {
        content.map { $0.objects.map { $0 as! Result } }
    }

    /// The sections, in order (nil before ``performFetch()``).
    public var sections: [FetchedResultsSectionInfo]? {
        content.map { content in
            content.sections.map {
                FetchedResultsSectionInfo(
                    name: $0.name, indexTitle: sectionIndexTitle(forSectionName: $0.name), objects: $0.objects)
            }
        }
    }

    /// The object at an index path (a precondition: one of the controller's).
    ///
    /// - Parameter indexPath: a section index and an index in that section.
    public func object(at indexPath: IndexPath) -> Result {
        managedObject(at: indexPath) as! Result
    }

    /// The object at an index path, as a ``ManagedObject``.
    public func managedObject(at indexPath: IndexPath) -> ManagedObject {
        guard let content else { preconditionFailure("object(at:) before performFetch()") }
        return content.sections[indexPath.section].objects[indexPath.item]
    }

    /// Where an object is in the results, or nil when it is not among them.
    public func indexPath(forObject object: Result) -> IndexPath? {
        content?.indexPaths[ObjectIdentifier(object)]
    }

    /// The index title of a section name: its first letter, capitalized (Core Data's default).
    public func sectionIndexTitle(forSectionName sectionName: String) -> String? {
        sectionName.first.map { String($0).uppercased() }
    }

    /// The sections' distinct index titles, in order.
    public var sectionIndexTitles: [String] {
        var seen = Set<String>()
        return (sections ?? []).compactMap(\.indexTitle).filter { seen.insert($0).inserted }
    }

    /// Each change of the content from now on, by object ID: an asynchronous sequence that any task may read
    /// (``performFetch()`` yields the change from the previous content too). It ends when the controller goes.
    public func differences() -> AsyncStream<FetchedResultsDifference> {
        streams.makeStream()
    }

    // MARK: - Placing objects

    /// Sections and index paths of objects in order.
    private func makeContent(_ objects: [ManagedObject]) throws -> FetchedResultsContent {
        guard let sectionNameKeyPath else { return FetchedResultsContent(objects, sectionName: nil) }
        for object in objects where sectionNames[ObjectIdentifier(object)] == nil {
            let value = try object.value(forKeyPath: sectionNameKeyPath)
            sectionNames[ObjectIdentifier(object)] = value.map { "\($0)" } ?? ""
        }
        return FetchedResultsContent(objects) { self.sectionNames[ObjectIdentifier($0)]! }
    }

    /// Whether an object belongs in the results now: in the context, not deleted, of the request's entity and
    /// matching its predicate (a predicate that cannot be evaluated on it does not match).
    private func belongs(_ object: ManagedObject, stores: [any PersistentStore]) -> Bool {
        guard let entity, object.managedObjectContext === managedObjectContext, !object.isDeleted else { return false }
        guard fetchRequest.includesSubentities ? object.entity.isKind(of: entity) : object.entity === entity else {
            return false
        }
        guard managedObjectContext.isInSearchedStores(object, stores: stores, request: fetchRequest) else {
            return false
        }
        if let predicate = fetchRequest.predicate, (try? predicate.evaluate(with: object)) != true { return false }
        // Evaluating may have fired a fault whose row is gone (now deleted).
        return !object.isDeleted
    }

    /// How the fetch orders an object: its sort values, then its row order.
    private func match(_ object: ManagedObject, stores: [any PersistentStore]) throws -> FetchMatch {
        let key = ObjectIdentifier(object)
        let values: [QueryValue]
        if let cached = sortValues[key] {
            values = cached
        } else {
            values = try fetchRequest.sortKeys.map { try $0.value(of: object) }
            sortValues[key] = values
        }
        return FetchMatch(
            id: object.objectID, sortValues: values,
            position: managedObjectContext.fetchPosition(of: object, among: stores))
    }

    /// Where `object` goes in `list` (sorted), by binary search.
    private func insertionIndex(
        of object: ManagedObject, in list: [ManagedObject], stores: [any PersistentStore]
    ) throws -> Int {
        let placed = try match(object, stores: stores)
        let keys = fetchRequest.sortKeys
        var low = 0
        var high = list.count
        while low < high {
            let middle = (low + high) / 2
            if try match(list[middle], stores: stores).precedes(placed, by: keys) {
                low = middle + 1
            } else {
                high = middle
            }
        }
        return low
    }

    /// Takes `candidates` out, puts back those that belong in their places, and reports the change.
    func replace(_ candidates: [ManagedObject], updated: Set<ObjectIdentifier>) throws {
        guard let old = content, !candidates.isEmpty else { return }
        let keys = Set(candidates.map { ObjectIdentifier($0) })
        var list = old.objects.filter { !keys.contains(ObjectIdentifier($0)) }
        let stores = managedObjectContext.searchedStores(of: fetchRequest)
        for candidate in candidates {
            let key = ObjectIdentifier(candidate)
            sortValues[key] = nil
            sectionNames[key] = nil
            placedAsInserted.remove(key)
            guard belongs(candidate, stores: stores) else { continue }
            list.insert(candidate, at: try insertionIndex(of: candidate, in: list, stores: stores))
            if candidate.isInserted { placedAsInserted.insert(key) }
        }
        let new = try makeContent(list)
        content = new
        report(FetchedResultsDiff(from: old, to: new, candidates: keys, updated: updated), new)
    }

    /// Tells the delegate and the streams of a change, when there is one.
    private func report(_ diff: FetchedResultsDiff, _ new: FetchedResultsContent) {
        let difference = difference(diff, new)
        guard !difference.isEmpty else { return }
        if let delegate {
            delegate.controllerWillChangeContent(self)
            for change in diff.changes {
                switch change {
                case .section(let type, let index, let name):
                    let objects = type == .insert ? new.sections[index].objects : []
                    delegate.controller(
                        self,
                        didChange: FetchedResultsSectionInfo(
                            name: name, indexTitle: sectionIndexTitle(forSectionName: name), objects: objects),
                        atSectionIndex: index, for: type)
                case .object(let type, let object, let old, let new):
                    delegate.controller(self, didChange: object, at: old, for: type, newIndexPath: new)
                }
            }
            delegate.controllerDidChangeContent(self)
            delegate.controller(self, didChangeContentWith: difference)
        }
        streams.yield(difference)
    }

    private func difference(_ diff: FetchedResultsDiff, _ new: FetchedResultsContent) -> FetchedResultsDifference {
        var sections: [FetchedResultsDifference.SectionChange] = []
        var objects: [FetchedResultsDifference.ObjectChange] = []
        for change in diff.changes {
            switch change {
            case .section(let type, let index, let name):
                sections.append(.init(type: type, index: index, name: name))
            case .object(let type, let object, let old, let new):
                objects.append(.init(type: type, objectID: object.objectID, indexPath: old, newIndexPath: new))
            }
        }
        return FetchedResultsDifference(sectionChanges: sections, objectChanges: objects, snapshot: new.snapshot)
    }
}

// MARK: - Following the context

extension FetchedResultsController: ContextChangeTracking {
    func contextDidChange(_ changes: ObjectChanges, merged: ContextSave?) throws {
        guard let content, let entity else { return }
        let context = managedObjectContext
        var ids = changes.inserted.union(changes.updated).union(changes.deleted).union(changes.refreshed)
            .union(changes.invalidated)
        var updatedIDs = changes.updated.union(changes.refreshed)
        if let merged {
            ids.formUnion(merged.inserted.union(merged.updated).union(merged.deleted))
            updatedIDs.formUnion(merged.updated)
        }
        var held: [ManagedObjectID: ManagedObject] = [:]
        for object in content.objects { held[object.objectID] = object }
        var candidates: [ManagedObject] = []
        var seen = Set<ObjectIdentifier>()
        var updated = Set<ObjectIdentifier>()
        for id in ids where id.entity.rootEntity === entity.rootEntity {
            let object: ManagedObject
            if let found = held[id] ?? context.registeredObject(for: id) {
                object = found
            } else if let merged, merged.inserted.contains(id) || merged.updated.contains(id) {
                // Saved elsewhere and not in this context yet: it may enter the results now.
                object = context.object(with: id)
            } else {
                continue
            }
            guard seen.insert(ObjectIdentifier(object)).inserted else { continue }
            candidates.append(object)
            if updatedIDs.contains(id) { updated.insert(ObjectIdentifier(object)) }
        }
        try replace(candidates, updated: updated)
    }

    func contextDidSave() throws {
        guard let content else { return }
        // Saved inserts have row IDs now: among objects the sort keys find equal they take their row's place.
        let saved = content.objects.filter { placedAsInserted.contains(ObjectIdentifier($0)) && !$0.isInserted }
        try replace(saved, updated: [])
        // Their IDs changed even when their places did not: the streams get the new snapshot.
        if let snapshot = self.content?.snapshot, snapshot != streams.lastSnapshot {
            streams.yield(FetchedResultsDifference(sectionChanges: [], objectChanges: [], snapshot: snapshot))
        }
    }

    func contextDidDiscardChanges() throws {
        guard let old = content else { return }
        let objects: [ManagedObject] = try managedObjectContext.fetch(fetchRequest)
        sortValues = [:]
        sectionNames = [:]
        placedAsInserted = Set(objects.filter(\.isInserted).map { ObjectIdentifier($0) })
        let new = try makeContent(objects)
        content = new
        let all = Set(old.objects.map { ObjectIdentifier($0) } + objects.map { ObjectIdentifier($0) })
        report(FetchedResultsDiff(from: old, to: new, candidates: all, updated: all), new)
    }
}

@available(*, unavailable, message: "a controller belongs to its context's thread")
extension FetchedResultsController: Sendable {}
