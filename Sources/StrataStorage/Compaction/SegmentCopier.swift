import StrataFormat
import StrataIO

/// Copies live blobs, record by record and byte for byte, into new blob segments whose IDs come after
/// every segment in the directory, verifying each record (checksum, blob ID, chunk index, decompression)
/// and each blob's content checksum on the way.
///
/// A chunk record's checksum covers the salt, the blob ID and the chunk index but not where the record
/// lies, so a verbatim copy is valid at its new offset: only the catalog entry changes (segment, offset).
/// Segments are created without syncing; ``syncAll()`` makes them durable before the page file that
/// references them is swapped in.
struct SegmentCopier {
    private let source: BlobStore
    private let directory: String
    private let fileSystem: any FileSystem
    private let storeID: [UInt8]
    private let sizeLimit: UInt64
    private var nextID: UInt32
    private var current: (id: UInt32, file: any FileHandle, end: UInt64)?
    /// Every segment created, in order, with its file.
    private(set) var created: [(id: UInt32, file: any FileHandle)] = []
    private(set) var blobsCopied = 0
    private(set) var bytesCopied: UInt64 = 0

    init(source: BlobStore, firstID: UInt32, sizeLimit: UInt64) {
        self.source = source
        self.directory = source.directory
        self.fileSystem = source.fileSystem
        self.storeID = source.storeID
        self.sizeLimit = sizeLimit
        self.nextID = firstID
    }

    var createdIDs: [UInt32] { created.map(\.id) }

    /// Bytes in the new segments.
    var segmentBytes: UInt64 {
        created.reduce(0) { total, segment in total + ((try? segment.file.size()) ?? 0) }
    }

    /// Copies one blob; returns its entry in the new segments. `chunkDone` is called after each chunk.
    mutating func copy(_ blob: BlobID, _ entry: BlobCatalogEntry, chunkDone: () -> Void) throws -> BlobCatalogEntry {
        if current == nil || current!.end >= sizeLimit { try startSegment() }
        let (id, file, start) = current!
        var sourceOffset = entry.offset
        var end = start
        var checksum: UInt32 = 0
        var rawLength: UInt64 = 0
        var scratch: [UInt8] = []
        for index in 0..<entry.chunkCount {
            // The record is read once: verified and decoded for the content checksum, then written as it is.
            let (raw, size) = try source.readChunk(
                segment: entry.segmentID, offset: sourceOffset, blob: blob, index: index,
                limit: entry.storedBytes(from: sourceOffset), scratch: &scratch)
            checksum = raw.withUnsafeBytes { CRC32C.checksum($0, continuing: checksum) }
            rawLength += UInt64(raw.count)
            do {
                try scratch.withUnsafeBytes { try file.write(UnsafeRawBufferPointer(rebasing: $0[..<size]), at: end) }
            } catch let error as IOError { throw StorageError.io(error) }
            sourceOffset += UInt64(size)
            end += UInt64(size)
            chunkDone()
        }
        let sourcePath = source.path(of: entry.segmentID)
        func damaged(_ reason: String) -> StorageError {
            .corrupt(sourcePath, at: entry.offset, "\(blob): \(reason)")
        }
        guard end - start == entry.storedBytes else {
            throw damaged("records take \(end - start) bytes, the catalog says \(entry.storedBytes)")
        }
        guard rawLength == entry.rawLength, CRC32C.mask(checksum) == entry.contentChecksum else {
            throw damaged("content checksum mismatch")
        }
        current!.end = end
        blobsCopied += 1
        bytesCopied += entry.storedBytes
        var moved = entry
        moved.segmentID = id
        moved.offset = start
        return moved
    }

    private mutating func startSegment() throws {
        let id = nextID
        guard id < UInt32.max else { throw StorageError.invalidArgument("blob segment IDs are exhausted") }
        nextID += 1
        let path = StoreFileNames.path(directory, BlobSegmentFormat.fileName(segment: id))
        let file: any FileHandle
        do { file = try fileSystem.openFile(at: path, mode: .createNew) } catch { throw StorageError.io(error) }
        created.append((id, file))
        do { try file.write(BlobSegmentHeader(storeID: storeID, segmentID: id).encoded(), at: 0) } catch {
            throw StorageError.io(error)
        }
        current = (id, file, UInt64(BlobSegmentFormat.headerSize))
    }

    /// Syncs every new segment.
    func syncAll() throws {
        for segment in created {
            do { try segment.file.sync() } catch { throw StorageError.io(error) }
        }
    }

    /// Closes every new segment's handle.
    func closeAll() {
        for segment in created { try? segment.file.close() }
    }
}
