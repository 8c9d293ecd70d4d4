import Foundation

/// An attribute of an entity as the built model describes it (Core Data's `NSAttributeDescription`):
/// immutable, shared by every thread, and the same object in the entity that declares it and in every
/// entity that inherits it.
///
/// The model owns its descriptions: ``entity`` is an unowned reference, so keep the
/// ``ManagedObjectModel`` alive while you use them (a coordinator does).
///
/// For example:
///
///     let salary = model.entity(named: "Employee")!.attributesByName["salary"]!
///     salary.type           // .integer64
///     salary.storageIndex   // its field in Employee and Manager rows
///     try salary.validate(.integer(-1), objectDescription: "Employee/p1")   // throws .valueTooSmall
///
/// ## Topics
///
/// ### Definition
/// - ``name``
/// - ``type``
/// - ``isOptional``
/// - ``isTransient``
/// - ``defaultValue``
/// - ``allowsExternalBinaryDataStorage``
/// - ``valueTransformerName``
/// - ``validationRules``
/// - ``isIndexed``
/// - ``derivation``
/// - ``valueClassName``
/// - ``userInfo``
/// - ``renamingIdentifier``
/// - ``versionHashModifier``
///
/// ### Place in the model
/// - ``entity``
/// - ``index``
/// - ``storageIndex``
///
/// ### Validation
/// - ``validate(_:objectDescription:)``
public final class AttributeDescription: PropertyDescription, Hashable {
    /// The attribute's name.
    public let name: String
    /// The type of its values.
    public let type: AttributeType
    /// Whether nil is a valid value. Defaults to true, as Core Data's model editor does.
    public let isOptional: Bool
    /// Whether the attribute is kept in memory only, never stored: it has no ``storageIndex`` and is not
    /// part of the version hash.
    public let isTransient: Bool
    /// The value a new object starts with (nil: none). Always of ``type``.
    public let defaultValue: AttributeValue?
    /// Whether the store may keep a large value outside the row, in the blob store (binary and
    /// transformable attributes). Small values stay in the row either way.
    public let allowsExternalBinaryDataStorage: Bool
    /// Whether a deleted object's value stays in persistent history as its tombstone (not part of the version
    /// hash: it changes what history records, not what the store holds).
    public let preservesValueInHistoryOnDeletion: Bool
    /// For a transformable attribute, the name of its ``ValueTransformer`` in
    /// ``ValueTransformerRegistry``; it must be registered by the time a value is stored or read, not
    /// when the model is built.
    public let valueTransformerName: String?
    /// The constraints ``validate(_:objectDescription:)`` checks, in order.
    public let validationRules: [ValidationRule]
    /// Whether fetches should find objects by this attribute quickly (recorded for the store's indexes).
    public let isIndexed: Bool
    /// How a derived attribute's value is computed at each save, nil for an ordinary attribute.
    public let derivation: Derivation?
    /// The Swift type of a transformable attribute's values, for generated classes.
    public let valueClassName: String?
    /// Free-form key-value pairs for the application.
    public let userInfo: [String: String]
    /// The attribute's name in an earlier model version.
    public let renamingIdentifier: String?
    /// The string mixed into the entity's version hash for this attribute, if any.
    public let versionHashModifier: String?
    /// Whether the attribute is derived (Core Data's `NSDerivedAttributeDescription`).
    public var isDerived: Bool { derivation != nil }
    /// The entity that declares the attribute (for an inherited attribute, an ancestor of the entity
    /// you found it in).
    public unowned let entity: EntityDescription
    /// The attribute's position in ``EntityDescription/attributes``: inherited attributes come first, so
    /// the position is the same in every entity that has the attribute.
    public let index: Int
    /// The position of the attribute's value among the persistent attributes (inherited first), the same
    /// in every entity that has the attribute; nil for a transient attribute.
    public let storageIndex: Int?
    /// The position of the attribute's field in a row record, nil for a transient attribute. Differs from
    /// ``storageIndex`` once an ancestor has to-one relationships, whose fields follow that ancestor's
    /// attributes.
    public let fieldIndex: Int?
    /// The compiled pattern of each rule, in the order of ``validationRules`` (nil for other rules).
    let patterns: [CompiledPattern?]

    /// Builds and checks the attribute of `entity` that `definition` defines.
    init(
        definition: Attribute, entity: EntityDescription, index: Int, storageIndex: Int?, fieldIndex: Int?
    ) throws(ModelError) {
        let entityName = entity.name
        let name = definition.name
        let type = definition.type
        if type == .undefined && !definition.isTransient {
            throw .undefinedTypeOnPersistentAttribute(entity: entityName, attribute: name)
        }
        if type == .transformable {
            guard let transformer = definition.valueTransformerName, !transformer.isEmpty else {
                throw .missingValueTransformerName(entity: entityName, attribute: name)
            }
        } else if definition.valueTransformerName != nil {
            throw .optionNotApplicable(entity: entityName, attribute: name, option: "valueTransformerName")
        }
        if definition.allowsExternalBinaryDataStorage && type != .binaryData && type != .transformable {
            throw .optionNotApplicable(entity: entityName, attribute: name, option: "allowsExternalBinaryDataStorage")
        }
        if let value = definition.defaultValue, !type.holds(value) {
            throw .defaultValueTypeMismatch(entity: entityName, attribute: name, expected: type)
        }
        var derivation: Derivation?
        if let expression = definition.derivationExpression {
            guard let parsed = Derivation(expression: expression) else {
                throw .invalidDerivation(
                    entity: entityName, attribute: name, expression: expression,
                    reason: "Strata computes now(), key paths through to-ones, and @count, @sum, @min, @max and @avg "
                        + "over a to-many")
            }
            guard !definition.isTransient else {
                throw .invalidDerivation(
                    entity: entityName, attribute: name, expression: expression, reason: "a derived attribute is stored"
                )
            }
            derivation = parsed
        }
        var patterns: [CompiledPattern?] = []
        for rule in definition.validationRules {
            guard rule.applies(to: type) else {
                throw .ruleNotApplicable(entity: entityName, attribute: name, rule: rule)
            }
            if case .regularExpression(let pattern) = rule {
                guard let compiled = CompiledPattern(pattern) else {
                    throw .invalidRegularExpression(entity: entityName, attribute: name, pattern: pattern)
                }
                patterns.append(compiled)
            } else {
                patterns.append(nil)
            }
        }
        self.name = name
        self.type = type
        self.isOptional = definition.isOptional
        self.isTransient = definition.isTransient
        self.defaultValue = definition.defaultValue
        self.allowsExternalBinaryDataStorage = definition.allowsExternalBinaryDataStorage
        self.preservesValueInHistoryOnDeletion = definition.preservesValueInHistoryOnDeletion
        self.valueTransformerName = definition.valueTransformerName
        self.validationRules = definition.validationRules
        self.isIndexed = definition.isIndexed
        self.derivation = derivation
        self.valueClassName = definition.valueClassName
        self.userInfo = definition.userInfo
        self.renamingIdentifier = definition.renamingIdentifier
        self.versionHashModifier = definition.versionHashModifier
        self.entity = entity
        self.index = index
        self.storageIndex = storageIndex
        self.fieldIndex = fieldIndex
        self.patterns = patterns
    }

    /// A one-line summary, e.g. `salary: Integer 64 = 0 (field 1)`.
    public var description: String {
        var text = "\(name): \(type)"
        if !isOptional { text += " (mandatory)" }
        if let defaultValue { text += " = \(defaultValue)" }
        if let storageIndex { text += " (field \(storageIndex))" } else { text += " (transient)" }
        return text
    }

    /// Identity: two descriptions are equal when they are the same object.
    public static func == (lhs: AttributeDescription, rhs: AttributeDescription) -> Bool { lhs === rhs }

    /// Hashes the object's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// A regular expression compiled once, at model build, to match whole strings.
///
/// `@unchecked Sendable`: `NSRegularExpression` is immutable and documented as safe to use from any
/// thread; some Foundation versions do not mark it `Sendable`.
struct CompiledPattern: @unchecked Sendable {
    let expression: NSRegularExpression

    /// Compiles `pattern` anchored at both ends (`\A(?:pattern)\z`), or returns nil when the pattern
    /// does not compile on its own.
    init?(_ pattern: String) {
        guard (try? NSRegularExpression(pattern: pattern)) != nil else { return nil }
        if let anchored = try? NSRegularExpression(pattern: "\\A(?:" + pattern + ")\\z") {
            expression = anchored
        } else if let anchored = try? NSRegularExpression(pattern: "\\A(?:" + pattern + "\n)\\z") {
            // A pattern in free-spacing mode ending in a `#` comment swallows the closing parenthesis;
            // the newline ends the comment (and free-spacing mode ignores it).
            expression = anchored
        } else {
            return nil
        }
    }

    /// Whether the whole of `string` matches.
    func matches(_ string: String) -> Bool {
        expression.firstMatch(in: string, range: NSRange(string.startIndex..., in: string)) != nil
    }
}
