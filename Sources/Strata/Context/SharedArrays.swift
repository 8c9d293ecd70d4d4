/// Gives equal small arrays one shared buffer: a save makes one array of to-one references per object, and most of
/// them are equal (a million employees name a hundred departments), so the save and the objects it settles keep
/// a hundred buffers instead of a million (56 bytes each, W1.graph). Arrays are values: sharing a buffer changes
/// nothing a reader can see, and a write copies it first.
///
/// A direct-mapped cache of the arrays seen last, found by their elements' ``SharableElement/fingerprint``s (no
/// `Hasher`: a hashed set cost 400 instructions an array): bounded, so that arrays that are all different (a to-one
/// to a different object each) cost a comparison each and no more memory; two equal arrays that collide with
/// another in between are not shared, and are still right.
struct SharedArrays<Element: SharableElement> {
    /// The most slots, for a save of that many objects or more.
    static var maximumSlotCount: Int { 4_096 }

    private var slots: [[Element]]
    /// 64 minus log2 of the slot count: a fingerprint's top bits pick its slot.
    private let shift: UInt64

    /// A cache with room for about `expected` distinct arrays, up to ``maximumSlotCount`` (a small save makes a
    /// small table).
    init(expected: Int) {
        var count = 1
        while count < min(expected, Self.maximumSlotCount) { count *= 2 }
        slots = Array(repeating: [], count: count)
        shift = 64 - UInt64(count.trailingZeroBitCount)
    }

    /// `array`, or an equal array seen before (sharing that one's buffer).
    mutating func shared(_ array: [Element]) -> [Element] {
        // Empty arrays share one buffer already.
        if array.isEmpty { return array }
        var fingerprint = UInt64(array.count)
        for element in array { fingerprint = (fingerprint ^ element.fingerprint) &* 0x9E37_79B9_7F4A_7C15 }
        // A shift by 64 (one slot) gives 0 in Swift.
        let slot = Int(truncatingIfNeeded: fingerprint >> shift)
        if slots[slot] == array { return slots[slot] }
        slots[slot] = array
        return array
    }
}

/// An element of arrays that ``SharedArrays`` shares: equal elements have equal fingerprints.
protocol SharableElement: Equatable {
    /// A cheap summary of the value (not a hash: it is mixed by ``SharedArrays``).
    var fingerprint: UInt64 { get }
}

extension Optional: SharableElement where Wrapped: SharableElement {
    var fingerprint: UInt64 { self?.fingerprint ?? 0 }
}

extension StoredReference: SharableElement {
    var fingerprint: UInt64 { rowID &+ UInt64(UInt(bitPattern: ObjectIdentifier(entity))) }
}

extension ObjectReference: SharableElement {
    var fingerprint: UInt64 {
        switch self {
        case .stored(let reference): reference.fingerprint
        case .inserted(let index): UInt64(truncatingIfNeeded: index) &* 2 &+ 1
        }
    }
}

/// What a function made of the arrays it was given last, found by their buffers: arrays that ``SharedArrays`` gave
/// share a buffer where equal, so a save resolves each distinct array of to-ones once, not once an object (a map
/// and an array an object, and its freeing, where a million employees name a hundred departments).
///
/// Direct-mapped and bounded like ``SharedArrays``: an array whose slot another one took is made again, and is
/// still right. A slot keeps its array, so that no other array can have its buffer while it is there.
struct ArrayResults<Element, Result> {
    private var slots: [(array: [Element], result: Result)?] = Array(repeating: nil, count: 256)

    /// `make(array)`, or what it gave for `array`'s buffer before.
    mutating func result(for array: [Element], _ make: ([Element]) -> Result) -> Result {
        // Every empty array shares one buffer: cheap to make, and not worth a slot.
        guard !array.isEmpty else { return make(array) }
        let address = Self.address(of: array)
        // Buffers are 16-byte aligned: the bits above those pick the slot (mixed, as buffers lie in runs).
        let slot = Int(truncatingIfNeeded: ((UInt64(address) >> 4) &* 0x9E37_79B9_7F4A_7C15) >> 56)
        if let entry = slots[slot], Self.address(of: entry.array) == address { return entry.result }
        let result = make(array)
        slots[slot] = (array, result)
        return result
    }

    private static func address(of array: [Element]) -> UInt {
        array.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
    }
}
