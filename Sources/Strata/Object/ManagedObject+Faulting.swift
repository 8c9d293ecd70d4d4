extension ManagedObject {
    /// Fills a fault with its row's values: from the coordinator's row cache, or the store on a miss.
    /// - Throws: ``ObjectGraphError/objectInaccessible(_:)`` when the row no longer exists.
    func fulfillFaultIfNeeded() throws {
        guard isFault else { return }
        guard let context = managedObjectContext else { throw ObjectGraphError.objectInaccessible(objectID) }
        guard let row = try context.storedRow(for: objectID) else {
            throw ObjectGraphError.objectInaccessible(objectID)
        }
        load(row)
    }

    /// Takes a row's values as the object's committed state, then runs ``awakeFromFetch()`` with change
    /// processing off. Transients start from their defaults.
    func load(_ row: StoredRow) {
        for attribute in entity.attributes {
            values[attribute.index] = attribute.storageIndex.map { row.values[$0] } ?? attribute.defaultValue
        }
        committed = row.values
        version = row.version
        changedIndexes = []
        isFault = false
        changeProcessingEnabled = false
        awakeFromFetch()
        changeProcessingEnabled = true
    }

    /// Drops the object's values (and unsaved changes): the next access fires the fault again.
    func turnIntoFault() {
        guard !isFault else { return }
        willTurnIntoFault()
        for attribute in entity.attributes { values[attribute.index] = attribute.defaultValue }
        committed = nil
        changedIndexes = []
        isFault = true
        didTurnIntoFault()
    }

    /// The persistent values in storage order, as a save writes them.
    var persistentValues: [AttributeValue?] {
        entity.persistentAttributes.map { values[$0.index] }
    }
}
