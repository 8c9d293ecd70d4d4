import StrataLock
import Synchronization

/// A value read on every object made or property read, and changed a bounded number of times (a table that gains
/// an entry once per key): readers take no lock.
///
/// A reader loads the newest published copy with one acquiring load and reads it in place (no retain). A change
/// copies the newest value under a lock, changes the copy and publishes it. A copy replaced stays alive as long as
/// this holder does, since a reader on another thread may still be reading it: use it only where the changes are
/// few (each keeps one copy), never for a value changed per object or per operation.
///
/// Why: the tables it holds were read under a `Lock` several times per object made (a property key per wrapper,
/// the entity's class), about 100 instructions a lock round trip, a tenth of making a fault (W3.graph).
final class ReadMostly<Value: Sendable>: Sendable {
    /// One published value, never changed.
    private final class Box: Sendable {
        let value: Value
        init(_ value: Value) { self.value = value }
    }

    /// The address of the newest box, published with a releasing store (an address, not a pointer: `Atomic` of a
    /// pointer is not `Sendable`).
    private let current: Atomic<UInt>
    /// Every box published, oldest first: holds them alive, and serializes changes.
    private let published: Lock<[Box]>

    init(_ value: Value) {
        let box = Box(value)
        current = Atomic(Self.address(of: box))
        published = Lock([box])
    }

    /// Runs `body` with the newest published value, without a lock.
    @inline(__always)
    func read<Result>(_ body: (Value) -> Result) -> Result {
        // Never 0: every address stored is a box's.
        let box = Unmanaged<Box>.fromOpaque(UnsafeRawPointer(bitPattern: current.load(ordering: .acquiring))!)
        return box._withUnsafeGuaranteedRef { body($0.value) }
    }

    /// Changes the value: `change` gets a copy of the newest one (under the lock, so changes never race), which is
    /// published when it returns. Readers see the old value or the new one, never a mix.
    func update<Result>(_ change: (inout Value) -> Result) -> Result {
        published.withLock { boxes in
            var value = boxes[boxes.count - 1].value
            let result = change(&value)
            let box = Box(value)
            boxes.append(box)
            current.store(Self.address(of: box), ordering: .releasing)
            return result
        }
    }

    private static func address(of box: Box) -> UInt {
        UInt(bitPattern: Unmanaged.passUnretained(box).toOpaque())
    }

    /// How many values were published (the first included): what the holder keeps alive.
    var publishedCount: Int { published.withLock { $0.count } }
}
