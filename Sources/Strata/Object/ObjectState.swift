import Foundation

/// The fixed part of an ``ObjectState``: its header, ahead of the relationship slots in the same allocation.
///
/// Only `ObjectState.swift` touches the fields; the state forwards each under its own name (read in place, and
/// changed in place through a pointer: a class's stored property is checked for exclusive access at run time,
/// which the state's properties were annotated against). 88 bytes: with the heap object's 16, the slots start at
/// 104.
struct ObjectStateFields {
    fileprivate var values: [AttributeValue?]
    fileprivate var undecodedBits: UInt64
    fileprivate var committedState: CommittedState
    fileprivate var version: UInt64
    fileprivate var changedAttributeBits: UInt64 = 0
    fileprivate var changedRelationshipBits: UInt64 = 0
    fileprivate var changeCount: UInt32 = 0
    fileprivate var willSaveMark: UInt32 = 0
    fileprivate var insertionSequence: UInt64 = 0
    fileprivate var extras: ObjectState.Extras?
}

/// An object's committed state as its ``ObjectState`` holds it: the row it was loaded from or saved as, kept as it is
/// (``ObjectState/record``), or the values and to-ones that row was detached into, or that a store without records
/// handed over (``ObjectState/committed``, ``ObjectState/committedReferences``; either may be nil: a new object has
/// neither, an object a child context pushed has values without to-ones).
///
/// One of the two, never both: the arrays were nil whenever the row was set. As one enum the state keeps 24 bytes for
/// them (the case lies in the row's spare bits), where the row and the two arrays were 40: an employee's state asks for
/// 120 bytes (a 128-byte heap chunk), not 136 (a 144-byte one).
enum CommittedState {
    case record(StoredRow)
    case detached(values: [AttributeValue?]?, references: [StoredReference?]?)

    /// Neither a row nor values: a new object's, or a fault's.
    static var none: Self { .detached(values: nil, references: nil) }
}

/// What a managed object holds beyond its identity: values, committed state, change tracking, and each
/// relationship's value.
///
/// A fault that never fired has none (``ManagedObject/state`` is nil): a million registered faults cost their
/// identities, not a million sets of empty arrays, dictionaries and sets. The state is made when the object is
/// inserted, fired, or first given anything to remember, and a fault's reads see the entity's shared defaults.
///
/// The relationships' values live in the state's own allocation, after its fields (``ObjectStateFields``): one
/// slot (a `RelationshipValue?`, 16 bytes) a relationship of the entity, read and written through
/// ``relationshipValue(at:)``, ``setRelationshipValue(_:at:)`` and ``takeRelationshipValue(at:)``. An array of
/// them was an allocation of its own in every inserted object or fired fault of an entity with relationships (a
/// 64-byte heap chunk for W1.graph's employee, of one relationship), and an entity without relationships makes a
/// state of no slots. Every slot the heap chunk has room for is initialized (``ManagedBuffer/capacity``: nil past
/// the entity's relationships), so that the state frees its slots without storing their count.
final class ObjectState: ManagedBuffer<ObjectStateFields, RelationshipValue?> {
    /// The fields, in place. Each is read and changed where it lies, through its address (``values`` as
    /// `values[index] = value` changes the array in place): accessors that copied a field out and back, or
    /// coroutines that yielded it, were calls at every use.
    @inline(__always)
    private var fields: UnsafeMutablePointer<ObjectStateFields> { withUnsafeMutablePointerToHeader { $0 } }

    /// The first relationship slot.
    @inline(__always)
    private var slots: UnsafeMutablePointer<RelationshipValue?> { withUnsafeMutablePointerToElements { $0 } }

    /// Values of every attribute (transients included), by ``AttributeDescription/index``; a slot in
    /// ``undecoded`` holds nothing meaningful yet.
    var values: [AttributeValue?] {
        unsafeAddress { UnsafePointer(fields.pointer(to: \.values)!) }
        unsafeMutableAddress { fields.pointer(to: \.values)! }
    }
    /// The bits of ``undecoded``'s indexes below 64 (the rest, never for an entity of 64 attributes or fewer, are in
    /// the extras).
    ///
    /// Each of the state's three index sets keeps its word here and its rare rest in the extras: a
    /// ``PropertyIndexSet`` is two words, and the second (an empty set for every entity of 64 properties or fewer)
    /// was 24 of the state's 168 bytes, for each object inserted or fired.
    private var undecodedBits: UInt64 {
        unsafeAddress { UnsafePointer(fields.pointer(to: \.undecodedBits)!) }
        unsafeMutableAddress { fields.pointer(to: \.undecodedBits)! }
    }
    /// The row or the arrays that hold the committed state (``record``, or ``committed`` and ``committedReferences``).
    private var committedState: CommittedState {
        unsafeAddress { UnsafePointer(fields.pointer(to: \.committedState)!) }
        unsafeMutableAddress { fields.pointer(to: \.committedState)! }
    }
    /// The row the object was loaded from, when its store keeps rows as records (``StoredRow/isRecord``): while
    /// set, it is the committed state (values, to-ones, blob references), which ``committed``,
    /// ``committedReferences`` and ``committedExternalReferences`` do not hold. ``detachRecord()`` moves it there.
    var record: StoredRow? {
        if case .record(let row) = committedState { return row }
        return nil
    }
    /// The persistent values as last fetched or saved, by storage index; nil when the object has none
    /// (a new object, or a fault never fired) or they are in ``record``. Set only without a record (after
    /// ``detachRecord()``): the two share their room.
    var committed: [AttributeValue?]? {
        get {
            if case .detached(let values, _) = committedState { return values }
            return nil
        }
        set {
            guard case .detached(_, let references) = committedState else {
                preconditionFailure("committed values set while the committed state is a record")
            }
            committedState = .detached(values: newValue, references: references)
        }
    }
    /// The row version the committed values were read at (optimistic locking).
    var version: UInt64 {
        unsafeAddress { UnsafePointer(fields.pointer(to: \.version)!) }
        unsafeMutableAddress { fields.pointer(to: \.version)! }
    }
    /// The to-ones as last fetched or saved, by ``RelationshipDescription/toOneIndex``; nil when the object
    /// has none (a new object, or a fault never fired) or they are in ``record``. Set only without a record.
    var committedReferences: [StoredReference?]? {
        get {
            if case .detached(_, let references) = committedState { return references }
            return nil
        }
        set {
            guard case .detached(let values, _) = committedState else {
                preconditionFailure("committed to-ones set while the committed state is a record")
            }
            committedState = .detached(values: values, references: newValue)
        }
    }
    /// The bits of ``changedIndexes``'s indexes below 64.
    private var changedAttributeBits: UInt64 {
        unsafeAddress { UnsafePointer(fields.pointer(to: \.changedAttributeBits)!) }
        unsafeMutableAddress { fields.pointer(to: \.changedAttributeBits)! }
    }
    /// The bits of ``changedRelationships``'s indexes below 64.
    private var changedRelationshipBits: UInt64 {
        unsafeAddress { UnsafePointer(fields.pointer(to: \.changedRelationshipBits)!) }
        unsafeMutableAddress { fields.pointer(to: \.changedRelationshipBits)! }
    }
    /// Counts the recorded changes of the object (property changes and its deletion), wrapping: it is only ever
    /// compared for equality with ``willSaveMark``, so 32 bits serve, and the two share a word.
    var changeCount: UInt32 {
        unsafeAddress { UnsafePointer(fields.pointer(to: \.changeCount)!) }
        unsafeMutableAddress { fields.pointer(to: \.changeCount)! }
    }
    /// ``changeCount`` + 1 when the save that is under way last called the object's `willSave()` (0: never called).
    /// Kept here rather than in a table of the save's: a million inserts' table was 34 MB of W1.graph's peak, where
    /// this half word costs nothing (it shares its word with ``changeCount``).
    var willSaveMark: UInt32 {
        unsafeAddress { UnsafePointer(fields.pointer(to: \.willSaveMark)!) }
        unsafeMutableAddress { fields.pointer(to: \.willSaveMark)! }
    }
    /// The order of insertion into its context: saves and fetches list new objects in this order.
    var insertionSequence: UInt64 {
        unsafeAddress { UnsafePointer(fields.pointer(to: \.insertionSequence)!) }
        unsafeMutableAddress { fields.pointer(to: \.insertionSequence)! }
    }
    /// What few objects hold (external references and the coordinator to read them through, baselines, observers,
    /// property indexes of 64 or more), made when one of them is first given something: five empty tables in every
    /// state were 40 of its 192 bytes, for each object inserted or fired.
    private var extras: Extras? {
        unsafeAddress { UnsafePointer(fields.pointer(to: \.extras)!) }
        unsafeMutableAddress { fields.pointer(to: \.extras)! }
    }

    /// The rarely used part of a state.
    fileprivate final class Extras {
        @exclusivity(unchecked) var externalReferences: [Int: UInt64]
        @exclusivity(unchecked) var committedExternalReferences: [Int: UInt64]
        /// The coordinator external values are read through (set with them).
        @exclusivity(unchecked) var coordinator: PersistentStoreCoordinator?
        @exclusivity(unchecked) var attributeBaselines: [Int: AttributeBaseline] = [:]
        @exclusivity(unchecked) var relationshipBaselines: [Int: RelationshipValue] = [:]
        @exclusivity(unchecked) var observers: [String: [UUID: (ManagedObject) -> Void]] = [:]
        /// The indexes of 64 or more of ``ObjectState/undecoded``, ``ObjectState/changedIndexes`` and
        /// ``ObjectState/changedRelationships``.
        @exclusivity(unchecked) var undecodedHigh: Set<Int> = []
        @exclusivity(unchecked) var changedAttributesHigh: Set<Int> = []
        @exclusivity(unchecked) var changedRelationshipsHigh: Set<Int> = []

        init(
            externalReferences: [Int: UInt64] = [:], committedExternalReferences: [Int: UInt64] = [:],
            coordinator: PersistentStoreCoordinator? = nil
        ) {
            self.externalReferences = externalReferences
            self.committedExternalReferences = committedExternalReferences
            self.coordinator = coordinator
        }
    }

    /// The extras, made on first need.
    private var madeExtras: Extras {
        if let extras { return extras }
        let made = Extras()
        extras = made
        return made
    }

    // Each table of the extras reads empty while there are none, and setting it empty makes none.

    /// Binary values still in their store's blob segments, by attribute index: read on first access.
    var externalReferences: [Int: UInt64] {
        get { extras?.externalReferences ?? [:] }
        set { if extras != nil || !newValue.isEmpty { madeExtras.externalReferences = newValue } }
    }
    /// The external references of the committed state, by storage index (restored by rollback).
    var committedExternalReferences: [Int: UInt64] {
        get { extras?.committedExternalReferences ?? [:] }
        set { if extras != nil || !newValue.isEmpty { madeExtras.committedExternalReferences = newValue } }
    }
    /// Each changed attribute's value before its first change since the last fetch or save, by index:
    /// what tells that undo brought the object back to its unchanged state.
    var attributeBaselines: [Int: AttributeBaseline] {
        get { extras?.attributeBaselines ?? [:] }
        set { if extras != nil || !newValue.isEmpty { madeExtras.attributeBaselines = newValue } }
    }
    /// Each changed relationship's value before its first change since the last fetch or save.
    var relationshipBaselines: [Int: RelationshipValue] {
        get { extras?.relationshipBaselines ?? [:] }
        set { if extras != nil || !newValue.isEmpty { madeExtras.relationshipBaselines = newValue } }
    }
    /// Observers of the object's keys.
    var observers: [String: [UUID: (ManagedObject) -> Void]] {
        get { extras?.observers ?? [:] }
        set { if extras != nil || !newValue.isEmpty { madeExtras.observers = newValue } }
    }
    /// The coordinator of the context the object was registered in, kept in the extras (a state without them keeps
    /// none: setting it does not make them), for values outside the row (``externalReferences``, which make the
    /// extras): they are read through it even after that context is gone. No other value needs it, so it is no word
    /// of every state (W1.graph's employee state fits its 128-byte heap chunk with its relationship slot because of
    /// it).
    var coordinator: PersistentStoreCoordinator? {
        get { extras?.coordinator }
        set { extras?.coordinator = newValue }
    }

    // The index sets, put together from their words and their extras' rest. A set given without indexes of 64 or
    // more makes no extras.

    /// The attributes (by index) whose values are still only in ``record``'s bytes: each is read from there
    /// (``value(at:)``; a decimal or binary value is decoded into ``values`` at its first read), or decoded all at once
    /// by ``decodeAll()``.
    var undecoded: PropertyIndexSet {
        get {
            guard let extras else { return PropertyIndexSet(bits: undecodedBits) }
            return PropertyIndexSet(bits: undecodedBits, high: extras.undecodedHigh)
        }
        set {
            undecodedBits = newValue.bits
            let high = newValue.highIndexes
            if extras != nil || !high.isEmpty { madeExtras.undecodedHigh = high }
        }
    }
    /// Indexes of the attributes changed since the last fetch or save.
    var changedIndexes: PropertyIndexSet {
        get {
            guard let extras else { return PropertyIndexSet(bits: changedAttributeBits) }
            return PropertyIndexSet(bits: changedAttributeBits, high: extras.changedAttributesHigh)
        }
        set {
            changedAttributeBits = newValue.bits
            let high = newValue.highIndexes
            if extras != nil || !high.isEmpty { madeExtras.changedAttributesHigh = high }
        }
    }
    /// Indexes of the relationships changed since the last fetch or save.
    var changedRelationships: PropertyIndexSet {
        get {
            guard let extras else { return PropertyIndexSet(bits: changedRelationshipBits) }
            return PropertyIndexSet(bits: changedRelationshipBits, high: extras.changedRelationshipsHigh)
        }
        set {
            changedRelationshipBits = newValue.bits
            let high = newValue.highIndexes
            if extras != nil || !high.isEmpty { madeExtras.changedRelationshipsHigh = high }
        }
    }

    /// Whether ``changedIndexes`` or ``changedRelationships`` has an index: a test of two words, where the sets
    /// are put together first.
    var hasChangedProperties: Bool {
        if changedAttributeBits != 0 || changedRelationshipBits != 0 { return true }
        guard let extras else { return false }
        return !extras.changedAttributesHigh.isEmpty || !extras.changedRelationshipsHigh.isEmpty
    }

    /// Whether ``externalReferences`` has an entry: a test of the extras, where the table read empties one first.
    var hasExternalReferences: Bool {
        guard let extras else { return false }
        return !extras.externalReferences.isEmpty
    }

    /// Whether attribute `index` is in ``undecoded``: a bit test, where ``undecoded`` puts a set together.
    @inline(__always)
    func isUndecoded(_ index: Int) -> Bool {
        index < 64 ? undecodedBits & (1 &<< UInt64(index)) != 0 : extras?.undecodedHigh.contains(index) ?? false
    }

    /// Takes attribute `index` out of ``undecoded``.
    @inline(__always)
    private func markDecoded(_ index: Int) {
        if index < 64 {
            undecodedBits &= ~(1 &<< UInt64(index))
        } else if let extras {
            extras.undecodedHigh.remove(index)
        }
    }

    /// Records a change of attribute `index`: counted in ``changeCount`` and put in ``changedIndexes``.
    func noteChange(ofAttribute index: Int) {
        changeCount &+= 1
        if index < 64 {
            changedAttributeBits |= 1 &<< UInt64(index)
        } else {
            madeExtras.changedAttributesHigh.insert(index)
        }
    }

    /// Records a change of relationship `index`: counted in ``changeCount`` and put in ``changedRelationships``.
    func noteChange(ofRelationship index: Int) {
        changeCount &+= 1
        if index < 64 {
            changedRelationshipBits |= 1 &<< UInt64(index)
        } else {
            madeExtras.changedRelationshipsHigh.insert(index)
        }
    }

    // MARK: - Making a state

    /// The state of a new object of `entity`: default values, empty to-manys, no to-one.
    static func make(newObjectOf entity: EntityDescription) -> ObjectState {
        let state = allocate(slotCount: entity.relationships.count) {
            ObjectStateFields(
                values: entity.defaultValues, undecodedBits: 0, committedState: .none, version: 0)
        }
        entity.emptyRelationshipValues.withUnsafeBufferPointer { values in
            guard let first = values.baseAddress else { return }
            state.slots.initialize(from: first, count: values.count)
        }
        return state
    }

    /// The state of a fault of `entity`: default values, every relationship not read yet.
    static func make(faultOf entity: EntityDescription) -> ObjectState {
        let count = entity.relationships.count
        let state = allocate(slotCount: count) {
            ObjectStateFields(
                values: entity.defaultValues, undecodedBits: 0, committedState: .none, version: 0)
        }
        state.slots.initialize(repeating: nil, count: count)
        return state
    }

    /// The state of a fault of `entity` that fires with `row` and had no state (the usual case): what
    /// ``ManagedObject/load(_:)`` makes of a state, set as the object is made. Every relationship is not read yet.
    ///
    /// - Parameter coordinator: the coordinator of the object's context, kept when the row has values outside it.
    static func make(
        loading row: consuming StoredRow, of entity: EntityDescription, coordinator: PersistentStoreCoordinator?
    ) -> ObjectState {
        let count = entity.relationships.count
        let version = row.version
        let state: ObjectState
        if row.isRecord {
            // The usual row (the Strata store's), set directly: through ``loaded(_:of:)``'s tuple, its two empty
            // tables and the row's copies cost about 300 instructions a fired fault (W4b.graph).
            // The usual row (no blob, fewer than 64 attributes) makes no extras and copies no index set.
            var extras: Extras?
            if row.referencesBlobs || entity.hasHighPersistentAttributeIndexes {
                let external =
                    row.referencesBlobs ? Self.externalReferences(of: row, entity: entity) : [Int: UInt64]()
                let high = entity.persistentAttributeIndexes.highIndexes
                if !external.isEmpty || !high.isEmpty {
                    let made = Extras(externalReferences: external, coordinator: coordinator)
                    made.undecodedHigh = high
                    extras = made
                }
            }
            let undecodedBits = entity.persistentAttributeBits
            // Taken, not copied: the caller gives the row up (a retain and a release of its entity and bytes).
            state = allocate(slotCount: count) {
                ObjectStateFields(
                    values: entity.defaultValues, undecodedBits: undecodedBits, committedState: .record(row),
                    version: version, extras: extras)
            }
        } else {
            // Destructured into locals, each moved into its field: a `Loaded` struct read field by field was copied
            // whole and destroyed (two dozen retains and releases a fired fault).
            let (values, undecoded, committedState, committedExternal, external) = Self.loaded(row, of: entity)
            var extras: Extras?
            if !external.isEmpty || !committedExternal.isEmpty || !undecoded.highIndexes.isEmpty {
                let made = Extras(
                    externalReferences: external, committedExternalReferences: committedExternal,
                    coordinator: coordinator)
                made.undecodedHigh = undecoded.highIndexes
                extras = made
            }
            state = allocate(slotCount: count) {
                ObjectStateFields(
                    values: values, undecodedBits: undecoded.bits, committedState: committedState,
                    version: row.version, extras: extras)
            }
        }
        state.slots.initialize(repeating: nil, count: count)
        return state
    }

    /// A state of the fields `makeFields` makes (made in place: fields made first were copied in, a retain and a
    /// release of each), with room for `count` slots, which the caller initializes; any further slot its heap chunk
    /// has room for is set to nil here (``deinit`` frees them all).
    @inline(__always)
    private static func allocate(slotCount count: Int, _ makeFields: () -> ObjectStateFields) -> ObjectState {
        let state = unsafeDowncast(create(minimumCapacity: count) { _ in makeFields() }, to: ObjectState.self)
        let capacity = state.capacity
        if capacity > count { (state.slots + count).initialize(repeating: nil, count: capacity - count) }
        return state
    }

    deinit {
        // One slot at a time: `deinitialize(count:)` of a count known only at run time goes through the runtime's
        // generic array destroy (about 90 instructions a state, W3.graph).
        let slots = self.slots
        for index in 0..<capacity { _ = (slots + index).move() }
    }

    // MARK: - Relationship slots

    /// Relationship `index`'s value (by ``RelationshipDescription/index`` in the object's entity): nil while it is
    /// a fault (not read since the object was fetched or turned into a fault), else the related objects, held
    /// strongly. The caller checks `index` against its entity's relationships.
    @inline(__always)
    func relationshipValue(at index: Int) -> RelationshipValue? { slots[index] }

    /// Sets relationship `index`'s value (nil: a fault again).
    @inline(__always)
    func setRelationshipValue(_ value: RelationshipValue?, at index: Int) { slots[index] = value }

    /// Relationship `index`'s value, its slot left nil: the caller changes the only copy of a to-many and puts it
    /// back with ``setRelationshipValue(_:at:)`` (with the slot still holding it, a change copies every member).
    @inline(__always)
    func takeRelationshipValue(at index: Int) -> RelationshipValue? {
        let value = (slots + index).move()
        (slots + index).initialize(to: nil)
        return value
    }

    /// Makes each of the `count` first relationships a fault again (nil), releasing what they held.
    func forgetRelationshipValues(count: Int) {
        for index in 0..<count { slots[index] = nil }
    }

    /// Sets the relationships to `values`' values, one a relationship (the entity's empty ones), releasing what
    /// they held.
    func setRelationshipValues(_ values: [RelationshipValue?]) {
        for index in values.indices { slots[index] = values[index] }
    }

    /// Takes `row` as the committed state of a state that exists (a fault that fires after its relationships
    /// changed, an object refreshed): as ``make(loading:of:coordinator:)`` sets it. Changes and baselines are
    /// the caller's.
    ///
    /// - Parameter coordinator: the coordinator of the object's context, kept when the row has values outside it.
    func load(_ row: StoredRow, of entity: EntityDescription, coordinator: PersistentStoreCoordinator?) {
        let (values, undecoded, committedState, committedExternal, external) = Self.loaded(row, of: entity)
        self.values = values
        self.undecoded = undecoded
        self.committedState = committedState
        committedExternalReferences = committedExternal
        version = row.version
        externalReferences = external
        if !external.isEmpty, let coordinator { self.coordinator = coordinator }
    }

    /// What loading a row sets, worked out once for the initializer and for ``load(_:of:)`` (which cannot share
    /// an assignment: the initializer sets each property once). A row kept as its record stays the committed state,
    /// nothing decoded (the entity's shared defaults stand in until a value is read); a decoded row's values are
    /// taken as they are.
    private static func loaded(
        _ row: StoredRow, of entity: EntityDescription
    ) -> (
        values: [AttributeValue?], undecoded: PropertyIndexSet, committedState: CommittedState,
        committedExternalReferences: [Int: UInt64], externalReferences: [Int: UInt64]
    ) {
        let external = externalReferences(of: row, entity: entity)
        if row.isRecord {
            return (entity.defaultValues, entity.persistentAttributeIndexes, .record(row), [:], external)
        }
        return (
            values(of: row, entity: entity), PropertyIndexSet(),
            .detached(values: row.values, references: row.references), row.externalReferences, external
        )
    }

    /// Attribute `index`'s value. A field still only in ``record`` is decoded from it: read there again at each read
    /// when its type decodes without a buffer of its own (``decodesInPlace(_:)``), else decoded once into ``values``.
    /// A fired fault that is only read then never makes a values buffer: the buffer, its filling and its freeing were
    /// about 1,100 instructions of each fetched object read once (W4b/W4c.graph), more than reading a field again.
    func value(at index: Int) -> AttributeValue? {
        guard isUndecoded(index) else { return values[index] }
        guard case .record = committedState else {
            preconditionFailure("attribute \(index) is undecoded without a record")
        }
        // Read where it lies: a row bound to a local was copied out of the state, its entity and bytes retained and
        // released at each read (about 150 instructions of each read of a fired member, W4c.graph). The record's case
        // holds its row as it is, at the same address: the case's tag lies in the row's spare bits and is zero for
        // the first case (`ObjectLayoutTests` pins the size and the bytes).
        let inPlace = fields.pointer(to: \.committedState)!.withMemoryRebound(to: StoredRow.self, capacity: 1) {
            row -> AttributeValue?? in
            let (type, field) = Self.typeAndField(of: row.pointee.entity.attributes[index])
            guard Self.decodesInPlace(type) else { return .none }
            // Integers and strings inline, the rest (and what that read leaves) through the call, with the attribute
            // looked up again there: held across the inlined read, it was retained and released around it.
            if let value = row.pointee.recordValue(ofField: field, type: type) { return .some(value) }
            return .some(row.pointee.value(of: row.pointee.entity.attributes[index]))
        }
        if case .some(let value) = inPlace { return value }
        // A decimal or binary value, decoded once and kept.
        guard let record else { preconditionFailure("attribute \(index) is undecoded without a record") }
        let attribute = record.entity.attributes[index]
        ownValues(sharedWith: record.entity.defaultValues)
        let value = record.value(of: attribute)
        values[index] = value
        markDecoded(index)
        return value
    }

    /// An attribute's type and field position, taken out at once (nothing of the attribute is held after).
    @inline(__always)
    private static func typeAndField(of attribute: AttributeDescription) -> (AttributeType, Int) {
        (attribute.type, attribute.fieldIndex!)
    }

    /// Whether a field of `type` is read from the record at each read rather than kept once decoded: numbers,
    /// Booleans, dates, strings and UUIDs are taken from their payload where it lies (a long string's bytes copied);
    /// a decimal (its mantissa's array) and binary data (a copy of every byte) are kept. A record holds no other type
    /// (``EntityDescription/keepsRowsAsRecords``).
    static func decodesInPlace(_ type: AttributeType) -> Bool {
        switch type {
        case .decimal, .binaryData, .transformable, .uri, .undefined: false
        case .integer16, .integer32, .integer64, .double, .float, .string, .boolean, .date, .uuid: true
        }
    }

    /// Sets attribute `index`'s value: whatever its field held is not decoded.
    func setValue(_ value: AttributeValue?, at index: Int) {
        markDecoded(index)
        values[index] = value
    }

    /// Decodes every value not decoded yet: for code that reads ``values`` whole.
    func decodeAll() {
        if let extras, !extras.undecodedHigh.isEmpty {
            decodeAllWithHighIndexes()
            return
        }
        guard undecodedBits != 0 else { return }
        guard let record else { preconditionFailure("attributes are undecoded without a record") }
        // One access to each property for the whole row: each access is checked for exclusivity at run time, and
        // three a value (the record, the value, the set) were a quarter of decoding a row (W7.graph's validation).
        ownValues(sharedWith: record.entity.defaultValues)
        var pending = undecodedBits
        undecodedBits = 0
        let attributes = record.entity.attributes
        while pending != 0 {
            let index = pending.trailingZeroBitCount
            pending &= pending &- 1
            values[index] = record.value(atStorageIndex: attributes[index].storageIndex!)
        }
    }

    /// ``decodeAll()`` for an entity with attributes undecoded at indexes of 64 or more (their rest in `extras`).
    private func decodeAllWithHighIndexes() {
        guard let record else { preconditionFailure("attributes are undecoded without a record") }
        ownValues(sharedWith: record.entity.defaultValues)
        let pending = undecoded
        undecoded = PropertyIndexSet()
        Self.decode(pending, of: record, into: &values)
    }

    /// Gives ``values`` a buffer of its own before a decode writes into it, when it still is the entity's shared
    /// defaults (a state loaded from a record): made with each undecoded slot nil rather than copied. The copy went
    /// through the runtime's generic copy of each value, about 570 instructions of a fired fault's first read
    /// (W3.graph). Made by appending: `Array(unsafeUninitializedCapacity:)` allocates through the runtime's generic
    /// path (530 instructions more).
    private func ownValues(sharedWith defaults: [AttributeValue?]) {
        let shared = values.withUnsafeBufferPointer { mine in
            defaults.withUnsafeBufferPointer { $0.baseAddress == mine.baseAddress }
        }
        guard shared, !defaults.isEmpty else { return }
        var owned: [AttributeValue?] = []
        owned.reserveCapacity(defaults.count)
        for index in defaults.indices { owned.append(isUndecoded(index) ? nil : defaults[index]) }
        values = owned
    }

    private static func decode(
        _ indexes: PropertyIndexSet, of record: StoredRow, into values: inout [AttributeValue?]
    ) {
        let attributes = record.entity.attributes
        for index in indexes { values[index] = record.value(atStorageIndex: attributes[index].storageIndex!) }
    }

    /// Moves the committed state out of ``record`` into ``committed``, ``committedReferences`` and
    /// ``committedExternalReferences`` (every value decoded), so that it can change.
    func detachRecord() {
        guard case .record(let record) = committedState else { return }
        decodeAll()
        committedExternalReferences = record.externalReferences
        committedState = .detached(values: record.values, references: record.references)
    }

    /// Lets go of ``record`` once every value is decoded, without decoding its committed state: for a caller that
    /// replaces that state whole (a save).
    func dropRecord() {
        decodeAll()
        if case .record = committedState { committedState = .none }
    }

    /// Takes `values` and `references`, just saved as version `version`, as the committed state, in place of the
    /// row the object was loaded from (the save decoded every value): no change and no baseline is left. One call
    /// where a save set each property through the object (a state lookup, and an empty table made, each).
    func settle(values: [AttributeValue?], references: [StoredReference?], version: UInt64) {
        dropRecord()
        committedState = .detached(values: values, references: references)
        self.version = version
        changedAttributeBits = 0
        changedRelationshipBits = 0
        if let extras {
            extras.committedExternalReferences = [:]
            extras.attributeBaselines = [:]
            extras.relationshipBaselines = [:]
            extras.changedAttributesHigh = []
            extras.changedRelationshipsHigh = []
        }
    }

    /// Takes `row`, a row record just saved as the object's new version, as the committed state, as a fault that fires
    /// with it does: every persistent value is read from the row again (transients keep theirs), nothing is decoded
    /// now, and no change and no baseline is left. The row has no blob references.
    func settle(record row: StoredRow, of entity: EntityDescription) {
        committedState = .record(row)
        version = row.version
        undecoded = entity.persistentAttributeIndexes
        // Without transients every slot is the record's now: the buffer goes, as a fetched object has none.
        if entity.persistentAttributes.count == entity.attributes.count { values = entity.defaultValues }
        changedIndexes = PropertyIndexSet()
        changedRelationships = PropertyIndexSet()
        if let extras {
            extras.externalReferences = [:]
            extras.committedExternalReferences = [:]
            extras.attributeBaselines = [:]
            extras.relationshipBaselines = [:]
        }
    }

    /// Holds `row`, the row record a save is writing for this new object (its values and to-ones as they are now), in
    /// place of its persistent values while the store's transaction goes on: the values buffer goes (the entity's
    /// shared defaults stand in, as for a fetched object) and each value is read from the row. Nothing else changes:
    /// the save completes it with ``settle(record:of:)`` once the store returned, or gives the values back with
    /// ``dropRecord()`` when it threw. A million inserts then never hold both their values and their rows.
    ///
    /// An object that holds committed values or to-ones (``committed``, ``committedReferences``: not a context's new
    /// object, which has none) keeps its values instead: the row would take their room, and a store that threw would
    /// leave the object without them. Its save settles it onto its values, as for a row the store did not hand over.
    func holdWritten(_ row: StoredRow, of entity: EntityDescription) {
        if case .detached(let values, let references) = committedState, values != nil || references != nil { return }
        committedState = .record(row)
        undecoded = entity.persistentAttributeIndexes
        // Without transients every slot is the row's; with them the buffer stays (its persistent slots undecoded).
        if entity.persistentAttributes.count == entity.attributes.count { values = entity.defaultValues }
    }

    /// Forgets the values and the committed state: what a fault holds (relationships and changes are the caller's).
    func forgetValues(of entity: EntityDescription) {
        values = entity.defaultValues
        undecoded = PropertyIndexSet()
        committedState = .none
        externalReferences = [:]
        committedExternalReferences = [:]
    }

    /// The values by attribute index of an object that loads `row` decoded: transients start from their defaults.
    static func values(of row: StoredRow, entity: EntityDescription) -> [AttributeValue?] {
        // No transients: storage order is attribute order, and the object shares the row's buffer until a write
        // copies it.
        let values = row.values
        if entity.persistentAttributes.count == entity.attributes.count { return values }
        return entity.attributes.map { attribute in
            attribute.storageIndex.map { values[$0] } ?? attribute.defaultValue
        }
    }

    /// The blob references by attribute index of an object that loads `row`.
    static func externalReferences(of row: StoredRow, entity: EntityDescription) -> [Int: UInt64] {
        if row.isRecord {
            // Its check found no blob reference: nothing to look at.
            guard row.referencesBlobs else { return [:] }
            // Only binary values are kept outside a checked record: their fields alone are looked at.
            var references: [Int: UInt64] = [:]
            for attribute in entity.binaryAttributes {
                if let blob = row.blobReference(atStorageIndex: attribute.storageIndex!) {
                    references[attribute.index] = blob
                }
            }
            return references
        }
        let stored = row.externalReferences
        guard !stored.isEmpty else { return [:] }
        var references: [Int: UInt64] = [:]
        for (storageIndex, blob) in stored {
            references[entity.persistentAttributes[storageIndex].index] = blob
        }
        return references
    }
}
