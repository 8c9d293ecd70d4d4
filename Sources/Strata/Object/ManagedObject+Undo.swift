extension ManagedObject {
    /// After an undo or redo: forgets the changes whose values are back to what they were before the
    /// first change since the last fetch or save, and when none is left, the context stops holding the
    /// object strongly (it is no longer updated).
    func revertIfUnchanged() {
        for index in changedIndexes {
            guard let baseline = attributeBaselines[index] else { continue }
            if values[index] == baseline.value && externalReferences[index] == baseline.external {
                changedIndexes.remove(index)
                attributeBaselines[index] = nil
            }
        }
        for index in changedRelationships {
            guard let baseline = relationshipBaselines[index], let current = relationshipValue(at: index) else {
                continue
            }
            if current.holdsSameObjects(as: baseline, ordered: entity.relationships[index].isOrdered) {
                changedRelationships.remove(index)
                relationshipBaselines[index] = nil
            }
        }
        if changedIndexes.isEmpty && changedRelationships.isEmpty {
            managedObjectContext?.objectBecameUnchanged(self)
        }
    }

    /// Forgets the values before the first changes: the current values are the new starting point (a
    /// save, a fetch, a rollback or a refresh).
    func clearBaselines() {
        attributeBaselines = [:]
        relationshipBaselines = [:]
    }
}

extension RelationshipValue {
    /// Whether both values name the same objects (in the same order when `ordered`).
    func holdsSameObjects(as other: RelationshipValue, ordered: Bool) -> Bool {
        switch (self, other) {
        case (.toOne(let left), .toOne(let right)):
            return left === right
        case (.toMany(let left), .toMany(let right)):
            guard left.count == right.count else { return false }
            if ordered { return zip(left.objects, right.objects).allSatisfy { $0 === $1 } }
            return left.objects.allSatisfy { right.contains($0) }
        default:
            return false
        }
    }
}
