#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A read-only, shared memory mapping of the start of a file (``FileHandle/mapReadOnly(length:)``).
///
/// The mapping stays valid, whatever happens to the descriptor it was made from, until the last reference to it
/// goes: it is unmapped then. Bytes of the mapping beyond the file's end must not be touched (the system
/// raises SIGBUS): readers only read what they know the file holds, and the file must never shrink below it
/// while the mapping lives (Strata never shrinks a page file in place; compaction renames a new file over it,
/// which leaves this mapping on the old one).
public final class FileMapping: Sendable {
    // The address is kept as an integer so that the class is Sendable without `@unchecked`: the mapping is
    // read-only and immutable, so sharing it across threads is safe.
    private let address: UInt
    /// The mapped length in bytes.
    public let count: Int

    init(address: UnsafeMutableRawPointer, count: Int) {
        self.address = UInt(bitPattern: address)
        self.count = count
    }

    /// The mapped bytes.
    @inline(__always)
    public var bytes: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: UnsafeRawPointer(bitPattern: address), count: count)
    }

    deinit {
        // Nothing can be done about a failure here, and munmap of a mapping we made fails only on misuse.
        _ = munmap(UnsafeMutableRawPointer(bitPattern: address), count)
    }
}
