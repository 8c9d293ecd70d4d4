extension PersistentStore {
    /// Scans the rows of the constraint's entity and its subentities for those holding `values` in the
    /// constrained attributes (what a store without indexes does).
    ///
    /// - Throws: what ``rows(of:includesSubentities:)`` throws.
    public func rows(
        matching constraint: UniquenessConstraint, values: [AttributeValue]
    ) throws -> [(rowID: UInt64, row: StoredRow)] {
        try rows(of: constraint.entity, includesSubentities: true).filter { $0.row.matches(constraint, values) }
    }
}

extension StoredRow {
    /// Whether the row holds `values` in the constraint's attributes.
    func matches(_ constraint: UniquenessConstraint, _ values: [AttributeValue]) -> Bool {
        zip(constraint.attributes, values).allSatisfy { value(atStorageIndex: $0.storageIndex!) == $1 }
    }
}
