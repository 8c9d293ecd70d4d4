import Foundation

/// An object's persistent state at one moment: the values of its persistent attributes and the objects its
/// to-one relationships name, with the row version they belong to (Core Data's conflict snapshots, which
/// also leave to-manys out).
///
/// A snapshot is a value: it names related objects by ID, so it can cross threads inside an error.
///
/// ## Topics
/// - ``version``
/// - ``values``
/// - ``relatedObjects``
/// - ``subscript(_:)``
public struct ObjectSnapshot: Sendable, Hashable, CustomStringConvertible {
    /// The row version the state belongs to; for an object's own (unsaved) state, the version it was read at.
    public var version: UInt64
    /// Each persistent attribute's value by name; attributes whose value is nil are absent.
    public var values: [String: AttributeValue]
    /// The object each to-one relationship names, by relationship name; to-ones that name none are absent.
    public var relatedObjects: [String: ManagedObjectID]

    /// Creates a snapshot.
    ///
    /// - Parameters:
    ///   - version: the row version.
    ///   - values: the non-nil persistent attribute values, by name.
    ///   - relatedObjects: the non-nil to-ones, by name.
    public init(version: UInt64, values: [String: AttributeValue], relatedObjects: [String: ManagedObjectID] = [:]) {
        self.version = version
        self.values = values
        self.relatedObjects = relatedObjects
    }

    /// The value of the attribute named `key`, or nil when it is nil (or not an attribute).
    public subscript(_ key: String) -> AttributeValue? { values[key] }

    /// E.g. `v3 {lastName="Jones", salary=200} department=x-strata://…/Department/p1`.
    public var description: String {
        let fields = values.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        let related = relatedObjects.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value)" }
        return "v\(version) {\(fields.joined(separator: ", "))}" + related.joined()
    }

    /// The snapshot of a row's values (by storage index) and to-ones (by to-one index), objects of `store`.
    init(
        entity: EntityDescription, version: UInt64, values: [AttributeValue?], references: [StoredReference?],
        storeIdentifier: UUID
    ) {
        self.version = version
        var named: [String: AttributeValue] = [:]
        for attribute in entity.persistentAttributes {
            if let value = values[attribute.storageIndex!] { named[attribute.name] = value }
        }
        self.values = named
        var related: [String: ManagedObjectID] = [:]
        for relationship in entity.toOneRelationships {
            guard let index = relationship.toOneIndex, index < references.count, let reference = references[index]
            else { continue }
            related[relationship.name] = ManagedObjectID(
                entity: reference.entity, storeIdentifier: storeIdentifier, rowID: reference.rowID)
        }
        self.relatedObjects = related
    }
}
