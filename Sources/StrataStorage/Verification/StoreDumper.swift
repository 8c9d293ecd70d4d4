import StrataFormat
import StrataIO

/// A span of a file annotated with what it holds, in the style of Pebble's `binfmt`:
/// `48-51: x 1f8b0c2d # checksum (masked CRC-32C)`.
///
/// `offset` is the span's position in its file, so that a dump line and a problem reported by
/// verification (file and offset) point at the same bytes.
public struct AnnotatedSpan: Sendable, Equatable, CustomStringConvertible {
    public var offset: UInt64
    public var bytes: [UInt8]
    public var note: String

    /// How many bytes are printed before the rest is elided.
    public static let printedBytes = 32

    public init(offset: UInt64, bytes: [UInt8], note: String) {
        self.offset = offset
        self.bytes = bytes
        self.note = note
    }

    /// `start-end: x hex # note` (a range of one byte prints as `start: x hex`).
    public var description: String {
        let range = bytes.count <= 1 ? "\(offset)" : "\(offset)-\(offset + UInt64(bytes.count) - 1)"
        var hex = bytes.prefix(Self.printedBytes).map { String($0, radix: 16).leftPadded(to: 2) }.joined()
        if bytes.count > Self.printedBytes { hex += "... (\(bytes.count) bytes)" }
        if bytes.isEmpty { hex = "(0 bytes)" }
        return "\(range): x \(hex) # \(note)"
    }
}

/// One page of the page file as `strata dump --pages` lists it.
public struct PageListing: Sendable, Equatable, Codable, CustomStringConvertible {
    public var page: UInt64
    /// `header`, `leaf`, `internal`, `overflow`, `root record`, or `damaged` when the page does not verify.
    public var kind: String
    public var generation: UInt64?
    public var itemCount: Int?
    public var bodyLength: Int?
    public var extra: UInt32?
    /// Why the page does not verify, when it does not.
    public var damage: String?

    public var description: String {
        guard damage == nil else { return "page \(page): damaged: \(damage!)" }
        var text = "page \(page): \(kind)"
        if let generation { text += " generation \(generation)" }
        if let itemCount, kind == "leaf" || kind == "internal" {
            text += ", \(itemCount) \(kind == "leaf" ? "cells" : "children")"
        }
        if let bodyLength { text += ", body \(bodyLength) bytes" }
        if let extra {
            switch kind {
            case "internal": text += ", level \(extra)"
            case "root record": text += ", part \(extra >> 16) of \(extra & 0xFFFF)"
            default: break
            }
        }
        return text
    }
}

/// A row's bytes read as a row record (FORMAT.md §6), when they are one.
public struct RowDescription: Sendable, Equatable, Codable {
    public var entityID: UInt16
    public var rowVersion: UInt64
    /// Each field in a short readable form, e.g. `string("Ada")`, `int64(36)`, `null`.
    public var fields: [String]
}

extension ReadOnlyStore {
    /// Every whole page of the page file, with its type and header fields (no tree walk: damaged and
    /// unreferenced pages are listed too).
    public func pageListing(limit: UInt64 = .max) throws -> [PageListing] {
        let count = min(limit, pageFileBytes / UInt64(pageSize))
        var result: [PageListing] = []
        for number in 0..<count {
            let bytes: [UInt8]
            do { bytes = try pages.file.read(count: pageSize, at: pages.offset(of: number)) } catch {
                throw StorageError.io(error)
            }
            if number == 0 {
                result.append(PageListing(page: 0, kind: "header"))
                continue
            }
            do {
                let header = try bytes.withUnsafeBytes { (page) throws(FormatError) in
                    try PageHeader.decode(page, expectedPageNumber: number, salt: self.header.checksumSalt)
                }
                result.append(
                    PageListing(
                        page: number, kind: Self.kindName(header.type), generation: header.generation,
                        itemCount: header.itemCount, bodyLength: header.bodyLength, extra: header.extra))
            } catch {
                result.append(PageListing(page: number, kind: "damaged", damage: "\(error)"))
            }
        }
        return result
    }

    static func kindName(_ type: PageType) -> String {
        switch type {
        case .leaf: "leaf"
        case .internal: "internal"
        case .overflow: "overflow"
        case .rootRecord: "root record"
        case .indexLeaf: "index leaf"
        case .indexInternal: "index internal"
        }
    }

    /// An index entry or separator in a readable form: its decoded key and row ID, else its length.
    static func describeIndexBytes(_ bytes: [UInt8], isEntry: Bool) -> String {
        if isEntry, let (key, row) = try? IndexKey.decodeEntry(bytes) {
            return "entry \(key.map(\.description).joined(separator: ", ")) row \(row)"
        }
        return "\(isEntry ? "entry" : "separator") of \(bytes.count) bytes"
    }

    /// Page `number`, annotated field by field (FORMAT.md §2 and §4): the store header for page 0; the page
    /// header and each cell, child, overflow chunk or root-record field for the others. A page that does
    /// not verify is annotated as far as its header reads, with the damage said.
    ///
    /// - Throws: ``StorageError/invalidArgument(_:)`` for a page past the end of the file; ``StorageError/io(_:)``.
    public func annotatedPage(_ number: UInt64) throws -> [AnnotatedSpan] {
        let wholePages = pageFileBytes / UInt64(pageSize)
        guard number < wholePages else {
            throw StorageError.invalidArgument("page \(number) is past the end of the page file (\(wholePages) pages)")
        }
        let base = pages.offset(of: number)
        let bytes: [UInt8]
        do { bytes = try pages.file.read(count: pageSize, at: base) } catch { throw StorageError.io(error) }
        var spans = SpanWriter(bytes: bytes, base: base)
        if number == 0 {
            spans.add(8, "magic \\x89STRA\\r\\n\\x1a")
            spans.add(4, "format version \(spans.u32())")
            spans.add(4, "header length \(spans.u32())")
            spans.add(4, "page size \(spans.u32())")
            spans.add(1, "checksum type \(spans.u8()) (1 = CRC-32C)")
            spans.add(3, "reserved")
            spans.add(4, "compatible features 0x\(String(spans.u32(), radix: 16))")
            spans.add(4, "read-only compatible features 0x\(String(spans.u32(), radix: 16))")
            spans.add(4, "incompatible features 0x\(String(spans.u32(), radix: 16))")
            spans.add(16, "store ID")
            spans.add(8, "reserved")
            let verifies =
                (try? bytes.withUnsafeBytes { (all) throws(FormatError) in try StoreHeader.decode(all) }) != nil
            spans.add(4, "checksum (masked CRC-32C of bytes 0..<60)" + (verifies ? "" : ": DOES NOT VERIFY"))
            spans.addRest("zero padding")
            return spans.spans
        }
        let header: PageHeader
        do {
            header = try bytes.withUnsafeBytes { (page) throws(FormatError) in
                try PageHeader.decode(page, expectedPageNumber: number, salt: self.header.checksumSalt)
            }
        } catch {
            spans.add(4, "checksum (masked CRC-32C, salted): page does not verify: \(error)")
            spans.add(1, "type \(spans.u8())")
            spans.add(1, "flags")
            spans.add(2, "item count \(spans.u16())")
            spans.add(8, "page number \(spans.u64())")
            spans.add(8, "generation \(spans.u64())")
            spans.add(4, "body length \(spans.u32())")
            spans.add(4, "extra \(spans.u32())")
            spans.addRest("body (not decoded)")
            return spans.spans
        }
        spans.add(4, "checksum (masked CRC-32C of the salt and bytes 4..<\(pageSize))")
        spans.add(1, "type \(header.type.rawValue) (\(Self.kindName(header.type)))")
        spans.add(1, "flags")
        spans.add(2, "item count \(header.itemCount)")
        spans.add(8, "page number \(header.pageNumber)")
        spans.add(8, "generation \(header.generation)")
        spans.add(4, "body length \(header.bodyLength)")
        switch header.type {
        case .leaf:
            spans.add(4, "extra 0 (leaf)")
            let isBitmap = header.flags == LeafPage.bitmapFlags
            let width = isBitmap ? 0 : Int(header.flags)
            let first = spans.u64()
            spans.add(8, "first row ID \(first)")
            var rows: [UInt64] = []
            if isBitmap {
                let length = Int(spans.u16())
                spans.add(2, "row-ID bitmap of \(length) bytes")
                for (byteIndex, byte) in spans.peek(length).enumerated() {
                    for bit in 0..<8 where byte >> bit & 1 != 0 { rows.append(first &+ UInt64(byteIndex * 8 + bit)) }
                }
                spans.add(length, "row-ID bitmap: \(rows.count) rows, bit i for row \(first) + i")
            }
            // A damaged count, width or bitmap is cut to what the body holds: a dump never traps.
            let count = min(header.itemCount, spans.remaining / (width + 2), isBitmap ? rows.count : Int.max)
            for index in 0..<count where !isBitmap {
                if width == 0 {
                    rows.append(first &+ UInt64(index))
                } else {
                    let delta =
                        width == 1
                        ? UInt64(spans.u8())
                        : width == 2 ? UInt64(spans.u16()) : width == 4 ? UInt64(spans.u32()) : spans.u64()
                    rows.append(first &+ delta)
                    spans.add(width, "row ID \(index): \(rows[index]) (first + \(delta))")
                }
            }
            var ends: [Int] = []
            for index in 0..<count {
                ends.append(Int(spans.u16()))
                spans.add(2, "value \(index) ends at data offset \(ends[index])")
            }
            let bitBytes = Array(spans.peek((count + 7) / 8))
            spans.add((count + 7) / 8, "overflow bits")
            var start = 0
            for (index, end) in ends.enumerated() {
                let length = end - start
                start = end
                guard length >= 0, spans.remaining >= length else { break }
                let overflow = index / 8 < bitBytes.count && bitBytes[index / 8] >> (index % 8) & 1 != 0
                if overflow, length == 12 {
                    spans.add(8, "row \(rows[index]): first overflow page \(spans.u64())")
                    spans.add(4, "row \(rows[index]): value length \(spans.u32())")
                } else {
                    spans.add(length, "value of row \(rows[index])")
                }
            }
        case .internal:
            spans.add(4, "extra \(header.extra) (level)")
            spans.add(8, "child 0: page \(spans.u64())")
            for index in 1..<max(1, header.itemCount) {
                guard spans.remaining >= 16 else { break }
                spans.add(8, "separator \(spans.u64())")
                spans.add(8, "child \(index): page \(spans.u64())")
            }
        case .indexLeaf:
            spans.add(4, "extra 0 (index leaf)")
            let prefixLength = min(Int(spans.u16()), max(0, spans.remaining - 2))
            spans.add(2, "prefix of \(prefixLength) bytes, shared by every entry")
            let prefix = Array(spans.peek(prefixLength))
            spans.add(prefixLength, "prefix")
            // A damaged count is cut to what the body holds: a dump never traps.
            let count = min(header.itemCount, spans.remaining / PageFormat.indexLengthSize)
            var starts: [Int] = []
            for index in 0..<count {
                starts.append(Int(spans.u16()))
                spans.add(2, "entry \(index): suffix at body offset \(starts[index])")
            }
            let ends = starts.dropFirst() + [header.bodyLength]
            for (start, end) in zip(starts, ends) {
                let length = min(max(0, end - start), spans.remaining)
                let entry = prefix + Array(spans.peek(length))
                spans.add(length, "suffix of " + Self.describeIndexBytes(entry, isEntry: true))
            }
        case .indexInternal:
            spans.add(4, "extra \(header.extra) (level)")
            let count = min(header.itemCount, spans.remaining / 10)
            for index in 0..<count { spans.add(8, "child \(index): page \(spans.u64())") }
            var starts: [Int] = []
            for index in 1..<max(1, count) {
                starts.append(Int(spans.u16()))
                spans.add(2, "separator \(index) at body offset \(starts[index - 1])")
            }
            let ends = starts.dropFirst() + [header.bodyLength]
            for (start, end) in zip(starts, ends) {
                let length = min(max(0, end - start), spans.remaining)
                spans.add(length, Self.describeIndexBytes(Array(spans.peek(length)), isEntry: false))
            }
        case .overflow:
            spans.add(4, "extra \(header.extra) (data length)")
            let next = spans.u64()
            spans.add(8, next == PageFormat.noPage ? "next: none (end of chain)" : "next page \(next)")
            spans.add(Int(header.extra), "data")
        case .rootRecord:
            spans.add(4, "extra: part \(header.extra >> 16) of \(header.extra & 0xFFFF)")
            if header.extra == 1 {
                spans.add(8, "walLSN \(spans.u64())")
                spans.add(4, "next table ID \(spans.u32())")
                let previous = spans.u64()
                spans.add(
                    8,
                    previous == PageFormat.noPage
                        ? "previous root record: none" : "previous root record at page \(previous)")
                let tables = spans.u32()
                spans.add(4, "table count \(tables)")
                for _ in 0..<tables {
                    guard spans.remaining >= 31 else { break }
                    let id = spans.u32()
                    spans.add(4, "table ID \(id)")
                    spans.add(8, "next row ID \(spans.u64())")
                    spans.add(8, "row count \(spans.u64())")
                    let root = spans.u64()
                    spans.add(8, root == PageFormat.noPage ? "root: none (empty)" : "root page \(root)")
                    spans.add(1, "height \(spans.u8())")
                    let length = Int(spans.u16())
                    spans.add(2, "name length \(length)")
                    let name = String(decoding: spans.peek(length), as: UTF8.self)
                    spans.add(length, "name '\(name)'")
                }
            } else {
                spans.add(header.bodyLength, "root record payload part")
            }
        }
        let end = PageFormat.headerSize + header.bodyLength
        if spans.position < end { spans.add(end - spans.position, "rest of the body") }
        spans.addRest("zero padding")
        return spans.spans
    }

    /// The log, annotated: its header, then each valid record's header fields and operations (FORMAT.md §3),
    /// and where and why reading stopped.
    public func annotatedLog() throws -> [AnnotatedSpan] {
        let path = StoreFileNames.path(directory, StoreFileNames.wal)
        let file: any FileHandle
        do { file = try fileSystem.openFileForReading(at: path) } catch { throw StorageError.io(error) }
        defer { try? file.close() }
        let size: UInt64
        let headerBytes: [UInt8]
        do {
            size = try file.size()
            headerBytes = try file.read(count: WALFormat.fileHeaderSize, at: 0)
        } catch { throw StorageError.io(error) }
        var spans = SpanWriter(bytes: headerBytes, base: 0)
        spans.add(8, "magic \\x89SWAL\\r\\n\\x1a")
        spans.add(4, "version \(spans.u32())")
        spans.add(4, "header length \(spans.u32())")
        spans.add(16, "store ID")
        spans.add(8, "start LSN \(spans.u64())")
        spans.add(4, "salt 0x\(String(spans.u32(), radix: 16))")
        spans.add(4, "checksum (masked CRC-32C of bytes 0..<44)")
        var result = spans.spans
        let summary = try WALReader(file: file).read { header, payload, offset in
            var record = SpanWriter(bytes: [], base: offset)
            record.annotate(
                4, "LSN \(header.lsn): checksum (masked CRC-32C of the salt and the record)",
                uint32: header.storedChecksum)
            record.annotate(4, "payload length \(payload.count)", uint32: UInt32(payload.count))
            record.annotate(
                1, "type \(header.type.rawValue) (\(header.type == .commit ? "commit" : "operations"))",
                byte: header.type.rawValue)
            record.annotate(3, "flags, reserved", zeros: 3)
            record.annotate(8, "LSN \(header.lsn)", uint64: header.lsn)
            result += record.spans
            var body = SpanWriter(bytes: Array(payload), base: offset + UInt64(WALFormat.recordHeaderSize))
            if header.type == .commit {
                body.add(4, "operation records \(body.u32())")
                body.add(8, "operations \(body.u64())")
            } else {
                var reader = ByteReader(payload)
                while reader.remaining > 0 {
                    let start = reader.readerIndex
                    guard let operation = try? WALOperation.decode(from: &reader) else {
                        body.addRest("undecodable operations")
                        break
                    }
                    body.add(reader.readerIndex - start, operation.summary)
                }
            }
            result += body.spans
        }
        if let reason = summary.stopReason {
            result.append(
                AnnotatedSpan(
                    offset: summary.validEnd, bytes: [],
                    note: "the log does not read past here (\(size - summary.validEnd) bytes): \(reason)"))
        } else if summary.reservedBytes > 0 {
            result.append(
                AnnotatedSpan(
                    offset: summary.validEnd, bytes: [],
                    note: "reserved space: \(summary.reservedBytes) zero bytes written ahead for later records"))
        }
        return result
    }

    /// Reads `bytes` as a row record (FORMAT.md §6), if they are one.
    public static func describeRow(_ bytes: [UInt8]) -> RowDescription? {
        guard let (header, fields) = try? RowRecord.decodeAll(bytes) else { return nil }
        return RowDescription(
            entityID: header.entityID, rowVersion: header.rowVersion, fields: fields.map(\.description))
    }
}

/// Cuts a structure's bytes into annotated spans, front to back.
struct SpanWriter {
    let bytes: [UInt8]
    let base: UInt64
    private(set) var position = 0
    private(set) var spans: [AnnotatedSpan] = []

    init(bytes: [UInt8], base: UInt64) {
        self.bytes = bytes
        self.base = base
    }

    var remaining: Int { bytes.count - position }

    func peek(_ count: Int) -> ArraySlice<UInt8> {
        bytes[position..<min(bytes.count, position + max(0, count))]
    }

    private func little(_ count: Int) -> UInt64 {
        peek(count).reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }

    func u8() -> UInt8 { UInt8(little(1)) }
    func u16() -> UInt16 { UInt16(little(2)) }
    func u32() -> UInt32 { UInt32(little(4)) }
    func u64() -> UInt64 { little(8) }

    mutating func add(_ count: Int, _ note: String) {
        let taken = Array(peek(count))
        spans.append(AnnotatedSpan(offset: base + UInt64(position), bytes: taken, note: note))
        position += taken.count
    }

    mutating func addRest(_ note: String) {
        guard remaining > 0 else { return }
        if bytes[position...].allSatisfy({ $0 == 0 }), note == "zero padding" {
            spans.append(
                AnnotatedSpan(offset: base + UInt64(position), bytes: [], note: "\(remaining) bytes of zero padding"))
            position = bytes.count
            return
        }
        add(remaining, note)
    }

    /// Annotates bytes not in `bytes` (a record header already decoded), re-encoded little-endian.
    mutating func annotate(_ count: Int, _ note: String, uint32 value: UInt32) {
        appendEncoded((0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }, note)
    }

    mutating func annotate(_ count: Int, _ note: String, uint64 value: UInt64) {
        appendEncoded((0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }, note)
    }

    mutating func annotate(_ count: Int, _ note: String, byte value: UInt8) { appendEncoded([value], note) }

    mutating func annotate(_ count: Int, _ note: String, zeros: Int) {
        appendEncoded(Array(repeating: 0, count: zeros), note)
    }

    private mutating func appendEncoded(_ encoded: [UInt8], _ note: String) {
        spans.append(AnnotatedSpan(offset: base + UInt64(position), bytes: encoded, note: note))
        position += encoded.count
    }
}
