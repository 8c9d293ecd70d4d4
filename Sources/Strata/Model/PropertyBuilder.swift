/// Collects the properties declared in an ``Entity``'s closure, in order; `if`, `switch` and `for`
/// work as in any result builder.
///
/// For example:
///
///     Entity("Event") {
///         Attribute("title", .string)
///         if includeNotes { Attribute("notes", .string) }
///         for day in ["start", "end"] { Attribute(day, .date) }
///     }
@resultBuilder
public enum PropertyBuilder {
    /// An attribute.
    public static func buildExpression(_ attribute: Attribute) -> [PropertyDefinition] { [.attribute(attribute)] }
    /// A relationship.
    public static func buildExpression(_ relationship: Relationship) -> [PropertyDefinition] {
        [.relationship(relationship)]
    }
    /// A fetched property.
    public static func buildExpression(_ property: FetchedProperty) -> [PropertyDefinition] {
        [.fetchedProperty(property)]
    }
    /// A property definition.
    public static func buildExpression(_ property: PropertyDefinition) -> [PropertyDefinition] { [property] }
    /// Several property definitions.
    public static func buildExpression(_ properties: [PropertyDefinition]) -> [PropertyDefinition] { properties }
    /// The statements of a block, in order.
    public static func buildBlock(_ components: [PropertyDefinition]...) -> [PropertyDefinition] {
        components.flatMap { $0 }
    }
    /// An `if` without `else`.
    public static func buildOptional(_ component: [PropertyDefinition]?) -> [PropertyDefinition] { component ?? [] }
    /// The first branch of an `if`/`else` or `switch`.
    public static func buildEither(first component: [PropertyDefinition]) -> [PropertyDefinition] { component }
    /// The second branch of an `if`/`else` or `switch`.
    public static func buildEither(second component: [PropertyDefinition]) -> [PropertyDefinition] { component }
    /// A `for` loop.
    public static func buildArray(_ components: [[PropertyDefinition]]) -> [PropertyDefinition] {
        components.flatMap { $0 }
    }
}
