/// The definition of an attribute in the model DSL: what ``AttributeDescription`` is built from.
///
/// Create one inside an ``Entity`` and refine it with modifiers; each modifier returns a changed copy.
///
/// For example:
///
///     Entity("Employee") {
///         Attribute("name", .string, optional: false).validated(.length(min: 1, max: 100))
///         Attribute("salary", .integer64, default: .integer(0))
///         Attribute("photo", .binaryData).allowsExternalStorage()
///         Attribute("tags", .transformable, valueTransformerName: "Tags")
///         Attribute("fullName", .string).transient()
///     }
///
/// ## Topics
///
/// ### Creating an attribute
/// - ``init(_:_:optional:default:valueTransformerName:)``
///
/// ### Modifiers
/// - ``validated(_:)``
/// - ``transient(_:)``
/// - ``indexed(_:)``
/// - ``allowsExternalStorage(_:)``
/// - ``valueTransformer(_:)``
/// - ``derived(_:)``
/// - ``valueClassName(_:)``
public struct Attribute: Sendable, Hashable, ModelElementMetadata {
    /// The attribute's name, unique within its entity and the entity's ancestors.
    public var name: String
    /// The type of its values.
    public var type: AttributeType
    /// Whether nil is a valid value; see ``AttributeDescription/isOptional``.
    public var isOptional: Bool
    /// Whether the attribute is kept in memory only, never stored.
    public var isTransient: Bool
    /// The value a new object starts with.
    public var defaultValue: AttributeValue?
    /// Whether large values may be stored outside the row (binary and transformable attributes).
    public var allowsExternalBinaryDataStorage: Bool
    /// Whether a deleted object's value stays in persistent history, as its tombstone (Core Data's
    /// `preservesValueInHistoryOnDeletion`; default false).
    public var preservesValueInHistoryOnDeletion = false
    /// The name of the ``ValueTransformer`` of a transformable attribute.
    public var valueTransformerName: String?
    /// The constraints validation checks, in order.
    public var validationRules: [ValidationRule]
    /// Whether fetches should be able to find objects by this attribute quickly (recorded for the store).
    public var isIndexed: Bool
    /// For a derived attribute, the expression its value is computed from at each save (see ``Derivation``).
    public var derivationExpression: String?
    /// The Swift type of a transformable attribute's values, for generated classes (Core Data's
    /// `attributeValueClassName`, the model editor's "Custom Class").
    public var valueClassName: String?
    /// Free-form key-value pairs for the application.
    public var userInfo: [String: String] = [:]
    /// The attribute's name in an earlier model version.
    public var renamingIdentifier: String?
    /// A string mixed into the entity's version hash.
    public var versionHashModifier: String?

    /// Defines an attribute.
    ///
    /// - Parameters:
    ///   - name: the attribute's name.
    ///   - type: the type of its values.
    ///   - optional: whether nil is valid (default true, as in Core Data).
    ///   - defaultValue: the value new objects start with (default nil); it must be of `type`.
    ///   - valueTransformerName: for a transformable attribute, the name its ``ValueTransformer`` is
    ///     registered under in ``ValueTransformerRegistry``.
    public init(
        _ name: String, _ type: AttributeType, optional: Bool = true, default defaultValue: AttributeValue? = nil,
        valueTransformerName: String? = nil
    ) {
        self.name = name
        self.type = type
        self.isOptional = optional
        self.isTransient = false
        self.defaultValue = defaultValue
        self.allowsExternalBinaryDataStorage = false
        self.valueTransformerName = valueTransformerName
        self.validationRules = []
        self.isIndexed = false
    }

    /// Adds validation rules, checked after any added before.
    public func validated(_ rules: ValidationRule...) -> Attribute {
        var copy = self
        copy.validationRules += rules
        return copy
    }

    /// Makes the attribute transient (kept in memory, never stored), or not.
    public func transient(_ isTransient: Bool = true) -> Attribute {
        var copy = self
        copy.isTransient = isTransient
        return copy
    }

    /// Keeps the attribute's value in persistent history when its object is deleted (a tombstone), or not.
    public func preservesValueInHistory(_ preserves: Bool = true) -> Attribute {
        var copy = self
        copy.preservesValueInHistoryOnDeletion = preserves
        return copy
    }

    /// Marks the attribute as indexed for fetches, or not.
    public func indexed(_ isIndexed: Bool = true) -> Attribute {
        var copy = self
        copy.isIndexed = isIndexed
        return copy
    }

    /// Lets the store keep large values outside the row, or not (binary and transformable attributes).
    public func allowsExternalStorage(_ allows: Bool = true) -> Attribute {
        var copy = self
        copy.allowsExternalBinaryDataStorage = allows
        return copy
    }

    /// Names the ``ValueTransformer`` of a transformable attribute.
    public func valueTransformer(_ name: String) -> Attribute {
        var copy = self
        copy.valueTransformerName = name
        return copy
    }

    /// Makes the attribute derived: its value is computed from `expression` by every save (see ``Derivation``).
    public func derived(_ expression: String) -> Attribute {
        var copy = self
        copy.derivationExpression = expression
        return copy
    }

    /// Names the Swift type of a transformable attribute's values, for generated classes.
    public func valueClassName(_ name: String?) -> Attribute {
        var copy = self
        copy.valueClassName = name
        return copy
    }
}
