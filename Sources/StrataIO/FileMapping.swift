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

    /// Drops this process's page-table entries for the whole pages inside `range` (offsets into ``bytes``), so that
    /// they no longer count in its resident memory. The file's pages stay in the OS page cache, and reading them
    /// again maps them again: the bytes do not change. Partial pages at either end are left mapped.
    ///
    /// A reader streaming a long run of the file through the mapping calls this on what it has consumed, so that
    /// its resident memory stays bounded by what it holds at once, as with positional reads into one buffer.
    ///
    /// The corresponding C function is `madvise` with `MADV_DONTNEED`.
    public func releasePages(in range: Range<Int>) {
        precondition(range.lowerBound >= 0 && range.upperBound <= count)
        let page = Self.pageSize
        // Safe: both ends lie in 0...count (checked above), so rounding inward stays inside the mapping.
        let start = (range.lowerBound &+ page &- 1) / page &* page
        let end = range.upperBound / page &* page
        guard end > start else { return }
        // A failure (only on misuse) leaves the pages mapped, which is correct, only larger.
        _ = madvise(UnsafeMutableRawPointer(bitPattern: address &+ UInt(start)), end &- start, Int32(MADV_DONTNEED))
    }

    /// The system's page size, which mappings are made of.
    public static let pageSize: Int = Int(sysconf(Int32(_SC_PAGESIZE)))

    deinit {
        // Nothing can be done about a failure here, and munmap of a mapping we made fails only on misuse.
        _ = munmap(UnsafeMutableRawPointer(bitPattern: address), count)
    }
}
