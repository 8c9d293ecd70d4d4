import StrataQuery

extension ManagedObject {
    /// The objects a fetched property (``FetchedPropertyDescription``) finds for this object: the destination's
    /// objects in the object's context (pending changes included) for which the property's predicate holds,
    /// with `$FETCH_SOURCE` bound to this object.
    ///
    /// Core Data evaluates a fetched property lazily and caches the result until the object is refreshed;
    /// Strata evaluates it on every call (so the result is never stale), in memory over the destination's
    /// objects: keep fetched properties for small destinations, or fetch with a predicate instead.
    ///
    /// For example:
    ///
    ///     let longer = try book.fetchedValues(forKey: "longerBooks")   // pages > $FETCH_SOURCE.pages
    ///
    /// - Parameter key: the fetched property's name.
    /// - Returns: the matching objects, in the order the fetch returns them.
    /// - Throws: ``ObjectGraphError/unknownKey(entity:key:)``, ``ObjectGraphError/noContext(_:)``, what the fetch
    ///   and the predicate's evaluation throw.
    public func fetchedValues(forKey key: String) throws -> [ManagedObject] {
        guard let property = entity.fetchedPropertiesByName[key] else {
            throw ObjectGraphError.unknownKey(entity: entity.name, key: key)
        }
        guard let context = managedObjectContext else { throw ObjectGraphError.noContext(objectID) }
        let candidates = try context.fetch(FetchRequest<ManagedObject>(entityName: property.destinationName))
        guard let predicate = property.predicate else { return candidates }
        return try candidates.filter {
            try predicate.evaluate(with: $0, evaluatedVariables: ["FETCH_SOURCE": .object(self)])
        }
    }
}
