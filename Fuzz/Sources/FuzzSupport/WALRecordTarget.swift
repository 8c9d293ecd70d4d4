import StrataFormat

/// FuzzWALRecord: a whole WAL file image through every WAL decoder.
///
/// Input: `mode:u8` then the file's bytes. Mode bit 0 re-checksums every record (walked by its length field),
/// bit 1 the file header, so that mutations reach the payload decoders; bit 2 reseals the first 32 bytes as a commit
/// notice (FORMAT.md §11.2), which ``checkCommitNotice(_:resealed:)`` decodes apart from the log. For every record that decodes:
/// `WALRecord.decodeHeader`, `verify`, then `WALOperation.decodeAll` (operations) or `WALCommit.decode`
/// (commit), each operation also one by one with `WALOperation.decode(from:)` and all of them with recovery's
/// `decodeAll(_:lendingPuts:_:)`.
///
/// Checks: nothing traps; a decoded header, operation, commit or verified record encodes back to exactly the
/// bytes it was decoded from.
public func fuzzWALRecord(_ data: UnsafeRawBufferPointer) {
    guard let mode = data.first else { return }
    var file = Array(data.dropFirst())
    if mode & 2 != 0 { Reseal.fileHeader48(&file) }
    let headerSalt = Reseal.walSalt(file) ?? 0
    if mode & 1 != 0 { Reseal.walRecords(&file, from: min(file.count, WALFormat.fileHeaderSize), salt: headerSalt) }
    file.withUnsafeBytes { bytes in checkWALFile(bytes, headerSalt: headerSalt) }
    checkCommitNotice(file, resealed: mode & 4 != 0)
}

/// The commit notice beside the log (FORMAT.md §11.2): the input's first 32 bytes read as one (resealed, with the
/// magic and a valid checksum, when asked, so that the fields themselves are fuzzed). A notice that decodes must
/// encode back to its bytes; anything else must decode to nil, never trap.
func checkCommitNotice(_ input: [UInt8], resealed: Bool) {
    var bytes = Array(input.prefix(CommitNotice.size))
    if resealed, bytes.count == CommitNotice.size {
        bytes.replaceSubrange(0..<4, with: CommitNotice.magic)
        let crc = CRC32C.mask(CRC32C.checksum(Array(bytes[0..<(CommitNotice.size - 4)])))
        bytes.replaceSubrange(
            (CommitNotice.size - 4)..., with: (0..<4).map { UInt8(truncatingIfNeeded: crc >> (8 * $0)) })
    }
    guard let notice = CommitNotice.decode(bytes) else {
        fuzzCheck(!resealed || bytes.count < CommitNotice.size, "a resealed commit notice did not decode")
        return
    }
    fuzzCheck(notice.encoded() == bytes, "commit notice does not encode back to its bytes")
}

func checkWALFile(_ bytes: UnsafeRawBufferPointer, headerSalt: UInt32) {
    var offset = 0
    var salt = headerSalt
    if let header = try? WALFileHeader.decode(bytes) {
        let encoded = header.encoded()
        fuzzCheck(
            encoded.elementsEqual(bytes.prefix(WALFormat.fileHeaderSize)),
            "WAL header does not encode back to its bytes")
        fuzzCheck(header.startLSN >= 1 && header.storeID.count == 16, "WAL header fields out of range: \(header)")
        salt = header.salt
        offset = WALFormat.fileHeaderSize
    }
    var records = 0
    while offset < bytes.count, records < 10_000 {
        let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
        guard let header = try? WALRecord.decodeHeader(rest) else { return }
        fuzzCheck(
            header.payloadLength >= 0 && header.payloadLength <= WALFormat.maximumPayloadSize,
            "payload length \(header.payloadLength)")
        let total = WALFormat.recordHeaderSize + header.payloadLength
        let verified = (try? WALRecord.verify(header: header, recordBytes: rest, salt: salt)) != nil
        guard total <= rest.count else {
            fuzzCheck(!verified, "a record longer than its bytes verified")
            return
        }
        let payload = UnsafeRawBufferPointer(rebasing: rest[WALFormat.recordHeaderSize..<total])
        if verified {
            var writer = ByteWriter()
            WALRecord.append(type: header.type, lsn: header.lsn, payload: payload, salt: salt, to: &writer)
            fuzzCheck(
                writer.bytes.elementsEqual(rest.prefix(total)), "verified record does not encode back to its bytes")
        }
        switch header.type {
        case .operations: checkOperations(payload)
        case .commit:
            if let commit = try? WALCommit.decode(payload) {
                fuzzCheck(commit.encoded().elementsEqual(payload), "commit does not encode back to its bytes")
            } else {
                fuzzCheck(payload.count != WALCommit.encodedSize, "a 12-byte commit payload did not decode")
            }
        }
        offset += total
        records += 1
    }
}

/// Decodes an operations payload both ways and checks that each operation re-encodes to its own bytes.
func checkOperations(_ payload: UnsafeRawBufferPointer) {
    var all: [WALOperation] = []
    let failedAll = (try? WALOperation.decodeAll(payload) { all.append($0) }) == nil
    var reader = ByteReader(payload)
    var one: [WALOperation] = []
    var failedOne = false
    while reader.remaining > 0 {
        let start = reader.readerIndex
        do {
            let operation = try WALOperation.decode(from: &reader)
            var writer = ByteWriter()
            operation.encode(into: &writer)
            fuzzCheck(
                writer.bytes.elementsEqual(payload[start..<reader.readerIndex]),
                "operation \(operation) does not encode back to its bytes")
            switch operation {
            case .createTable(_, let name):
                fuzzCheck(!name.isEmpty && name.utf8.count <= WALFormat.maximumTableNameLength, "table name length")
            case .put(_, _, let value):
                fuzzCheck(value.count <= WALFormat.maximumValueSize, "value length")
            default: break
            }
            one.append(operation)
        } catch {
            failedOne = true
            break
        }
    }
    fuzzCheck(failedAll == failedOne && all == one, "decodeAll and decode(from:) disagree")
    checkLendingDecode(payload, expected: failedAll ? nil : all)
    checkRunScan(payload, expected: failedAll ? nil : all)
}

/// Recovery's decode (`decodeAll(_:lendingPuts:_:)`) must read the same operations as `decodeAll`, and fail where it
/// fails: once taking every other put where it lies (copied here to compare), once declining them all (they then
/// come to the body as operations).
func checkLendingDecode(_ payload: UnsafeRawBufferPointer, expected: [WALOperation]?) {
    for takesEveryOther in [true, false] {
        var read: [WALOperation] = []
        var puts = 0
        let failed =
            (try? WALOperation.decodeAll(
                payload,
                lendingPuts: { tableID, rowID, value in
                    puts += 1
                    guard takesEveryOther, puts % 2 == 1 else { return false }
                    read.append(.put(tableID: tableID, rowID: rowID, value: Array(value)))
                    return true
                }, { read.append($0) })) == nil
        fuzzCheck(failed == (expected == nil), "decodeAll(lendingPuts:) fails where decodeAll does not, or the reverse")
        if let expected { fuzzCheck(read == expected, "decodeAll(lendingPuts:) reads other operations than decodeAll") }
    }
}

/// Recovery's in-place read (`scanPutRun(_:table:after:)` at each put, `decodeNext(from:lendingPuts:_:)` for anything
/// else) must read the same operations as `decodeAll`, and fail where it fails: each run found is a span of puts into
/// its table whose row IDs increase from above that table's last run, as the run says.
func checkRunScan(_ payload: UnsafeRawBufferPointer, expected: [WALOperation]?) {
    var read: [WALOperation] = []
    var lastRows: [UInt32: UInt64] = [:]
    var reader = ByteReader(payload)
    var failed = false
    while reader.remaining > 0, !failed {
        let start = reader.readerIndex
        if let table = WALOperation.putTableID(at: reader),
            let run = WALOperation.scanPutRun(&reader, table: table, after: lastRows[table])
        {
            var span = ByteReader(UnsafeRawBufferPointer(rebasing: payload[..<reader.readerIndex]), readerIndex: start)
            var rows: [UInt64] = []
            var starts: [Int] = []
            while span.remaining > 0 {
                guard let operation = try? WALOperation.decode(from: &span),
                    case .put(let id, let row, let value) = operation, id == table
                else {
                    fuzzCheck(false, "a put run holds what is not a put into its table")
                    return
                }
                rows.append(row)
                starts.append(span.readerIndex - value.count)
                read.append(operation)
            }
            fuzzCheck(
                rows.count == run.count && rows.first == run.firstRowID && rows.last == run.lastRowID
                    && starts.first == run.firstValueStart && starts.last == run.lastValueStart,
                "a put run describes other puts than it spans")
            fuzzCheck(zip(rows, rows.dropFirst()).allSatisfy { $0 < $1 }, "a put run's row IDs do not increase")
            fuzzCheck(lastRows[table].map { rows[0] > $0 } ?? true, "a put run starts below its table's last row ID")
            lastRows[table] = run.lastRowID
            continue
        }
        fuzzCheck(reader.readerIndex == start, "a put run that was not found moved the reader")
        do {
            try WALOperation.decodeNext(from: &reader, lendingPuts: { _, _, _ in false }, { read.append($0) })
        } catch { failed = true }
    }
    fuzzCheck(failed == (expected == nil), "reading by put runs fails where decodeAll does not, or the reverse")
    if let expected { fuzzCheck(read == expected, "reading by put runs reads other operations than decodeAll") }
}
