/// Why a ``ManagedObjectModel`` could not be built from its definitions.
///
/// Building checks the whole model once, so that nothing later has to: entities are checked in
/// inheritance order (parents first, then by name) and attributes in declaration order, and the first
/// problem found is thrown.
///
/// ## Topics
///
/// ### Entities
/// - ``emptyEntityName``
/// - ``duplicateEntity(_:)``
/// - ``unknownParent(entity:parent:)``
/// - ``inheritanceCycle(_:)``
/// - ``tooManyEntities(_:)``
///
/// ### Attributes
/// - ``emptyAttributeName(entity:)``
/// - ``duplicateAttribute(entity:attribute:)``
/// - ``redeclaredAttribute(entity:attribute:inheritedFrom:)``
/// - ``undefinedTypeOnPersistentAttribute(entity:attribute:)``
/// - ``defaultValueTypeMismatch(entity:attribute:expected:)``
/// - ``missingValueTransformerName(entity:attribute:)``
/// - ``optionNotApplicable(entity:attribute:option:)``
/// - ``ruleNotApplicable(entity:attribute:rule:)``
/// - ``invalidRegularExpression(entity:attribute:pattern:)``
///
/// ### Relationships
/// - ``unknownDestination(entity:relationship:destination:)``
/// - ``unknownInverse(entity:relationship:inverse:)``
/// - ``inverseMismatch(entity:relationship:inverse:reason:)``
/// - ``invalidCount(entity:relationship:)``
///
/// ### Uniqueness constraints
/// - ``invalidUniquenessConstraint(entity:attributes:reason:)``
///
/// ### Indexes, derived and fetched properties, configurations
/// - ``invalidFetchIndex(entity:index:reason:)``
/// - ``invalidDerivation(entity:attribute:expression:reason:)``
/// - ``invalidFetchedProperty(entity:property:reason:)``
/// - ``invalidConfiguration(_:reason:)``
/// - ``invalidFetchRequestTemplate(_:reason:)``
public enum ModelError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An entity's name is empty.
    case emptyEntityName
    /// Two entities have the same name.
    case duplicateEntity(String)
    /// An entity names a parent that the model does not define.
    case unknownParent(entity: String, parent: String)
    /// Entities inherit from each other in a cycle; the names follow the chain of parents, starting
    /// from the smallest name.
    case inheritanceCycle([String])
    /// More entities than a u16 entity ID can number (65,535).
    case tooManyEntities(Int)
    /// A relationship names a destination entity the model does not define.
    case unknownDestination(entity: String, relationship: String, destination: String)
    /// A relationship names an inverse its destination does not have.
    case unknownInverse(entity: String, relationship: String, inverse: String)
    /// A relationship and the inverse it names do not describe the same link (the inverse leads to another
    /// entity or names another inverse).
    case inverseMismatch(entity: String, relationship: String, inverse: String, reason: String)
    /// A to-many's minimum count is negative or above its maximum, or its maximum is below 1.
    case invalidCount(entity: String, relationship: String)
    /// An attribute's name is empty.
    case emptyAttributeName(entity: String)
    /// An entity declares two attributes of the same name.
    case duplicateAttribute(entity: String, attribute: String)
    /// An entity declares an attribute that it already inherits from `inheritedFrom`.
    case redeclaredAttribute(entity: String, attribute: String, inheritedFrom: String)
    /// A persistent (non-transient) attribute has type ``AttributeType/undefined``, which cannot be stored.
    case undefinedTypeOnPersistentAttribute(entity: String, attribute: String)
    /// A default value is not a value of the attribute's type (or outside its integer width).
    case defaultValueTypeMismatch(entity: String, attribute: String, expected: AttributeType)
    /// A transformable attribute has no value transformer name.
    case missingValueTransformerName(entity: String, attribute: String)
    /// An attribute option does not apply to the attribute's type: `valueTransformerName` off a
    /// transformable attribute, or `allowsExternalBinaryDataStorage` off a binary or transformable one.
    case optionNotApplicable(entity: String, attribute: String, option: String)
    /// A validation rule does not apply to the attribute's type, or a range bound is of the wrong type.
    case ruleNotApplicable(entity: String, attribute: String, rule: ValidationRule)
    /// A regular expression rule's pattern does not compile.
    case invalidRegularExpression(entity: String, attribute: String, pattern: String)
    /// A uniqueness constraint is empty, names an attribute twice, or names something that is not a
    /// persistent attribute of the entity.
    case invalidUniquenessConstraint(entity: String, attributes: [String], reason: String)
    /// A fetch index has no element or more than 16, names a property twice, or names something that is not a
    /// persistent attribute or to-one relationship of the entity.
    case invalidFetchIndex(entity: String, index: String, reason: String)
    /// A derived attribute's expression is not one Strata computes, or does not fit the attribute.
    case invalidDerivation(entity: String, attribute: String, expression: String, reason: String)
    /// A fetched property's predicate does not parse or its destination is not defined.
    case invalidFetchedProperty(entity: String, property: String, reason: String)
    /// A configuration has an empty name or names an entity the model does not define.
    case invalidConfiguration(String, reason: String)
    /// A fetch request template is defined twice, fetches an undefined entity or its predicate does not parse.
    case invalidFetchRequestTemplate(String, reason: String)

    /// A sentence naming the entity and attribute at fault.
    public var description: String {
        switch self {
        case .emptyEntityName: "an entity has an empty name"
        case .duplicateEntity(let name): "entity \(name) is defined twice"
        case .unknownParent(let entity, let parent): "entity \(entity) inherits from \(parent), which is not defined"
        case .inheritanceCycle(let names): "entities inherit in a cycle: \(names.joined(separator: " -> "))"
        case .tooManyEntities(let count): "\(count) entities, at most 65535"
        case .unknownDestination(let entity, let relationship, let destination):
            "\(entity).\(relationship) leads to \(destination), which is not defined"
        case .unknownInverse(let entity, let relationship, let inverse):
            "\(entity).\(relationship) names inverse \(inverse), which its destination does not have"
        case .inverseMismatch(let entity, let relationship, let inverse, let reason):
            "\(entity).\(relationship) and its inverse \(inverse) disagree: \(reason)"
        case .invalidCount(let entity, let relationship):
            "\(entity).\(relationship) has a minimum count above its maximum, a negative minimum or a maximum below 1"
        case .emptyAttributeName(let entity): "entity \(entity) has an attribute with an empty name"
        case .duplicateAttribute(let entity, let attribute): "entity \(entity) declares \(attribute) twice"
        case .redeclaredAttribute(let entity, let attribute, let parent):
            "entity \(entity) redeclares \(attribute), inherited from \(parent)"
        case .undefinedTypeOnPersistentAttribute(let entity, let attribute):
            "\(entity).\(attribute) has type Undefined but is not transient"
        case .defaultValueTypeMismatch(let entity, let attribute, let expected):
            "the default value of \(entity).\(attribute) is not a \(expected)"
        case .missingValueTransformerName(let entity, let attribute):
            "\(entity).\(attribute) is transformable but names no value transformer"
        case .optionNotApplicable(let entity, let attribute, let option):
            "\(option) does not apply to the type of \(entity).\(attribute)"
        case .ruleNotApplicable(let entity, let attribute, let rule):
            "validation rule \(rule) does not apply to \(entity).\(attribute)"
        case .invalidRegularExpression(let entity, let attribute, let pattern):
            "the pattern \(pattern.debugDescription) of \(entity).\(attribute) does not compile"
        case .invalidUniquenessConstraint(let entity, let attributes, let reason):
            "entity \(entity)'s uniqueness constraint [\(attributes.joined(separator: ", "))] \(reason)"
        case .invalidFetchIndex(let entity, let index, let reason): "fetch index \(index) of entity \(entity) \(reason)"
        case .invalidDerivation(let entity, let attribute, let expression, let reason):
            "the derivation \(expression.debugDescription) of \(entity).\(attribute) is not supported: \(reason)"
        case .invalidFetchedProperty(let entity, let property, let reason):
            "fetched property \(entity).\(property) is invalid: \(reason)"
        case .invalidConfiguration(let name, let reason): "configuration \(name) \(reason)"
        case .invalidFetchRequestTemplate(let name, let reason): "fetch request template \(name) \(reason)"
        }
    }
}
