/// The definition of a fetch index in the model DSL (Core Data's `NSFetchIndexDescription`): one or more
/// properties whose values, in order, make one key, so that fetches comparing the first of them are answered
/// from the index instead of a scan.
///
/// For example:
///
///     Entity("Employee", indexes: [FetchIndex("byNameAndAge", .ascending("lastName"), .descending("age"))]) {
///         Attribute("lastName", .string)
///         Attribute("age", .integer16)
///     }
///
/// Elements name persistent attributes or to-one relationships of the entity (own or inherited). As in Core
/// Data, indexes are not part of the version hash. The Strata store keeps every index in ascending key order
/// (the engine's indexes have one order); a descending element is recorded in the model and read backwards.
///
/// ## Topics
/// - ``init(_:_:)``
/// - ``Element``
public struct FetchIndex: Sendable, Hashable {
    /// The index's name, unique among the entity's indexes.
    public var name: String
    /// The properties of the key, in order.
    public var elements: [Element]

    /// Defines an index over `elements`, in order.
    ///
    /// - Parameters:
    ///   - name: the index's name, unique in its entity.
    ///   - elements: one or more elements (at most 16).
    public init(_ name: String, _ elements: Element...) {
        self.init(name, elements: elements)
    }

    /// Defines an index over `elements`, in order.
    public init(_ name: String, elements: [Element]) {
        self.name = name
        self.elements = elements
    }

    /// One property of an index key (Core Data's `NSFetchIndexElementDescription`).
    public struct Element: Sendable, Hashable {
        /// The name of a persistent attribute or to-one relationship.
        public var property: String
        /// Whether the key orders this property's values from small to large.
        public var isAscending: Bool
        /// How values are compared: Core Data's R-tree collation is recorded but the Strata store builds a
        /// binary (B+tree) index for it, which answers the same fetches.
        public var collationType: CollationType

        /// An element over `property`.
        public init(_ property: String, ascending: Bool = true, collationType: CollationType = .binary) {
            self.property = property
            self.isAscending = ascending
            self.collationType = collationType
        }

        /// An ascending element over `property`.
        public static func ascending(_ property: String) -> Element { Element(property) }
        /// A descending element over `property`.
        public static func descending(_ property: String) -> Element { Element(property, ascending: false) }
    }

    /// Core Data's `NSFetchIndexElementType`.
    public enum CollationType: String, Sendable, Hashable {
        /// An ordinary ordered index.
        case binary
        /// A spatial index in Core Data's SQLite store; a binary index in Strata.
        case rTree
    }
}
