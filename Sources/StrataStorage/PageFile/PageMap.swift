import StrataIO
import StrataLock
import Synchronization

/// The durable part of the page file mapped into memory, with what has been verified of it.
///
/// Committed pages never change (the file is append-only and a page is referenced only once a checkpoint made it
/// durable), so they are read where they lie: no copy, no decoded cache, the OS page cache is the cache, as in
/// LMDB. Each page's checksum (and, for tree pages, its structure) is checked on first touch, then remembered
/// in a bitmap, so later reads check nothing but bounds.
///
/// When the durable part outgrows the mapping, a longer one (twice as long, or more) replaces it for new reads;
/// the older ones stay mapped until the page store goes, because a reader may still be inside one. A mapping
/// covers only pages the file held when it was made, so no read touches bytes past the file's end (no SIGBUS);
/// the engine never shrinks a page file in place (compaction renames a new file over it, which leaves every
/// mapping on the old file intact).
final class PageMap: Sendable {
    /// One mapping of the file and its verification bits, for `capacity` pages (it may reach past the file's end).
    final class Span: @unchecked Sendable {
        // Safety: `mapping` is immutable; the bit words are atomics, allocated once and freed in deinit, and only
        // ever go from 0 to 1.
        let mapping: FileMapping
        /// The mapping's bytes, read once (``FileMapping/bytes`` is a call into another module at every page read).
        let bytes: UnsafeRawBufferPointer
        let capacity: UInt64
        private let words: UnsafeMutablePointer<Atomic<UInt64>>
        private let wordCount: Int

        init(mapping: FileMapping, capacity: UInt64, inheriting previous: Span?) {
            self.mapping = mapping
            self.bytes = mapping.bytes
            self.capacity = capacity
            // Two bits a page: checksum verified, tree structure validated.
            wordCount = max(1, Int((capacity &* 2 &+ 63) / 64))
            words = .allocate(capacity: wordCount)
            for index in 0..<wordCount {
                let old = previous.flatMap { index < $0.wordCount ? $0.words[index].load(ordering: .relaxed) : nil }
                (words + index).initialize(to: Atomic(old ?? 0))
            }
        }

        deinit {
            words.deinitialize(count: wordCount)
            words.deallocate()
        }

        @inline(__always)
        private func isSet(_ bit: UInt64) -> Bool {
            words[Int(bit >> 6)].load(ordering: .acquiring) & (1 &<< (bit & 63)) != 0
        }

        @inline(__always)
        private func set(_ bit: UInt64) {
            words[Int(bit >> 6)].bitwiseOr(1 &<< (bit & 63), ordering: .releasing)
        }

        /// Whether page `number`'s checksum and header were verified.
        @inline(__always)
        func isVerified(_ number: UInt64) -> Bool { isSet(number &* 2) }
        @inline(__always)
        func markVerified(_ number: UInt64) { set(number &* 2) }
        /// Whether page `number` was validated as a tree node (leaf or internal page).
        @inline(__always)
        func isValidatedNode(_ number: UInt64) -> Bool { isSet(number &* 2 &+ 1) }
        @inline(__always)
        func markValidatedNode(_ number: UInt64) { set(number &* 2 &+ 1) }
    }

    /// A span and how many of its pages the file held when the region was made: the pages it may serve.
    final class Region: Sendable {
        let span: Span
        let pageCount: UInt64

        init(span: Span, pageCount: UInt64) {
            self.span = span
            self.pageCount = pageCount
        }
    }

    private let file: any FileHandle
    private let pageSize: Int
    /// Every region made, newest last: kept until the map goes, so that bytes lent from any of them stay valid.
    private let regions = Lock<[Region]>([])
    /// The newest region, read without the lock (an unretained reference to the last of `regions`), or 0.
    private let newest = Atomic<UInt>(0)
    /// Set once mapping failed or is unsupported: reads then go through the file handle.
    private let unavailable = Atomic<Bool>(false)

    init(file: any FileHandle, pageSize: Int) {
        self.file = file
        self.pageSize = pageSize
    }

    /// Calls `body` with the span serving page `number`, or nil when the page must be read through the file handle.
    ///
    /// The span is lent, not retained: every region published here (and so its span) is kept alive by `regions` until
    /// the map is deinitialized, and the caller holds the map. Returned, the region and its span were retained and
    /// released around every page read, three pages a row read (about 130 instructions a page, W3.graph).
    @inline(__always)
    func withSpan<R>(for number: UInt64, _ body: (Span?) throws -> R) rethrows -> R {
        try withNewestRegion { region in
            guard let region, number < region.pageCount else { return try body(nil) }
            return try Unmanaged.passUnretained(region.span)._withUnsafeGuaranteedRef { try body($0) }
        }
    }

    /// The newest region's bytes and page count, for hints (``PageHints``): nil when nothing is mapped. Every region
    /// stays mapped until the map goes (see ``withSpan(for:_:)``).
    func mappedPages() -> (bytes: UnsafeRawBufferPointer, pageCount: UInt64)? {
        withNewestRegion { region in region.map { ($0.span.bytes, $0.pageCount) } }
    }

    /// Calls `body` with the newest region, lent (see ``withSpan(for:_:)``), or nil when nothing is mapped.
    @inline(__always)
    private func withNewestRegion<R>(_ body: (Region?) throws -> R) rethrows -> R {
        let raw = newest.load(ordering: .acquiring)
        guard raw != 0, let pointer = UnsafeRawPointer(bitPattern: raw) else { return try body(nil) }
        return try Unmanaged<Region>.fromOpaque(pointer)._withUnsafeGuaranteedRef { try body($0) }
    }

    /// Makes pages below `pageCount` readable in place, mapping more of the file when needed. A failure to map
    /// leaves reads on the file handle, which is correct, only slower.
    func cover(pageCount: UInt64) {
        guard !unavailable.load(ordering: .relaxed) else { return }
        regions.withLock { regions in
            let previous = regions.last
            if let previous, previous.pageCount >= pageCount { return }
            // Only whole pages the file holds now may be served: never a byte past the end of the file.
            guard let size = try? file.size() else { return }
            let available = min(pageCount, size / UInt64(pageSize))
            guard available > (previous?.pageCount ?? 0) else { return }
            var span = previous?.span
            if span == nil || span!.capacity < available {
                // Grow geometrically (a mapping may reach past the file's end; those pages are served only once a
                // later region says the file holds them), so that a growing store maps rarely.
                let capacity = max(available, (span?.capacity ?? 0) * 2, 1024)
                let mapping: FileMapping?
                do { mapping = try file.mapReadOnly(length: Int(capacity) * pageSize) } catch { mapping = nil }
                guard let mapping else {
                    unavailable.store(true, ordering: .relaxed)
                    return
                }
                span = Span(mapping: mapping, capacity: capacity, inheriting: span)
            }
            let region = Region(span: span!, pageCount: available)
            regions.append(region)
            newest.store(UInt(bitPattern: Unmanaged.passUnretained(region).toOpaque()), ordering: .releasing)
        }
    }
}
