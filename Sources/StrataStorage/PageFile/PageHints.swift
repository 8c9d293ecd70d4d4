import CPrefetch

/// Hints that bytes of mapped pages are about to be read: the CPU starts fetching their cache lines while other work
/// goes on (a B-tree seek hints the leaves of the next keys, pages most likely not read for a while). Taken once for
/// many hints (``PageStore/hints()``): a hint costs a few instructions, no lookup of the mapping.
///
/// A hint reads nothing and cannot fail: a prefetch of an address no longer mapped is dropped, never a fault, and a
/// page past the mapped ones is not hinted.
struct PageHints {
    private let pages: UnsafeRawPointer
    private let count: UInt64
    let pageSize: Int

    /// The unit memory is fetched in (x86-64 and arm64 alike; a wrong guess costs only extra or missing hints).
    static let lineSize = 64

    init?(pages: UnsafeRawBufferPointer, count: UInt64, pageSize: Int) {
        guard let base = pages.baseAddress else { return nil }
        self.pages = base
        self.count = count
        self.pageSize = pageSize
    }

    /// Hints the `lines` cache lines of page `number` from byte `offset` (clamped to the page).
    @inline(__always)
    func prefetch(_ number: UInt64, lines: Int, from offset: Int) {
        guard number < count else { return }
        let page = pages + Int(truncatingIfNeeded: number) &* pageSize
        var offset = min(max(0, offset), pageSize &- 1)
        for _ in 0..<lines {
            cprefetch_read(page + offset)
            offset = min(offset &+ Self.lineSize, pageSize &- 1)
        }
    }
}
