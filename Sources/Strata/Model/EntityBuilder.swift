/// Collects the entities declared in a ``ManagedObjectModel``'s closure; `if`, `switch` and `for` work
/// as in any result builder. Order does not matter: the model sorts entities by name and links
/// parents by name.
@resultBuilder
public enum EntityBuilder {
    /// An entity.
    public static func buildExpression(_ entity: Entity) -> [Entity] { [entity] }
    /// Several entities.
    public static func buildExpression(_ entities: [Entity]) -> [Entity] { entities }
    /// The statements of a block, in order.
    public static func buildBlock(_ components: [Entity]...) -> [Entity] { components.flatMap { $0 } }
    /// An `if` without `else`.
    public static func buildOptional(_ component: [Entity]?) -> [Entity] { component ?? [] }
    /// The first branch of an `if`/`else` or `switch`.
    public static func buildEither(first component: [Entity]) -> [Entity] { component }
    /// The second branch of an `if`/`else` or `switch`.
    public static func buildEither(second component: [Entity]) -> [Entity] { component }
    /// A `for` loop.
    public static func buildArray(_ components: [[Entity]]) -> [Entity] { components.flatMap { $0 } }
}
