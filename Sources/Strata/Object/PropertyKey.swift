import StrataLock

/// How a managed property wrapper names its attribute or relationship: a key given in the declaration, or
/// where it is declared, which ``DeclaredManagedProperty/key(in:)`` turns into the property's name.
///
/// Every object holds one per managed property, so the declaration site is packed into two words (no larger
/// than the key's `String`): the address of the file-name literal the compiler passed, and the line and column.
enum PropertyKey: Sendable {
    case named(String)
    case declaredAt(DeclarationSite)

    /// A declaration site from the compiler's `#fileID`, `#line` and `#column`.
    static func declared(file: StaticString, line: UInt, column: UInt) -> PropertyKey {
        // One call site passes one literal: its address tells the file, line and column tell the declaration.
        .declaredAt(
            DeclarationSite(
                file: UInt(bitPattern: file.utf8Start),
                position: UInt64(truncatingIfNeeded: line) << 32
                    | UInt64(truncatingIfNeeded: column) & 0xFFFF_FFFF))
    }
}

/// Where a property is declared (see ``PropertyKey``).
struct DeclarationSite: Hashable, Sendable {
    let file: UInt
    let position: UInt64
}

/// A managed property wrapper (``ManagedAttribute``, ``ManagedRelationship``).
protocol DeclaredManagedProperty {
    var propertyKey: PropertyKey { get }
}

/// The names of properties declared without a key, by declaration: found once per property through
/// reflection, then read from here.
private let propertyNames = Lock<[DeclarationSite: String]>([:])

extension DeclaredManagedProperty {
    /// The key of this property (wrapper) of `object`: the key given, else
    /// the property's name, found by reflection (the stored wrapper `_name` of the property `name` that was
    /// declared at the same place) the first time.
    func key(in object: ManagedObject) -> String {
        let site: DeclarationSite
        switch propertyKey {
        case .named(let key): return key
        case .declaredAt(let declaration): site = declaration
        }
        if let name = propertyNames.withLock({ $0[site] }) { return name }
        var mirror: Mirror? = Mirror(reflecting: object)
        while let current = mirror {
            for child in current.children {
                guard let label = child.label, label.hasPrefix("_"),
                    let wrapper = child.value as? any DeclaredManagedProperty,
                    case .declaredAt(let other) = wrapper.propertyKey, other == site
                else { continue }
                let name = String(label.dropFirst())
                propertyNames.withLock { $0[site] = name }
                return name
            }
            mirror = current.superclassMirror
        }
        preconditionFailure("no stored property of \(type(of: object)) holds the managed property declared here")
    }
}
