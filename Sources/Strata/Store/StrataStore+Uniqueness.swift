import StrataFormat
import StrataStorage

extension StrataStore {
    // MARK: - Uniqueness indexes

    /// The secondary indexes of the model's uniqueness constraints, as `(name, table name, fields, entity
    /// IDs)`: one per constraint, `unique.<Entity>.<a>+<b>` (``uniquenessIndexName(_:)``) on the constrained
    /// attributes' fields in the constraint's order, filtered to the rows of the declaring entity and its
    /// concrete subentities (FORMAT.md §6.7).
    static func uniquenessIndexes(
        of model: ManagedObjectModel
    ) -> [(name: String, table: String, fields: [Int], entityIDs: Set<UInt16>?)] {
        var specs: [(name: String, table: String, fields: [Int], entityIDs: Set<UInt16>?)] = []
        for entity in model.entities {
            for constraint in entity.uniquenessConstraints where constraint.entity === entity {
                let covered = entity.allEntitiesInHierarchyBelow.filter { !$0.isAbstract }.map(\.entityID)
                guard !covered.isEmpty else { continue }
                specs.append(
                    (
                        uniquenessIndexName(constraint), tableName(for: entity.rootEntity),
                        constraint.attributes.map { $0.fieldIndex! }, Set(covered)
                    ))
            }
        }
        return specs
    }

    /// `unique.<Entity>.<a>+<b>`: the declaring entity and the constrained attributes, in order.
    static func uniquenessIndexName(_ constraint: UniquenessConstraint) -> String {
        "unique.\(constraint.entity.name).\(constraint.attributeNames.joined(separator: "+"))"
    }

    /// Looks the values up in the constraint's `unique.*` index, in one engine snapshot, and decodes the rows
    /// found (usually none or one). Rows are compared again after decoding: the index matches values as their
    /// index encodings do (`-0.0` as `0.0`).
    ///
    /// - Throws: ``ObjectGraphError/storage(_:)`` for an engine failure or an undecodable row;
    ///   ``ObjectGraphError/transformationFailed(key:reason:)`` when a value cannot be encoded.
    public func rows(
        matching constraint: UniquenessConstraint, values: [AttributeValue]
    ) throws -> [(rowID: UInt64, row: StoredRow)] {
        guard let index = indexes[Self.uniquenessIndexName(constraint)] else {
            return try rows(of: constraint.entity, includesSubentities: true).filter {
                $0.row.matches(constraint, values)
            }
        }
        var key: [RowRecord.Field] = []
        for (attribute, value) in zip(constraint.attributes, values) {
            do { key.append(try RowCoder.field(for: value, of: attribute)) } catch {
                throw ObjectGraphError.transformationFailed(key: attribute.name, reason: "\(error)")
            }
        }
        let snapshot = engine.snapshot()
        do {
            var found: [(rowID: UInt64, row: StoredRow)] = []
            for rowID in try snapshot.rowIDs(in: index, matching: key) {
                guard let bytes = try snapshot.row(rowID, in: table(for: constraint.entity)) else { continue }
                reads.add(1, ordering: .relaxed)
                if let row = try decode(bytes, rowID: rowID.rawValue, as: constraint.entity),
                    row.matches(constraint, values)
                {
                    found.append((rowID.rawValue, row))
                }
            }
            return found
        } catch let error as StorageError {
            throw ObjectGraphError.storage(error)
        }
    }
}
