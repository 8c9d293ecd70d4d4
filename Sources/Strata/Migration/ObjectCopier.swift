import Foundation

/// Copies every object of one coordinator's stores into another's, as a ``MappingModel`` says: the migration's
/// data step, the same for both store types.
///
/// 1. Objects and attributes: for each entity mapping with a source, the source entity's own objects (not its
///    subentities', which have mappings of their own) are fetched and re-created in the destination, each
///    attribute converted as the mapping allows; saved in batches of ``batchSize``.
/// 2. Relationships: each destination relationship is set from its source relationship, through the objects
///    step 1 made (inverses are maintained by the destination context as for any change).
///
/// Every save validates against the destination model and computes derived attributes. `package`: the PostgreSQL
/// store's schema migration copies with it too.
package struct ObjectCopier {
    let old: PersistentStoreCoordinator
    let new: PersistentStoreCoordinator
    let mapping: MappingModel

    /// Objects saved per batch: bounds the memory a migration holds.
    static let batchSize = 2000

    package init(from old: PersistentStoreCoordinator, to new: PersistentStoreCoordinator, mapping: MappingModel) {
        self.old = old
        self.new = new
        self.mapping = mapping
    }

    /// Runs both steps; `progress` gets the fraction done, up to 0.99.
    ///
    /// - Throws: ``MigrationError/dataDoesNotFit(entity:property:reason:)`` when a to-one would take several
    ///   objects; what fetching and saving throw (``ValidationError`` for an object the new model refuses).
    package func copy(progress: ((Double) -> Void)?) throws {
        let destination = new.model
        let mappings = mapping.entityMappings.filter { $0.sourceEntityName != nil }
        var total = 0
        for entityMapping in mappings {
            total += try ManagedObjectContext(coordinator: old).fetch(request(entityMapping.sourceEntityName!)).count
        }
        var done = 0
        func advance(_ count: Int) {
            done += count
            progress?(total == 0 ? 0.99 : 0.99 * Double(done) / Double(2 * total))
        }
        var identifiers: [ManagedObjectID: ManagedObjectID] = [:]
        for entityMapping in mappings {
            let entity = destination.entity(named: entityMapping.destinationEntityName)!
            let reader = ManagedObjectContext(coordinator: old)
            let objects = try reader.fetch(request(entityMapping.sourceEntityName!))
            for start in stride(from: 0, to: objects.count, by: Self.batchSize) {
                let writer = ManagedObjectContext(coordinator: new)
                var batch: [(ManagedObjectID, ManagedObject)] = []
                for object in objects[start..<min(start + Self.batchSize, objects.count)] {
                    let copy = ManagedObject(entity: entity, insertInto: writer)
                    for (destinationKey, source) in entityMapping.attributeMappings {
                        switch source {
                        case .source(let sourceKey):
                            guard let value = try object.attributeValue(forKey: sourceKey) else { continue }
                            let attribute = entity.attributesByName[destinationKey]!
                            try copy.setAttributeValue(Self.convert(value, to: attribute.type), forKey: destinationKey)
                        case .defaultValue:
                            continue
                        case .computed(let compute):
                            try copy.setValue(try compute(object), forKey: destinationKey)
                        }
                    }
                    if let policy = entityMapping.policy,
                        !(try policy.createDestinationInstance(forSource: object, destination: copy))
                    {
                        writer.delete(copy)
                        continue
                    }
                    batch.append((object.objectID, copy))
                }
                try writer.save()
                for (id, copy) in batch { identifiers[id] = copy.objectID }
                advance(batch.count)
            }
        }
        for entityMapping in mappings
        where entityMapping.policy != nil || entityMapping.relationshipMappings.contains(where: { $0.source != nil }) {
            let entity = destination.entity(named: entityMapping.destinationEntityName)!
            let reader = ManagedObjectContext(coordinator: old)
            let objects = try reader.fetch(request(entityMapping.sourceEntityName!))
            for start in stride(from: 0, to: objects.count, by: Self.batchSize) {
                let writer = ManagedObjectContext(coordinator: new)
                let slice = objects[start..<min(start + Self.batchSize, objects.count)]
                for object in slice {
                    // An object a policy dropped has no copy.
                    guard let id = identifiers[object.objectID] else { continue }
                    var copy: ManagedObject?
                    for case (let destinationKey, let sourceKey?) in entityMapping.relationshipMappings {
                        let mapped = try mappedMembers(of: object, sourceKey, identifiers: identifiers, writer: writer)
                        // A new object's relationships are empty: only non-empty ones are set (no fault fired).
                        if mapped.isEmpty { continue }
                        let target = copy ?? writer.object(with: id)
                        copy = target
                        try setRelationship(
                            entity.relationshipsByName[destinationKey]!, of: target, to: mapped, source: object)
                    }
                    if let policy = entityMapping.policy {
                        try policy.createRelationships(forDestination: copy ?? writer.object(with: id), source: object)
                    }
                }
                try writer.save()
                advance(slice.count)
            }
        }
    }

    /// The destination objects of the objects `object` holds in relationship `sourceKey` (objects of removed
    /// entities, or dropped by a policy, have none), in order for an ordered relationship.
    private func mappedMembers(
        of object: ManagedObject, _ sourceKey: String, identifiers: [ManagedObjectID: ManagedObjectID],
        writer: ManagedObjectContext
    ) throws -> [ManagedObject] {
        let value = try object.value(forKey: sourceKey)
        let members: [ManagedObject] =
            (value as? ManagedObject).map { [$0] } ?? (value as? [ManagedObject])
            ?? (value as? Set<ManagedObject>).map { $0.sorted { "\($0.objectID)" < "\($1.objectID)" } } ?? []
        return members.compactMap { identifiers[$0.objectID].map(writer.object(with:)) }
    }

    /// Sets a destination relationship to `mapped` objects.
    private func setRelationship(
        _ relationship: RelationshipDescription, of copy: ManagedObject, to mapped: [ManagedObject],
        source object: ManagedObject
    ) throws {
        if relationship.isToMany {
            try copy.setValue(relationship.isOrdered ? mapped as Any : Set(mapped) as Any, forKey: relationship.name)
        } else {
            guard mapped.count <= 1 else {
                throw MigrationError.dataDoesNotFit(
                    entity: relationship.entity.name, property: relationship.name,
                    reason: "\(object.objectID) holds \(mapped.count) objects; the to-one takes one")
            }
            try copy.setValue(mapped.first, forKey: relationship.name)
        }
    }

    private func request(_ entityName: String) -> FetchRequest<ManagedObject> {
        let request = FetchRequest<ManagedObject>(entityName: entityName)
        request.includesSubentities = false
        request.returnsObjectsAsFaults = false
        return request
    }

    /// A value of a source attribute as a value of the destination's type (a lossless conversion the mapping
    /// allowed).
    static func convert(_ value: AttributeValue, to type: AttributeType) -> AttributeValue {
        switch (value, type) {
        case (.integer(let number), .decimal): .decimal(Decimal(number))
        case (.integer(let number), .double): .double(Double(number))
        case (.float(let number), .double): .double(Double(number))
        default: value
        }
    }
}
