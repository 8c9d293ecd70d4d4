/// A description of objects to fetch: an entity (with or without its subentities), a window
/// (``fetchOffset``, ``fetchLimit``) and how results come back. Results are in row order, store by store,
/// followed by matching objects inserted into the context and not yet saved.
///
/// For example:
/// ```swift
/// let request = FetchRequest<Employee>(entityName: "Employee")
/// request.fetchLimit = 10
/// let employees = try context.fetch(request)
/// ```
public final class FetchRequest<Result: ManagedObject> {
    /// The name of the entity to fetch; ``ManagedObjectContext/fetch(_:)`` throws
    /// ``ObjectGraphError/unknownEntity(_:)`` when the model has no such entity.
    public let entityName: String
    /// Whether objects of subentities are included (default true).
    public var includesSubentities = true
    /// At most this many results (0: no limit).
    public var fetchLimit = 0
    /// Skip this many results first.
    public var fetchOffset = 0
    /// Whether objects not yet registered come back as faults (default true); false fills them.
    public var returnsObjectsAsFaults = true
    /// Whether unsaved inserts are included and unsaved deletes excluded (default true).
    public var includesPendingChanges = true

    /// Creates a request for every object of an entity, with the default options.
    ///
    /// - Parameter entityName: the entity's name in the model. Its objects (and those of its subentities)
    ///   must be instances of `Result`, or fetching stops the program.
    public init(entityName: String) {
        self.entityName = entityName
    }
}

extension ManagedObjectContext {
    /// Fetches the objects a request describes, registering them (uniquing: an object already registered is
    /// returned as it is in memory, never overwritten by the store's values).
    /// - Throws: ``ObjectGraphError/unknownEntity(_:)``, ``ObjectGraphError/storage(_:)``.
    public func fetch<Result: ManagedObject>(_ request: FetchRequest<Result>) throws -> [Result] {
        guard let entity = coordinator.model.entity(named: request.entityName) else {
            throw ObjectGraphError.unknownEntity(request.entityName)
        }
        func matches(_ candidate: EntityDescription) -> Bool {
            request.includesSubentities ? candidate.isKind(of: entity) : candidate === entity
        }
        var results: [ManagedObject] = []
        for store in coordinator.persistentStores {
            for (rowID, row) in try store.rows(of: entity, includesSubentities: request.includesSubentities) {
                let id = ManagedObjectID(entity: row.entity, storeIdentifier: store.identifier, rowID: rowID)
                let object = object(for: id, row: row, populate: !request.returnsObjectsAsFaults)
                if request.includesPendingChanges, object.isDeleted { continue }
                results.append(object)
            }
        }
        if request.includesPendingChanges {
            results += insertedInOrder.filter { matches($0.entity) }
        }
        var window = results.dropFirst(min(request.fetchOffset, results.count))
        if request.fetchLimit > 0 { window = window.prefix(request.fetchLimit) }
        return window.map {
            guard let typed = $0 as? Result else {
                preconditionFailure(
                    "\($0.entity.name) objects are \(type(of: $0)), not \(Result.self): register the class")
            }
            return typed
        }
    }

    /// How many objects ``fetch(_:)`` would return, without making objects for rows.
    ///
    /// - Throws: ``ObjectGraphError/unknownEntity(_:)``, ``ObjectGraphError/storage(_:)``.
    public func count<Result: ManagedObject>(for request: FetchRequest<Result>) throws -> Int {
        guard let entity = coordinator.model.entity(named: request.entityName) else {
            throw ObjectGraphError.unknownEntity(request.entityName)
        }
        var count = 0
        for store in coordinator.persistentStores {
            for (rowID, row) in try store.rows(of: entity, includesSubentities: request.includesSubentities) {
                let id = ManagedObjectID(entity: row.entity, storeIdentifier: store.identifier, rowID: rowID)
                if request.includesPendingChanges, registry[id]?.object?.isDeleted == true { continue }
                count += 1
            }
        }
        if request.includesPendingChanges {
            count +=
                inserted.values.filter {
                    request.includesSubentities ? $0.entity.isKind(of: entity) : $0.entity === entity
                }.count
        }
        count = max(0, count - request.fetchOffset)
        return request.fetchLimit > 0 ? min(count, request.fetchLimit) : count
    }
}
