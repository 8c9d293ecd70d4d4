/// One property of an ``Entity`` definition: an attribute, a relationship or a fetched property, in declaration order.
public enum PropertyDefinition: Sendable, Hashable {
    /// An attribute.
    case attribute(Attribute)
    /// A relationship.
    case relationship(Relationship)
    /// A fetched property.
    case fetchedProperty(FetchedProperty)

    /// The property's name.
    public var name: String {
        switch self {
        case .attribute(let attribute): attribute.name
        case .relationship(let relationship): relationship.name
        case .fetchedProperty(let property): property.name
        }
    }
}
