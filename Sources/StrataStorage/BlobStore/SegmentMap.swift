import StrataIO
import StrataLock

/// One blob segment mapped read-only, with the blobs that were verified through it (FORMAT.md §5.5).
///
/// Records that a committed catalog entry names never change (the segment is append-only and was synced before
/// the commit), so they are read where they lie and decompressed straight into the caller's buffer: no
/// positional read, no copy. A blob whose every record checksum and content checksum were verified once is
/// remembered here, by the offset of its first record together with its content checksum, for as long as this
/// map lives; later reads of it check bounds and record headers only.
///
/// A map belongs to one open file (one inode) and is never pointed at another: a segment file that was replaced
/// (compaction writes new segments under new IDs and deletes the old; a later file may reuse a deleted ID) gets a
/// new map with nothing verified. When a record lies past the mapped length (the segment grew), a longer mapping
/// (twice as long, or more) is made; older ones stay mapped until the map goes, since a reader may still be
/// decompressing from one. No byte at or past the file's end is ever touched (SIGBUS): every read is bounded by the
/// file's size taken just before it, see ``bytes(at:count:fileEnd:)``.
final class SegmentMap: Sendable {
    private struct State {
        /// Every mapping made, newest (longest) last: kept until the map goes, so lent bytes stay valid.
        var mappings: [FileMapping] = []
        /// Whether mapping failed or is unsupported: reads then go through the file handle.
        var unavailable: Bool { mappings.isEmpty }
        /// Blobs verified whole through this map: first record's offset -> the content checksum verified.
        var verified: [UInt64: UInt32] = [:]
    }

    /// The segment's file, owned (and closed) by the ``BlobStore``, which outlives this map.
    let file: any FileHandle
    private let state = Lock(State())

    /// Whether the file is mapped (false: the file system reads only through positional reads, or mapping failed).
    let isAvailable: Bool

    /// Maps the file's first `length` bytes (they may pass its end: see ``bytes(at:count:fileEnd:)``). A file system
    /// that cannot map leaves the map unavailable, without touching the file.
    init(file: any FileHandle, length: Int) {
        self.file = file
        let first: FileMapping?
        do { first = try file.mapReadOnly(length: max(length, 1)) } catch { first = nil }
        isAvailable = first != nil
        if let first { state.withLock { $0.mappings.append(first) } }
    }

    /// The segment's bytes `offset..<offset + count` where they lie, or nil when this file cannot be mapped (then
    /// the caller reads them through the file handle), and the mapping they lie in. The bytes stay valid as long as
    /// this map.
    ///
    /// - Parameter fileEnd: the file's size, taken after the records to read were made durable and just before
    ///   the read; `offset + count` must not pass it (a precondition: the caller bounds the read by it), so that no
    ///   byte past the end of the file is touched.
    func bytes(
        at offset: UInt64, count: Int, fileEnd: UInt64
    ) -> (bytes: UnsafeRawBufferPointer, mapping: FileMapping)? {
        precondition(count >= 0 && offset <= fileEnd && UInt64(count) <= fileEnd &- offset)
        // Mapped lengths are Ints; an end beyond Int.max is left to positional reads (which will report it).
        guard let end = Int(exactly: offset &+ UInt64(count)) else { return nil }
        let mapping = state.withLock { state -> FileMapping? in
            if let newest = state.mappings.last, newest.count >= end { return newest }
            if state.unavailable { return nil }
            // Grow geometrically, and map at least what the file holds, so that an active segment maps rarely.
            // A mapping may reach past the file's end: those bytes are served only once the file holds them.
            let fileLength = Int(exactly: fileEnd) ?? end
            let capacity = max(end, fileLength, (state.mappings.last?.count ?? 0) &* 2, 1 << 20)
            let made: FileMapping?
            do { made = try file.mapReadOnly(length: capacity) } catch { made = nil }
            // A failed growth (address space) leaves the records past the mapped length to positional reads.
            guard let made else { return nil }
            state.mappings.append(made)
            return made
        }
        guard let mapping else { return nil }
        // Safe: end <= mapping.count, and offset <= end.
        return (UnsafeRawBufferPointer(rebasing: mapping.bytes[Int(truncatingIfNeeded: offset)..<end]), mapping)
    }

    /// Whether the blob whose first record starts at `offset` was verified whole through this map with
    /// `contentChecksum` as its content checksum.
    func isVerified(blobAt offset: UInt64, contentChecksum: UInt32) -> Bool {
        state.withLock { $0.verified[offset] == contentChecksum }
    }

    /// Remembers that the blob whose first record starts at `offset` was verified whole: every record's checksum,
    /// blob ID, chunk index and length, and its content checksum `contentChecksum`.
    func markVerified(blobAt offset: UInt64, contentChecksum: UInt32) {
        state.withLock { $0.verified[offset] = contentChecksum }
    }

    /// How many mappings were made (tests: growth maps again).
    var mappingCount: Int { state.withLock { $0.mappings.count } }
}
