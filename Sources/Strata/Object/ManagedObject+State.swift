import Foundation

// The object's state, forwarded to ``ObjectState``: a read of an object without one sees what a fault or a new
// object holds (the entity's shared defaults), without making one; a write makes it.
extension ManagedObject {
    /// The object's state, made on first need: a fault's (every relationship unread) or a new object's.
    var madeState: ObjectState {
        if let state { return state }
        let made = isFault ? ObjectState.make(faultOf: entity) : ObjectState.make(newObjectOf: entity)
        state = made
        return made
    }

    /// Values of every attribute (transients included), by ``AttributeDescription/index``: each decoded first (to
    /// read or change one attribute, ``value(at:)`` and ``setValue(_:at:)`` decode no other).
    var values: [AttributeValue?] {
        _read {
            if let state {
                state.decodeAll()
                yield state.values
            } else {
                yield entity.defaultValues
            }
        }
        _modify {
            let state = madeState
            state.decodeAll()
            yield &state.values
        }
    }

    /// Attribute `index`'s value, decoding its field alone when the object was loaded from a row record.
    func value(at index: Int) -> AttributeValue? {
        // The state read without a retain: the object holds it, and a read changes the state's own fields only, never
        // the object's `state` (the retain and release around the call were about 40 instructions of each read).
        if let state = state.map(Unmanaged.passUnretained) {
            return state._withUnsafeGuaranteedRef { $0.value(at: index) }
        }
        return entity.defaultValues[index]
    }

    /// Sets attribute `index`'s value without decoding any other.
    func setValue(_ value: AttributeValue?, at index: Int) {
        madeState.setValue(value, at: index)
    }

    /// The persistent values as last fetched or saved, by storage index; nil when the object has none.
    var committed: [AttributeValue?]? {
        _read {
            if let state {
                if let record = state.record { yield record.values } else { yield state.committed }
            } else {
                yield nil
            }
        }
        _modify {
            let state = madeState
            state.detachRecord()
            // Taken out and put back: the state's `committed` shares its room with the record (it is no stored
            // property to change in place), and a change of one value then changes the only copy.
            var committed = state.committed
            state.committed = nil
            defer { state.committed = committed }
            yield &committed
        }
    }

    /// The row version the committed values were read at (optimistic locking).
    var version: UInt64 {
        _read {
            if let state { yield state.version } else { yield 0 }
        }
        _modify { yield &madeState.version }
    }

    /// The coordinator external values are read through, even after the context is gone: the context's when the
    /// object was given them (``externalReferences``).
    var coordinator: PersistentStoreCoordinator? { state?.coordinator }

    /// Binary values still in their store's blob segments, by attribute index.
    var externalReferences: [Int: UInt64] {
        _read {
            if let state { yield state.externalReferences } else { yield[Int: UInt64]() }
        }
        _modify {
            let state = madeState
            yield &state.externalReferences
            // They are read through the context's coordinator, kept with them for when the context is gone.
            if state.coordinator == nil, !state.externalReferences.isEmpty {
                state.coordinator = managedObjectContext?.coordinator
            }
        }
    }

    /// The external references of the committed state, by storage index.
    var committedExternalReferences: [Int: UInt64] {
        _read {
            if let state {
                if let record = state.record {
                    yield record.externalReferences
                } else {
                    yield state.committedExternalReferences
                }
            } else {
                yield[Int: UInt64]()
            }
        }
        _modify {
            let state = madeState
            state.detachRecord()
            yield &state.committedExternalReferences
        }
    }

    /// Whether any attribute or relationship changed since the last fetch or save.
    var hasChangedProperties: Bool { state?.hasChangedProperties ?? false }

    /// Indexes of the attributes changed since the last fetch or save.
    var changedIndexes: PropertyIndexSet {
        _read {
            if let state { yield state.changedIndexes } else { yield PropertyIndexSet() }
        }
        _modify { yield &madeState.changedIndexes }
    }

    // MARK: - Relationship slots (in the state's allocation: ``ObjectState``)

    /// Relationship `index`'s value (``RelationshipDescription/index`` in ``entity``); nil while it is a fault.
    func relationshipValue(at index: Int) -> RelationshipValue? {
        precondition(index >= 0 && index < entity.relationships.count, "relationship index out of range")
        if let state { return state.relationshipValue(at: index) }
        if isFault { return nil }
        // A new object's to-manys are empty sets the object owns: make them now.
        return madeState.relationshipValue(at: index)
    }

    /// Sets relationship `index`'s value (nil: a fault again).
    func setRelationshipValue(_ value: RelationshipValue?, at index: Int) {
        precondition(index >= 0 && index < entity.relationships.count, "relationship index out of range")
        madeState.setRelationshipValue(value, at: index)
    }

    /// Relationship `index`'s value, leaving it nil (a fault): to change the only copy of a to-many, then put it back
    /// with ``setRelationshipValue(_:at:)``. With the slot still holding the value, each change would copy every
    /// member (and its position table).
    func takeRelationshipValue(at index: Int) -> RelationshipValue? {
        precondition(index >= 0 && index < entity.relationships.count, "relationship index out of range")
        if let state { return state.takeRelationshipValue(at: index) }
        if isFault { return nil }
        return madeState.takeRelationshipValue(at: index)
    }

    /// Makes every relationship a fault again, letting go of the related objects (what breaks reference cycles
    /// between objects). A fault without a state has nothing to let go of (its relationships read as faults); any
    /// other object gets a state whose relationships are faults (without one, it would read a new object's).
    func forgetRelationshipValues() {
        if state == nil && isFault { return }
        madeState.forgetRelationshipValues(count: entity.relationships.count)
    }

    /// Sets every relationship empty: no to-one, no member.
    func emptyRelationshipValues() {
        madeState.setRelationshipValues(entity.emptyRelationshipValues)
    }

    /// The to-ones as last fetched or saved, by ``RelationshipDescription/toOneIndex``.
    var committedReferences: [StoredReference?]? {
        _read {
            if let state {
                if let record = state.record { yield record.references } else { yield state.committedReferences }
            } else {
                yield nil
            }
        }
        _modify {
            let state = madeState
            state.detachRecord()
            // Taken out and put back, as ``committed`` is.
            var references = state.committedReferences
            state.committedReferences = nil
            defer { state.committedReferences = references }
            yield &references
        }
    }

    /// The committed value of the to-one at `toOneIndex` (``RelationshipDescription/toOneIndex``); nil when the
    /// object has no committed state. Decodes that to-one alone when the object was loaded from a row record.
    func committedReference(at toOneIndex: Int) -> StoredReference? {
        guard let state else { return nil }
        if let record = state.record { return record.reference(atToOneIndex: toOneIndex) }
        return state.committedReferences?[toOneIndex] ?? nil
    }

    /// Indexes of the relationships changed since the last fetch or save.
    var changedRelationships: PropertyIndexSet {
        _read {
            if let state { yield state.changedRelationships } else { yield PropertyIndexSet() }
        }
        _modify { yield &madeState.changedRelationships }
    }

    /// Each changed attribute's value before its first change.
    var attributeBaselines: [Int: AttributeBaseline] {
        _read {
            if let state { yield state.attributeBaselines } else { yield[Int: AttributeBaseline]() }
        }
        _modify { yield &madeState.attributeBaselines }
    }

    /// Each changed relationship's value before its first change.
    var relationshipBaselines: [Int: RelationshipValue] {
        _read {
            if let state { yield state.relationshipBaselines } else { yield[Int: RelationshipValue]() }
        }
        _modify { yield &madeState.relationshipBaselines }
    }

    /// Counts the recorded changes of the object (property changes and its deletion), wrapping.
    var changeCount: UInt32 {
        _read {
            if let state { yield state.changeCount } else { yield 0 }
        }
        _modify { yield &madeState.changeCount }
    }

    /// Observers of the object's keys.
    var observers: [String: [UUID: (ManagedObject) -> Void]] {
        _read {
            if let state { yield state.observers } else { yield[String: [UUID: (ManagedObject) -> Void]]() }
        }
        _modify { yield &madeState.observers }
    }

    /// ``changeCount`` + 1 when the save under way last called ``willSave()`` (0: never called).
    var willSaveMark: UInt32 {
        _read {
            if let state { yield state.willSaveMark } else { yield 0 }
        }
        _modify { yield &madeState.willSaveMark }
    }

    /// The order of insertion into its context.
    var insertionSequence: UInt64 {
        _read {
            if let state { yield state.insertionSequence } else { yield 0 }
        }
        _modify { yield &madeState.insertionSequence }
    }
}
