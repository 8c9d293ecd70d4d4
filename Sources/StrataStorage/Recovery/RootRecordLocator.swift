import StrataFormat

/// Finds the newest valid root record of a page file.
///
/// 1. Start at the last whole page of the file that holds data and walk back one page at a time. Pages in
///    a hole at the end of a sparse file (found with ``FileHandle/dataEnd()``, `SEEK_DATA`/`SEEK_HOLE`) are
///    zeros, which never verify, so they are skipped without being read: a page file with a 20 GiB sparse
///    tail is searched as fast as one without.
/// 2. Skip pages that fail their checksum (a torn write) and pages that are not the last part of a root
///    record (tree pages of an interrupted checkpoint).
/// 3. At the last part of a root record, read its other parts (the pages just before it): all must verify,
///    be root-record parts of the same generation, in order. Decode the payload; on any failure go on
///    walking back from the page before.
/// 4. No root record at all means no checkpoint ever completed: the store's durable state is empty.
///
/// Pages are read with positional reads, not through the mapping: the walk passes pages past the newest root record
/// (an interrupted checkpoint's, or one another process is writing), which a later checkpoint may write again.
struct RootRecordLocator {
    struct Found {
        var record: RootRecord
        var firstPage: UInt64
        var lastPage: UInt64
        var generation: UInt64
    }

    let pages: PageStore

    func locate(pageCount: UInt64) throws -> Found? {
        let dataEnd: UInt64
        do { dataEnd = try pages.file.dataEnd() } catch { throw StorageError.io(error) }
        let pageSize = UInt64(pages.pageSize)
        // dataEnd ≤ the file size, so this rounds up to at most the file's page count (plus a partial page).
        var candidate = min(pageCount, dataEnd / pageSize + (dataEnd % pageSize == 0 ? 0 : 1))
        while candidate > 1 {
            candidate -= 1
            do {
                if let found = try readRootRecord(endingAt: candidate) { return found }
            } catch StorageError.io(let error) {
                // A read that failed says nothing about the page: never fall back to an older checkpoint for it.
                throw StorageError.io(error)
            } catch {
                continue  // a torn or foreign page: keep walking back
            }
        }
        return nil
    }

    private func readRootRecord(endingAt last: UInt64) throws -> Found? {
        let (lastIndex, count, generation) = try pages.withPageFromFile(last) {
            _, header throws -> (Int, Int, UInt64) in
            guard header.type == .rootRecord else { throw FormatError.invalidField("not a root record") }
            let part = try RootRecord.part(of: header)
            return (part.index, part.count, header.generation)
        }
        guard lastIndex == count - 1, UInt64(count) <= last else { return nil }
        let first = last - UInt64(count - 1)
        var payload: [UInt8] = []
        for (index, number) in (first...last).enumerated() {
            try pages.withPageFromFile(number) { page, header in
                let part = try RootRecord.part(of: header)
                guard part.index == index, part.count == count, header.generation == generation else {
                    throw FormatError.invalidField("root record part \(number) does not belong")
                }
                payload.append(contentsOf: header.body(of: page))
            }
        }
        let record = try payload.withUnsafeBytes { (bytes) throws(FormatError) in
            try RootRecord.decode(bytes, firstPage: first)
        }
        return Found(record: record, firstPage: first, lastPage: last, generation: generation)
    }
}
