/// One property of an ``Entity`` definition. Today only attributes; relationships join later as a
/// second case, so that an entity's properties keep their declaration order across kinds.
public enum PropertyDefinition: Sendable, Hashable {
    /// An attribute.
    case attribute(Attribute)

    /// The property's name.
    public var name: String {
        switch self {
        case .attribute(let attribute): attribute.name
        }
    }
}
