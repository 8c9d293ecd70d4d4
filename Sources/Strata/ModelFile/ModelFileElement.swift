/// One element of a model file's XML, as `XMLElementTreeBuilder` reads it: its name, attributes, children
/// and the line its start tag ends on (what `XMLParser` reports).
struct ModelFileElement: Sendable {
    let name: String
    let attributes: [String: String]
    let line: Int
    var children: [ModelFileElement] = []

    /// The children named `name`, in document order.
    func children(named name: String) -> [ModelFileElement] { children.filter { $0.name == name } }
}
