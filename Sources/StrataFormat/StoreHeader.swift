/// The store header: the first bytes of page 0 of the page file (FORMAT.md, "Store header").
///
/// Written once when the store is created and never rewritten. It names the format version,
/// the page size, the checksum algorithm, feature flags and the store's UUID.
public struct StoreHeader: Sendable, Equatable {
    /// `0x89 'S' 'T' 'R' 'A' '\r' '\n' 0x1A`: a non-ASCII first byte and line-ending guards, as PNG does.
    public static let magic: [UInt8] = [0x89, 0x53, 0x54, 0x52, 0x41, 0x0D, 0x0A, 0x1A]
    /// The only format version this code writes and reads. Version 4 (2026-11-27) adds leaves whose row IDs are a
    /// bitmap (FORMAT.md §4.2); version 3 (2026-11-25) has compact row records (§6) and compact leaf and index pages
    /// (§4.2, §4.6); version 2 laid pages out to be searched in place, version 1 did not. Older stores are refused
    /// with ``FormatError/unsupportedVersion(_:)``.
    public static let currentVersion: UInt32 = 4
    /// Why a store of `version` cannot be opened, and what to do about it.
    public static func unsupportedVersionReason(_ version: UInt32) -> String {
        switch version {
        case 1, 2, 3:
            let era =
                version == 1
                ? "pages of 2026-11-24 and before"
                : version == 2 ? "row records of 2026-11-25 and before" : "leaves of 2026-11-27 and before"
            return "format version \(version) (\(era)); this Strata reads version \(currentVersion) only. Open the "
                + "store with the release that wrote it and copy its data into a new store (CHANGELOG.md)"
        default:
            return "unsupported format version \(version); this Strata reads version \(currentVersion)"
        }
    }

    /// Encoded size of the header; the rest of page 0 is zero.
    public static let encodedSize = 64
    /// The smallest page size a store may have, in bytes.
    public static let minimumPageSize = 512
    /// The largest page size a store may have, in bytes.
    public static let maximumPageSize = 65536
    /// `checksumType` value for CRC-32C, the only algorithm of format version 1.
    public static let checksumCRC32C: UInt8 = 1
    /// The bits of ``compatibleFeatures`` this code knows: none are defined yet.
    public static let knownCompatibleFeatures: UInt32 = 0
    /// The bits of ``readOnlyCompatibleFeatures`` this code knows: none are defined yet. A store with any
    /// other bit set may be read (``decode(_:)`` accepts it) but must not be written (``isWritable``).
    public static let knownReadOnlyCompatibleFeatures: UInt32 = 0
    /// The bits of ``incompatibleFeatures`` this code knows: none are defined yet. ``decode(_:)`` refuses a
    /// header with any other bit set.
    public static let knownIncompatibleFeatures: UInt32 = 0

    /// The format version the store was written with; ``decode(_:)`` only accepts ``currentVersion``.
    public var formatVersion: UInt32
    /// The size of every page of the page file in bytes: a power of two in
    /// ``minimumPageSize``...``maximumPageSize``.
    public var pageSize: Int
    /// The checksum algorithm of every page and record; only ``checksumCRC32C`` exists.
    public var checksumType: UInt8
    /// Features a reader may ignore.
    public var compatibleFeatures: UInt32
    /// Features a reader that does not know them may read but must not write.
    public var readOnlyCompatibleFeatures: UInt32
    /// Features a reader that does not know them must refuse.
    public var incompatibleFeatures: UInt32
    /// The store's identity, also written into every WAL file header.
    public var storeID: [UInt8]

    /// Creates the header of a new store: current version, CRC-32C and no features.
    ///
    /// - Parameters:
    ///   - pageSize: the page size in bytes; it must pass ``isValidPageSize(_:)`` (a precondition).
    ///   - storeID: the store's 16-byte UUID; any other length is a precondition failure.
    public init(pageSize: Int, storeID: [UInt8]) {
        precondition(Self.isValidPageSize(pageSize))
        precondition(storeID.count == 16)
        self.formatVersion = Self.currentVersion
        self.pageSize = pageSize
        self.checksumType = Self.checksumCRC32C
        self.compatibleFeatures = 0
        self.readOnlyCompatibleFeatures = 0
        self.incompatibleFeatures = 0
        self.storeID = storeID
    }

    /// The bits of ``readOnlyCompatibleFeatures`` this code does not know: a store with any may be read but
    /// not written (FORMAT.md §2, reader rules).
    public var unknownReadOnlyCompatibleFeatures: UInt32 {
        readOnlyCompatibleFeatures & ~Self.knownReadOnlyCompatibleFeatures
    }

    /// Whether this code may write the store: it knows every read-only-compatible feature bit.
    public var isWritable: Bool { unknownReadOnlyCompatibleFeatures == 0 }

    /// Whether `size` is a page size a store may have.
    ///
    /// - Parameter size: a page size in bytes.
    /// - Returns: `true` for a power of two from ``minimumPageSize`` to ``maximumPageSize``.
    public static func isValidPageSize(_ size: Int) -> Bool {
        size >= minimumPageSize && size <= maximumPageSize && size & (size - 1) == 0
    }

    /// A 64-bit value derived from the store ID, mixed into every page checksum so that a page
    /// copied from another store never verifies.
    public var checksumSalt: UInt64 {
        storeID.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: 0, as: UInt64.self)) }
            ^ storeID.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) }
    }

    /// The 64 header bytes.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: Self.encodedSize)
        writer.writeBytes(Self.magic)
        writer.writeUInt32LE(formatVersion)
        writer.writeUInt32LE(UInt32(Self.encodedSize))
        writer.writeUInt32LE(UInt32(pageSize))
        writer.writeUInt8(checksumType)
        writer.writeZeros(3)
        writer.writeUInt32LE(compatibleFeatures)
        writer.writeUInt32LE(readOnlyCompatibleFeatures)
        writer.writeUInt32LE(incompatibleFeatures)
        writer.writeBytes(storeID)
        writer.writeZeros(8)
        let crc = writer.withUnsafeBytes { CRC32C.checksum($0) }
        writer.writeUInt32LE(CRC32C.mask(crc))
        assert(writer.count == Self.encodedSize)
        return writer.take()
    }

    /// Decodes and validates a header from the start of `bytes`.
    ///
    /// Unknown bits of ``compatibleFeatures`` are ignored and unknown bits of ``readOnlyCompatibleFeatures``
    /// are kept (the store is then read-only: ``isWritable``); unknown bits of ``incompatibleFeatures`` refuse.
    ///
    /// - Throws: ``FormatError`` for bad magic, a checksum mismatch, an unknown version,
    ///   an invalid page size, an unknown checksum type or an unknown incompatible feature.
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(FormatError) -> StoreHeader {
        guard bytes.count >= encodedSize else { throw .truncated(needed: encodedSize, available: bytes.count) }
        guard bytes.prefix(8).elementsEqual(magic) else { throw .badMagic }
        var reader = ByteReader(bytes, readerIndex: 8)
        let version = try reader.readUInt32LE()
        let headerLength = try reader.readUInt32LE()
        guard headerLength == UInt32(encodedSize) else { throw .invalid("header length \(headerLength), expected 64") }
        let stored = try reader.getUInt32LE(at: encodedSize - 4)
        let computed = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<(encodedSize - 4)]))
        guard CRC32C.unmask(stored) == computed else {
            throw .checksumMismatch(stored: stored, computed: CRC32C.mask(computed))
        }
        guard version == currentVersion else { throw .unsupportedVersion(version) }
        let pageSize = Int(try reader.readUInt32LE())
        guard isValidPageSize(pageSize) else {
            throw .invalid("page size \(pageSize) is not a power of two in 512...65536")
        }
        let checksumType = try reader.readUInt8()
        guard checksumType == checksumCRC32C else { throw .invalid("unknown checksum type \(checksumType)") }
        try reader.skip(3)
        let compat = try reader.readUInt32LE()
        let roCompat = try reader.readUInt32LE()
        let incompat = try reader.readUInt32LE()
        let unknown = incompat & ~knownIncompatibleFeatures
        guard unknown == 0 else {
            throw .invalid(
                "unknown incompatible features 0x\(String(unknown, radix: 16)): a newer Strata wrote this store; "
                    + "this version cannot read it")
        }
        let storeID = try reader.readBytes(16)
        var header = StoreHeader(pageSize: pageSize, storeID: storeID)
        header.compatibleFeatures = compat
        header.readOnlyCompatibleFeatures = roCompat
        header.incompatibleFeatures = incompat
        return header
    }
}
