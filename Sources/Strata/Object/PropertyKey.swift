import StrataLock
import Synchronization

/// How a managed property wrapper names its attribute or relationship: a number standing for a key given in the
/// declaration, or for where the property is declared (which ``DeclaredManagedProperty/key(in:)`` turns into the
/// property's name).
///
/// Every object holds one per managed property, so it is four bytes: the declaration is interned in
/// ``PropertyKeyTable`` when the wrapper is made, and each entity binds a number to its property once
/// (``EntityDescription/propertyBindings``).
@usableFromInline
struct PropertyKey: Hashable, Sendable {
    let number: UInt32

    /// The key of a property declared with its attribute's or relationship's name (called from the wrappers'
    /// inlined initializers, with the name borrowed).
    @usableFromInline
    static func named(_ key: String) -> PropertyKey { PropertyKeyTable.shared.intern(name: key) }

    /// The key of a property declared without a name, from the compiler's `#fileID`, `#line` and `#column`.
    static func declared(file: StaticString, line: UInt, column: UInt) -> PropertyKey {
        // One call site passes one literal: its address tells the file, line and column tell the declaration.
        PropertyKeyTable.shared.intern(
            .site(
                DeclarationSite(
                    file: UInt(bitPattern: file.utf8Start),
                    position: UInt64(truncatingIfNeeded: line) << 32
                        | UInt64(truncatingIfNeeded: column) & 0xFFFF_FFFF)))
    }
}

/// Where a property is declared (see ``PropertyKey``).
struct DeclarationSite: Hashable, Sendable {
    let file: UInt
    let position: UInt64
}

/// What a ``PropertyKey`` stands for.
enum PropertyKeySource: Hashable, Sendable {
    case name(String)
    case site(DeclarationSite)
}

/// The process's property keys: one number per key name or declaration site, never forgotten (there is one per
/// managed property declared in the program, and one per distinct key name).
final class PropertyKeyTable: Sendable {
    static let shared = PropertyKeyTable()

    private struct State {
        var numbers = PropertyKeyIndex()
        var sources: [PropertyKeySource] = []
        /// The property names of declaration sites, found by reflection once each.
        var siteNames: [UInt32: String] = [:]
    }

    /// A name interned before: the `String` as given (held, so that its storage stays alive), its bits, its number.
    private struct KnownName {
        let name: String
        let bits: (UInt64, UInt64)
        let number: UInt32
    }

    /// How many names ``knownNames`` holds (a power of two: a probe wraps around with a mask).
    static let knownNameSlots = 64
    private let state = Lock(State())
    /// Names interned before, by the bits of the `String` given (see ``intern(name:)``), read without a lock: a name
    /// lies in the first free slot from the one its bits hash to. A slot is filled once and never emptied or replaced
    /// (so a search may stop at the first free slot): each filling publishes a copy that stays (``ReadMostly``), so at
    /// most ``knownNameSlots`` copies are ever made. Once every slot is full, a new name is interned under the lock
    /// each time.
    private let knownNames = ReadMostly([KnownName?](repeating: nil, count: PropertyKeyTable.knownNameSlots))

    /// The key of a property declared with a name: what ``intern(_:)`` gives for `.name(name)`, found first among
    /// the names interned before by the bits of the `String` itself. Every object of a class makes its wrappers with
    /// the same literals, so a wrapper is made with one comparison of two words and no lock (hashing and comparing the
    /// name's bytes was 280 instructions a wrapper, 1,400 an object of W4's employee; a lock round trip about 100).
    /// Equal bits are an equal string: a small string's bits are its bytes, and a large one's name its storage, which
    /// the entry keeps alive.
    ///
    /// Inlined in ``PropertyKey/named(_:)``, its one caller on the way to an object, and the bits taken as a value
    /// rather than through a copy of the `String` in memory: one frame and no stack guard (about 15 instructions of
    /// each wrapper made, W4c.graph).
    @inline(__always)
    func intern(name: String) -> PropertyKey {
        guard MemoryLayout<String>.size == 16 else { return intern(.name(name)) }
        // Safe: a String is two words here (the guard above), and the bits are only compared, never read through.
        let bits = unsafeBitCast(name, to: (UInt64, UInt64).self)
        let home = Int(truncatingIfNeeded: ((bits.0 ^ bits.1) &* 0x9E37_79B9_7F4A_7C15) >> 58)
        // Compared in place: the entry (and a large name's storage) is not retained. Probed onward from the home slot:
        // two of a model's names whose bits hash alike sent one of them to the lock on every object made (W4c.graph's
        // employees, about 290 instructions each).
        let (number, freeSlot) = knownNames.read { names -> (UInt32?, Int?) in
            var slot = home
            for _ in 0..<Self.knownNameSlots {
                guard let known = names[slot] else { return (nil, slot) }
                if known.bits == bits { return (known.number, nil) }
                slot = (slot &+ 1) & (Self.knownNameSlots &- 1)
            }
            return (nil, nil)
        }
        if let number { return PropertyKey(number: number) }
        return intern(unknownName: name, bits: bits, freeSlot: freeSlot)
    }

    /// ``intern(name:)`` for a name not among the known names: interned under the lock, and made known in `freeSlot`.
    /// Out of line, so that the known names' search keeps no frame for the update's closure (a stack check and
    /// spills, about a fifth of each wrapper's key, W4c.graph).
    @inline(never)
    private func intern(unknownName name: String, bits: (UInt64, UInt64), freeSlot: Int?) -> PropertyKey {
        let key = intern(.name(name))
        if let freeSlot {
            knownNames.update { names in
                // Another name may have taken the slot meanwhile: this one is then interned under the lock again.
                if names[freeSlot] == nil { names[freeSlot] = KnownName(name: name, bits: bits, number: key.number) }
            }
        }
        return key
    }

    func intern(_ source: PropertyKeySource) -> PropertyKey {
        state.withLock { state in
            if let number = state.numbers.number(of: source, in: state.sources) { return PropertyKey(number: number) }
            let number = UInt32(state.sources.count)
            state.sources.append(source)
            state.numbers.insert(source, number: number, in: state.sources)
            return PropertyKey(number: number)
        }
    }

    /// How many copies of the known names were published (the first, empty, included).
    var knownNameCopies: Int { knownNames.publishedCount }

    /// The name given for `key`, or the name found for its declaration site; nil for a site not named yet.
    func name(of key: PropertyKey) -> String? {
        state.withLock { state in
            switch state.sources[Int(key.number)] {
            case .name(let name): name
            case .site: state.siteNames[key.number]
            }
        }
    }

    func recordName(_ name: String, of key: PropertyKey) {
        state.withLock { $0.siteNames[key.number] = name }
    }
}

/// A managed property wrapper (``ManagedAttribute``, ``ManagedRelationship``).
protocol DeclaredManagedProperty {
    var propertyKey: PropertyKey { get }
}

extension PropertyKey {
    // The wrappers' accessors are inlined in the classes that declare them and call these through the key alone:
    // nothing generic is made on a property's read.

    /// The key of the property (wrapper) of `object` with this key: the key given, else the property's name, found by
    /// reflection (the stored wrapper `_name` of the property `name` with the same key) the first time.
    func key(in object: ManagedObject) -> String {
        if let name = PropertyKeyTable.shared.name(of: self) { return name }
        var mirror: Mirror? = Mirror(reflecting: object)
        while let current = mirror {
            for child in current.children {
                guard let label = child.label, label.hasPrefix("_"),
                    let wrapper = child.value as? any DeclaredManagedProperty, wrapper.propertyKey == self
                else { continue }
                let name = String(label.dropFirst())
                PropertyKeyTable.shared.recordName(name, of: self)
                return name
            }
            mirror = current.superclassMirror
        }
        preconditionFailure("no stored property of \(type(of: object)) holds the managed property declared here")
    }

    /// The attribute the property stands for in `object`'s entity, bound once per entity and key.
    func attribute(in object: ManagedObject) -> AttributeDescription {
        object.entity.attributes[attributeIndex(in: object)]
    }

    /// The index (``AttributeDescription/index``) of ``attribute(in:)``, without the attribute.
    func attributeIndex(in object: ManagedObject) -> Int {
        let index = boundIndex(in: object)
        guard index < object.entity.attributes.count else {
            preconditionFailure(
                "\(object.entity.name).\(key(in: object)) is a relationship, declared as an attribute")
        }
        return index
    }

    /// The relationship the property stands for in `object`'s entity, bound once per entity and key.
    func relationship(in object: ManagedObject) -> RelationshipDescription {
        let entity = object.entity
        let index = boundIndex(in: object)
        guard index >= entity.attributes.count else {
            preconditionFailure("\(entity.name).\(key(in: object)) is an attribute, declared as a relationship")
        }
        return entity.relationships[index - entity.attributes.count]
    }

    /// The property's index in the entity's ``EntityDescription/properties`` (attributes, then relationships).
    ///
    /// A key bound in a direct slot is read inline, without the binding closure: with the closure made (or the
    /// bindings' method called) for each read, the object and its entity were retained and released around it (about
    /// 80 instructions of each property read, W4c.graph).
    @inline(__always)
    private func boundIndex(in object: ManagedObject) -> Int {
        if let index = object.entity.propertyBindings.directIndex(of: self) { return index }
        return bindIndex(in: object)
    }

    /// ``boundIndex(in:)`` for a key not bound in a direct slot: bound now, or bound past them.
    @inline(never)
    private func bindIndex(in object: ManagedObject) -> Int {
        let entity = object.entity
        return entity.propertyBindings.index(of: self) {
            let key = key(in: object)
            if let attribute = entity.attributesByName[key] { return attribute.index }
            if let relationship = entity.relationshipsByName[key] {
                return entity.attributes.count + relationship.index
            }
            preconditionFailure(
                "\(entity.name).\(key) of \(object.objectID): \(ObjectGraphError.unknownKey(entity: entity.name, key: key))"
            )
        }
    }
}

/// The property each ``PropertyKey`` names in one entity, by key number, found on first use.
final class PropertyBindings: Sendable {
    /// How many key numbers (the first ones: a program's declared properties) are bound in ``direct``.
    static let directCount = 256

    /// Index + 1 by key number below ``directCount``; 0 for a key not bound yet. Read without a lock, with one relaxed
    /// atomic load: a slot only ever goes from 0 to the one index its key binds to (binding is a lookup of the same
    /// name in the same entity, so two threads binding a key at once store the same value), and nothing else is
    /// published with it. A `Lock` round trip was 97 instructions of each property read (W4c.graph), and a
    /// ``ReadMostly`` array retained and released around each read more.
    private nonisolated(unsafe) let direct: UnsafeMutablePointer<Atomic<Int32>>
    /// Index + 1 by key number, for key numbers of ``directCount`` or more (a process with that many property
    /// names or declarations: tests making many models).
    private let slots = Lock<[Int32]>([])

    init() {
        direct = .allocate(capacity: Self.directCount)
        for number in 0..<Self.directCount { (direct + number).initialize(to: Atomic(0)) }
    }

    deinit {
        direct.deinitialize(count: Self.directCount)
        direct.deallocate()
    }

    /// The index bound to `key` in a direct slot; nil for a key not bound yet, or numbered past the direct slots.
    @inline(__always)
    func directIndex(of key: PropertyKey) -> Int? {
        let number = Int(key.number)
        guard number < Self.directCount else { return nil }
        let bound = Int(direct[number].load(ordering: .relaxed)) - 1
        return bound >= 0 ? bound : nil
    }

    /// The index bound to `key`, binding it with `bind` the first time.
    func index(of key: PropertyKey, bind: () -> Int) -> Int {
        if let bound = directIndex(of: key) { return bound }
        let number = Int(key.number)
        if number < Self.directCount {
            let index = bind()
            direct[number].store(Int32(index + 1), ordering: .relaxed)
            return index
        }
        let bound = slots.withLock { slots in number < slots.count ? Int(slots[number]) - 1 : -1 }
        if bound >= 0 { return bound }
        let index = bind()
        slots.withLock { slots in
            if slots.count <= number { slots.append(contentsOf: repeatElement(0, count: number + 1 - slots.count)) }
            slots[number] = Int32(index + 1)
        }
        return index
    }
}
