import StrataIO

/// The input format of FuzzStoreOpen: a whole store directory in one byte string.
///
/// ```
/// image := mode:u8 file*
/// file  := nameIndex:u8 length:u16 bytes[length]      (a length past the end takes what is left)
/// ```
/// `nameIndex` picks one of ``fileNames`` (modulo their count); a later file of the same name replaces an
/// earlier one. Mode bits: 0 re-checksum every page of the page file (salt and page size from its header),
/// 1 every WAL record, 2 every blob chunk record, 3 the store, WAL and segment headers, 4 after a clean
/// verification also write, checkpoint, reopen and verify again, 5 lay the store out in an `InMemoryFileSystem`
/// instead of a directory read through `PosixFileSystem` (and the page map).
public struct StoreImage {
    /// The files a store directory may hold, by index.
    public static let fileNames = [
        "strata.pages", "strata.wal", "blob-000001.seg", "blob-000002.seg", "strata.wal.tmp",
        "strata.pages.compact", "strata.lock", "blob-000003.seg",
    ]

    /// The mode byte.
    public var mode: UInt8
    /// The files, by name, in the order they were first given.
    public var files: [(name: String, bytes: [UInt8])]

    /// An image from its parts.
    public init(mode: UInt8, files: [(name: String, bytes: [UInt8])]) {
        self.mode = mode
        self.files = files
    }

    /// Decodes an image; never fails (a short input is a store with fewer files).
    public init(decoding data: UnsafeRawBufferPointer) {
        var input = FuzzInput(data)
        mode = input.byte()
        files = []
        while !input.isEmpty {
            let name = Self.fileNames[Int(input.byte()) % Self.fileNames.count]
            let length = Int(input.uint16())
            let bytes = input.bytes(length)
            if let index = files.firstIndex(where: { $0.name == name }) {
                files[index].bytes = bytes
            } else {
                files.append((name, bytes))
            }
        }
    }

    /// The encoded image. Files longer than 65,535 bytes are a precondition failure.
    public func encoded() -> [UInt8] {
        var bytes = [mode]
        for (name, contents) in files {
            precondition(contents.count <= Int(UInt16.max), "\(name) is too long for a store image")
            bytes.append(UInt8(Self.fileNames.firstIndex(of: name)!))
            bytes.append(UInt8(truncatingIfNeeded: contents.count))
            bytes.append(UInt8(truncatingIfNeeded: contents.count >> 8))
            bytes += contents
        }
        return bytes
    }

    /// The image of the files in `directory` of `fileSystem` (those named in ``fileNames``).
    public static func capture(_ fileSystem: InMemoryFileSystem, directory: String, mode: UInt8) -> StoreImage {
        var files: [(name: String, bytes: [UInt8])] = []
        for name in fileNames where name != "strata.lock" {
            if let contents = fileSystem.contents(of: directory + "/" + name) { files.append((name, contents)) }
        }
        return StoreImage(mode: mode, files: files)
    }

    /// Applies the re-checksum bits of ``mode`` to the files.
    public mutating func reseal() {
        func update(_ name: String, _ body: (inout [UInt8]) -> Void) {
            if let index = files.firstIndex(where: { $0.name == name }) { body(&files[index].bytes) }
        }
        var salt: UInt64?
        var pageSize: Int?
        update("strata.pages") { pages in
            if mode & 8 != 0 { Reseal.storeHeader(&pages) }
            salt = Reseal.storeSalt(pageFile: pages)
            pageSize = Reseal.pageSize(pageFile: pages)
            if mode & 1 != 0, let salt, let pageSize { Reseal.pages(&pages, pageSize: pageSize, salt: salt) }
        }
        update("strata.wal") { wal in
            if mode & 8 != 0 { Reseal.fileHeader48(&wal) }
            if mode & 2 != 0, let walSalt = Reseal.walSalt(wal) { Reseal.walRecords(&wal, from: 48, salt: walSalt) }
        }
        for name in ["blob-000001.seg", "blob-000002.seg", "blob-000003.seg"] {
            update(name) { segment in
                if mode & 8 != 0 { Reseal.fileHeader48(&segment) }
                if mode & 4 != 0, let salt { Reseal.blobRecords(&segment, from: 48, salt: salt) }
            }
        }
    }
}
