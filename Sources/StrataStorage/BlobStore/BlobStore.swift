import StrataFormat
import StrataIO
import StrataLock

/// The blob segments of a store: append-only files of checksummed, LZ4-compressed chunks.
///
/// Only the holder of the store's writer gate appends, always to the newest ("active") segment, which
/// rolls over to a new file once it outgrows the configured limit. Any thread reads. Segments written
/// since the last ``syncWritten()`` are synced before the log commit that references their blobs, so a
/// committed row never points at a blob that a crash could lose.
final class BlobStore: Sendable {
    private struct Active {
        var id: UInt32
        var file: any FileHandle
        var end: UInt64
    }

    private struct State {
        var readers: [UInt32: any FileHandle] = [:]
        var active: Active?
        var unsynced: [UInt32: any FileHandle] = [:]
        var highestSegment: UInt32
        /// Segments this store failed to create: whatever their files hold, they are never continued.
        var abandoned: Set<UInt32> = []
    }

    let directory: String
    let fileSystem: any FileSystem
    let storeID: [UInt8]
    let salt: UInt64
    let segmentSizeLimit: UInt64
    private let state: Lock<State>

    init(directory: String, fileSystem: any FileSystem, storeID: [UInt8], salt: UInt64, segmentSizeLimit: UInt64) throws
    {
        self.directory = directory
        self.fileSystem = fileSystem
        self.storeID = storeID
        self.salt = salt
        self.segmentSizeLimit = segmentSizeLimit
        let names: [String]
        do { names = try fileSystem.contentsOfDirectory(at: directory) } catch { throw StorageError.io(error) }
        let highest = names.compactMap(BlobSegmentFormat.segmentID(fileName:)).max() ?? 0
        self.state = Lock(State(highestSegment: highest))
    }

    deinit {
        state.withLock { state in
            for file in state.readers.values { try? file.close() }
            try? state.active?.file.close()
        }
    }

    func path(of segment: UInt32) -> String {
        StoreFileNames.path(directory, BlobSegmentFormat.fileName(segment: segment))
    }

    /// The IDs of every segment file in the directory.
    func segmentIDs() throws -> [UInt32] {
        do {
            return try fileSystem.contentsOfDirectory(at: directory).compactMap(BlobSegmentFormat.segmentID(fileName:))
                .sorted()
        } catch { throw StorageError.io(error) }
    }

    // MARK: - Writing (writer gate held)

    /// Where the next blob starts: in the active segment, or a new one when it is full (or there is none).
    ///
    /// Other processes append to the same segments (each only while it holds the store's writer lock, as the caller
    /// does): the active segment continues after whatever its file holds now, and a full one gives way to the newest
    /// segment in the directory, whoever created it.
    func beginBlob() throws -> (segment: UInt32, offset: UInt64) {
        try state.withLock { state throws -> (UInt32, UInt64) in
            if var active = state.active {
                let size: UInt64
                do throws(IOError) { size = try active.file.size() } catch { throw StorageError.io(error) }
                if size != active.end {
                    active.end = size
                    state.active = active
                }
                if active.end < segmentSizeLimit { return (active.id, active.end) }
            }
            while true {
                let newest = try segmentIDs().last ?? 0
                state.highestSegment = max(state.highestSegment, newest)
                let id = state.highestSegment
                if id > 0, id != state.active?.id, !state.abandoned.contains(id),
                    let continued = try continueSegment(id)
                {
                    if let previous = state.active { state.readers[previous.id] = previous.file }
                    state.active = continued
                    return (id, continued.end)
                }
                // The ID is used up even if creating the file fails, so a half-made file is never reused.
                let next = state.highestSegment + 1
                state.highestSegment = next
                let file: any FileHandle
                do { file = try createSegment(next) } catch StorageError.io(let error) where error.code == .fileExists {
                    continue  // another process created it first: continue that one
                } catch {
                    state.abandoned.insert(next)
                    throw error
                }
                if let previous = state.active { state.readers[previous.id] = previous.file }
                state.active = Active(id: next, file: file, end: UInt64(BlobSegmentFormat.headerSize))
                return (next, UInt64(BlobSegmentFormat.headerSize))
            }
        }
    }

    /// The existing segment `id` as the active one, after whatever is at its end (a torn tail is an orphan), if it has
    /// a valid header and room left.
    private func continueSegment(_ id: UInt32) throws -> Active? {
        let file: any FileHandle
        let size: UInt64
        do throws(IOError) {
            file = try fileSystem.openFile(at: path(of: id), mode: .existing)
        } catch {
            if error.code == .noSuchFile { return nil }  // a creation that failed before the file existed
            throw StorageError.io(error)
        }
        do throws(IOError) { size = try file.size() } catch {
            try? file.close()
            throw StorageError.io(error)
        }
        if size >= UInt64(BlobSegmentFormat.headerSize), size < segmentSizeLimit, hasValidHeader(file, id) {
            return Active(id: id, file: file, end: size)
        }
        try? file.close()
        return nil
    }

    /// Whether a segment file starts with a valid header of this store and ID (a crash while creating it
    /// may leave a file without one, which is then left alone).
    func hasValidHeader(_ file: any FileHandle, _ id: UInt32) -> Bool {
        guard let bytes = try? file.read(count: BlobSegmentFormat.headerSize, at: 0),
            let header = try? bytes.withUnsafeBytes({ (buffer) throws(FormatError) in
                try BlobSegmentHeader.decode(buffer)
            })
        else { return false }
        return header.storeID == storeID && header.segmentID == id
    }

    private func createSegment(_ id: UInt32) throws -> any FileHandle {
        do {
            let file = try fileSystem.openFile(at: path(of: id), mode: .createNew)
            try file.write(BlobSegmentHeader(storeID: storeID, segmentID: id).encoded(), at: 0)
            try file.sync()
            try fileSystem.syncDirectory(at: directory)
            return file
        } catch { throw StorageError.io(error) }
    }

    /// Appends a chunk record to the active segment; returns its offset. A failed write is cut back.
    func append(_ record: [UInt8]) throws -> UInt64 {
        try state.withLock { state throws -> UInt64 in
            guard var active = state.active else { preconditionFailure("append before beginBlob") }
            do throws(IOError) { try active.file.write(record, at: active.end) } catch {
                try? active.file.truncate(to: active.end)
                throw StorageError.io(error)
            }
            let offset = active.end
            active.end += UInt64(record.count)
            state.unsynced[active.id] = active.file
            state.active = active
            return offset
        }
    }

    /// Syncs every segment appended to since the last call.
    func syncWritten() throws {
        let files = state.withLock { state -> [(UInt32, any FileHandle)] in
            let files = state.unsynced.map { ($0.key, $0.value) }
            state.unsynced.removeAll()
            return files
        }
        for (id, file) in files {
            do { try file.sync() } catch {
                state.withLock { $0.unsynced[id] = file }
                throw StorageError.io(error)
            }
        }
    }

    // MARK: - Reading (any thread)

    func reader(for segment: UInt32) throws -> any FileHandle {
        try state.withLock { state throws -> any FileHandle in
            if let active = state.active, active.id == segment { return active.file }
            if let file = state.readers[segment] { return file }
            let file: any FileHandle
            // Readers only read: a read-only handle, so that a store on a read-only mount can be read.
            do throws(IOError) { file = try fileSystem.openFileForReading(at: path(of: segment)) } catch {
                if error.code == .noSuchFile {
                    throw StorageError.corruption(
                        file: path(of: segment), offset: 0, reason: "blob segment \(segment) is missing")
                }
                throw StorageError.io(error)
            }
            state.readers[segment] = file
            return file
        }
    }

    /// Reads the chunk record of `blob` number `index` at `offset` with one positional read of at most `limit`
    /// bytes (the blob's stored bytes not yet read, which bound its record) into `scratch`, and checks that it is
    /// that chunk's; the record's payload is then verified and decoded by the caller, straight into its buffer.
    ///
    /// - Returns: the record's header and its bytes in `scratch` (from 0).
    func readChunkRecord(
        segment: UInt32, offset: UInt64, blob: BlobID, index: UInt32, limit: Int, scratch: inout [UInt8]
    ) throws -> BlobChunkRecord {
        let file = try reader(for: segment)
        let path = file.path
        func damaged(_ reason: String) -> StorageError {
            .corruption(file: path, offset: offset, reason: "\(blob) chunk \(index): \(reason)")
        }
        let want = min(limit, BlobSegmentFormat.recordHeaderSize + BlobSegmentFormat.chunkSize)
        guard want >= BlobSegmentFormat.recordHeaderSize else { throw damaged("the catalog leaves no room for it") }
        if scratch.count < want { scratch = [UInt8](repeating: 0, count: want) }
        let got: Int
        do {
            got = try scratch.withUnsafeMutableBytes { buffer in
                try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<want]), at: offset)
            }
        } catch let error as IOError { throw StorageError.io(error) }
        guard got >= BlobSegmentFormat.recordHeaderSize else {
            throw damaged("record at \(offset) lies past the end of the segment")
        }
        let record: BlobChunkRecord
        do {
            record = try scratch.withUnsafeBytes { (bytes) throws(FormatError) in
                try BlobChunkRecord.decodeHeader(UnsafeRawBufferPointer(rebasing: bytes[..<got]))
            }
        } catch { throw damaged("\(error)") }
        guard record.blobID == blob.rawValue, record.chunkIndex == index else {
            throw damaged("record belongs to blob \(record.blobID) chunk \(record.chunkIndex)")
        }
        guard record.encodedSize <= got else { throw damaged("record cut short") }
        return record
    }

    /// Reads, verifies and decodes one chunk record (read into `scratch`, as ``readChunkRecord``) into a new array.
    func readChunk(
        segment: UInt32, offset: UInt64, blob: BlobID, index: UInt32, limit: Int, scratch: inout [UInt8]
    ) throws -> (raw: [UInt8], recordSize: Int) {
        let record = try readChunkRecord(
            segment: segment, offset: offset, blob: blob, index: index, limit: limit, scratch: &scratch)
        do {
            let raw = try scratch.withUnsafeBytes { (all) throws(FormatError) in
                try record.decodePayload(all, salt: salt)
            }
            return (raw, record.encodedSize)
        } catch {
            throw StorageError.corruption(
                file: path(of: segment), offset: offset, reason: "\(blob) chunk \(index): \(error)")
        }
    }

}
