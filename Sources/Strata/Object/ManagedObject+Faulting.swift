extension ManagedObject {
    /// Fills a fault with its row's values: from the coordinator's row cache, or the store on a miss.
    ///
    /// A fault whose row is gone is an inaccessible fault: with the context's
    /// ``ManagedObjectContext/shouldDeleteInaccessibleFaults`` (the default) and `deletingInaccessible`, it is
    /// marked deleted with nil or zero values (``markInaccessibleFaultDeleted()``), as Core Data does; otherwise
    /// firing it throws.
    /// - Throws: ``ObjectGraphError/objectInaccessible(_:)`` when the row no longer exists and the fault is not
    ///   marked deleted; ``ObjectGraphError/noContext(_:)`` when the object has no context to read it through.
    func fulfillFaultIfNeeded(deletingInaccessible: Bool = true) throws {
        guard isFault else { return }
        guard let context = managedObjectContext else { throw ObjectGraphError.noContext(objectID) }
        if let batch = faultBatch {
            // Made in a batch: one store query reads the rows of every fault of it, filling them (a batched fetch)
            // or caching them for when they fire (the members of a to-many, which then load the row their batch
            // kept), this one included. A failure leaves faults without rows, which then fire one by one (this one
            // below) and report what is wrong.
            switch batch.filling {
            case .objects:
                let faults = batch.takeFaults(in: context)
                if faults.count > 1 { try? context.fill(faults) }
                if !isFault { return }
            case .rows:
                if let row = batch.row(for: self, in: context) {
                    load(row)
                    return
                }
            }
        }
        guard let row = try context.storedRow(loadingInto: self) else {
            guard deletingInaccessible, context.shouldDeleteInaccessibleFaults else {
                throw ObjectGraphError.objectInaccessible(objectID)
            }
            markInaccessibleFaultDeleted()
            return
        }
        load(row)
    }

    /// Turns a fault whose row is gone into a deleted object (Core Data's `shouldDeleteInaccessibleFaults`):
    /// numbers and Booleans read 0 and false, every other attribute nil, to-ones nil and to-manys empty. The
    /// context does not list it among its deleted objects: there is no row left to delete.
    func markInaccessibleFaultDeleted() {
        state?.forgetValues(of: entity)
        for attribute in entity.attributes {
            values[attribute.index] = Self.zeroValue(of: attribute.type)
        }
        emptyRelationshipValues()
        committed = nil
        committedReferences = nil
        externalReferences = [:]
        committedExternalReferences = [:]
        isFault = false
        isDeleted = true
        isInaccessible = true
    }

    /// What an inaccessible fault's attribute of `type` reads: 0 or false for scalars, else nil.
    private static func zeroValue(of type: AttributeType) -> AttributeValue? {
        switch type {
        case .integer16, .integer32, .integer64: .integer(0)
        case .double: .double(0)
        case .float: .float(0)
        case .decimal: .decimal(0)
        case .boolean: .boolean(false)
        default: nil
        }
    }

    /// Takes a row's values as the object's committed state, then runs ``awakeFromFetch()`` with change
    /// processing off. Transients start from their defaults.
    func load(_ row: consuming StoredRow) {
        // The coordinator is kept only for values outside the row: not asked for otherwise (a retain and a release of
        // it for each fired fault).
        let coordinator = row.referencesBlobs ? managedObjectContext?.coordinator : nil
        if let state {
            state.load(row, of: entity, coordinator: coordinator)
            state.changedIndexes = []
            // Relationship changes made while the object was a fault (inverse maintenance) stay, with their
            // baselines.
            state.attributeBaselines = [:]
        } else {
            state = ObjectState.make(loading: row, of: entity, coordinator: coordinator)
        }
        isFault = false
        changeProcessingEnabled = false
        awakeFromFetch()
        changeProcessingEnabled = true
    }

    /// Drops the object's values (and unsaved changes): the next access fires the fault again.
    func turnIntoFault() {
        guard !isFault else {
            // A fault may still hold a to-many read without firing it: letting go of it breaks cycles too.
            forgetRelationshipValues()
            return
        }
        willTurnIntoFault()
        state?.forgetValues(of: entity)
        changedIndexes = []
        // Dropping the related objects is what breaks reference cycles between objects.
        forgetRelationshipValues()
        changedRelationships = []
        clearBaselines()
        isFault = true
        didTurnIntoFault()
    }

    /// Reads a binary value kept in the store's blob segments, if the attribute still refers to one. Reading it is
    /// not a change: it becomes the committed value too.
    func resolveExternalValue(at index: Int) throws {
        // Every attribute read asks: most objects have no value outside their row, and a test of the state's extras is
        // cheaper than a hashed lookup (or than the count of a table the getter makes empty: 84 instructions a read).
        guard state?.hasExternalReferences == true else { return }
        guard let blob = externalReferences[index], value(at: index) == nil else { return }
        guard let coordinator = managedObjectContext?.coordinator ?? coordinator else {
            throw ObjectGraphError.noContext(objectID)
        }
        let data = try coordinator.store(for: objectID).externalData(blob)
        setValue(.data(data), at: index)
        if let storageIndex = entity.attributes[index].storageIndex { committed?[storageIndex] = .data(data) }
        externalReferences[index] = nil
    }

    /// Reads every binary value still in the store (before a save, which writes whole rows).
    func resolveExternalValues() throws {
        // Most objects have none: no sorted copy of an empty table's keys (a save asks for each object).
        guard state?.hasExternalReferences == true else { return }
        for index in externalReferences.keys.sorted() { try resolveExternalValue(at: index) }
    }

    /// The persistent values in storage order, as a save writes them.
    var persistentValues: [AttributeValue?] {
        // No transients: storage order is attribute order, and the row shares the object's buffer.
        if entity.persistentAttributes.count == entity.attributes.count { return values }
        return entity.persistentAttributes.map { values[$0.index] }
    }
}
