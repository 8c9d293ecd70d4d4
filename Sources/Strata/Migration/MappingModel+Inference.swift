extension MappingModel {
    /// Infers the mapping lightweight migration performs (Core Data's
    /// `NSMappingModel.inferredMappingModel(forSourceModel:destinationModel:)`), or throws naming the first
    /// change it cannot cover.
    ///
    /// Entities and properties are matched by name, or by the destination's ``EntityDescription/renamingIdentifier``
    /// (``AttributeDescription/renamingIdentifier``...) naming the source's. Inferred: entities and properties
    /// added or removed; an attribute made required when it has a default (nil values take it); optional made
    /// from required; lossless type changes (a wider integer, `Float` to `Double`, an integer to `Decimal` or
    /// `Double` when 32 bits or narrower); an entity moved in its hierarchy; a relationship added, removed,
    /// made ordered or unordered, to-one made to-many, and to-many made to-one (checked against the data when
    /// migrating). Not inferred: a new required attribute without default, a lossy type change, a relationship
    /// whose destination maps to another entity.
    ///
    /// - Throws: ``MigrationError/cannotInferMapping(entity:property:reason:)``.
    public static func inferredMappingModel(
        forSourceModel source: ManagedObjectModel, destinationModel destination: ManagedObjectModel
    ) throws(MigrationError) -> MappingModel {
        // Destination entity name -> source entity.
        var sources: [String: EntityDescription] = [:]
        for entity in destination.entities {
            if let match = source.entity(named: entity.renamingIdentifier ?? entity.name)
                ?? source.entity(named: entity.name)
            {
                sources[entity.name] = match
            }
        }
        var mappings: [EntityMapping] = []
        for entity in destination.entities where !entity.isAbstract {
            let from = sources[entity.name]
            func fail(_ property: String?, _ reason: String) -> MigrationError {
                .cannotInferMapping(entity: entity.name, property: property, reason: reason)
            }
            var attributeSources: [(String, EntityMapping.AttributeValueSource)] = []
            for attribute in entity.persistentAttributes where !attribute.isDerived {
                let found = from.flatMap {
                    $0.attributesByName[attribute.renamingIdentifier ?? attribute.name]
                        ?? $0.attributesByName[attribute.name]
                }
                guard let found, found.storageIndex != nil else {
                    // A new entity has no objects to fill; an existing one's objects need a value.
                    guard from == nil || attribute.isOptional || attribute.defaultValue != nil else {
                        throw fail(attribute.name, "a new required attribute needs a default value")
                    }
                    attributeSources.append((attribute.name, .defaultValue))
                    continue
                }
                guard Self.convertsLosslessly(from: found.type, to: attribute.type) else {
                    throw fail(attribute.name, "\(found.type) values do not convert to \(attribute.type) without loss")
                }
                if found.type == .transformable, found.valueTransformerName != attribute.valueTransformerName {
                    throw fail(attribute.name, "the value transformer changed")
                }
                if found.isOptional, !attribute.isOptional, attribute.defaultValue == nil {
                    throw fail(attribute.name, "made required without a default value for the objects that have none")
                }
                attributeSources.append((attribute.name, .source(found.name)))
            }
            var relationshipSources: [(String, String?)] = []
            for relationship in entity.relationships {
                let found = from.flatMap {
                    $0.relationshipsByName[relationship.renamingIdentifier ?? relationship.name]
                        ?? $0.relationshipsByName[relationship.name]
                }
                guard let found else {
                    if from != nil, relationship.isToMany ? relationship.minCount > 0 : !relationship.isOptional {
                        throw fail(relationship.name, "a new required relationship cannot be filled")
                    }
                    relationshipSources.append((relationship.name, nil))
                    continue
                }
                // The related objects must become objects of the new destination (or of an entity below it).
                let target = relationship.destinationEntity
                let covered = target.allEntitiesInHierarchyBelow.contains { sources[$0.name] != nil }
                let sourceTargets = Set(found.destinationEntity.allEntitiesInHierarchyBelow.map(\.name))
                let mapsInto = target.allEntitiesInHierarchyBelow.contains {
                    sources[$0.name].map { sourceTargets.contains($0.name) } ?? false
                }
                guard covered, mapsInto else {
                    throw fail(
                        relationship.name,
                        "its destination \(target.name) does not take the objects of \(found.destinationEntity.name)")
                }
                relationshipSources.append((relationship.name, found.name))
            }
            mappings.append(
                EntityMapping(
                    destination: entity.name, source: from?.name, attributes: attributeSources,
                    relationships: relationshipSources))
        }
        return MappingModel(entityMappings: mappings, source: source, destination: destination)
    }

    /// Whether every value of `source` is a value of `destination`.
    static func convertsLosslessly(from source: AttributeType, to destination: AttributeType) -> Bool {
        if source == destination { return true }
        switch (source, destination) {
        case (.integer16, .integer32), (.integer16, .integer64), (.integer32, .integer64): return true
        case (.integer16, .decimal), (.integer32, .decimal), (.integer64, .decimal): return true
        case (.integer16, .double), (.integer32, .double), (.float, .double): return true
        default: return false
        }
    }

    /// What differs between two models, one phrase per entity (for errors).
    package static func differences(from source: ManagedObjectModel, to destination: ManagedObjectModel) -> [String] {
        var phrases: [String] = []
        for entity in destination.entities {
            switch source.entityVersionHashesByName[entity.name] {
            case nil: phrases.append("entity \(entity.name) added")
            case entity.versionHash: continue
            default: phrases.append("entity \(entity.name) changed")
            }
        }
        for entity in source.entities where destination.entity(named: entity.name) == nil {
            phrases.append("entity \(entity.name) removed")
        }
        return phrases
    }
}
