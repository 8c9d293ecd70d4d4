import StrataFormat

/// FuzzPage: one page image through the page decoders.
///
/// Input: `sizeSelector:u8 mode:u8 salt:u64 pageNumber:u64` then the page's bytes, cut or zero-padded to the
/// page size `512 << (sizeSelector % 8)` (512 ... 65536). Mode bit 0 re-checksums the page with `salt`; mode
/// bit 1 reads the header with `PageHeader.read`, as a page mapped and verified before is read again (FORMAT.md
/// §4.10), so that no checksum stands in the way. `PageHeader.decode` (or `read`) first; then the decoder of the
/// page's type: `LeafPage.decode`, `InternalPage.decode`, `OverflowPage.decode`, `IndexLeafPage.decode`,
/// `IndexInternalPage.decode`, or `RootRecord.part` and `RootRecord.decode` (the body of a one-part record as the
/// whole payload; any body as a payload too).
///
/// Checks: nothing traps; every decoded page satisfies the documented invariants, and encoding what was
/// decoded gives a page that decodes to the same value (decode(encode(x)) == x) and, when the original
/// page's padding was zero, the very same bytes. For the tree pages (format version 2), ``PageViewChecks``:
/// `validate` accepts exactly what FORMAT.md allows, `decode` exactly what `validate` accepts, and the in-place
/// views agree with the decoded arrays entry by entry and in every search.
public func fuzzPage(_ data: UnsafeRawBufferPointer) {
    var input = FuzzInput(data)
    let pageSize = 512 << Int(input.byte() % 8)
    let mode = input.byte()
    let salt = input.uint64()
    let pageNumber = input.uint64()
    var page = input.bytes(pageSize)
    page += [UInt8](repeating: 0, count: pageSize - page.count)
    if mode & 1 != 0 { Reseal.page(&page, at: 0, size: pageSize, salt: salt) }
    page.withUnsafeBytes { checkPage($0, pageNumber: pageNumber, salt: salt, verifyChecksum: mode & 2 == 0) }
}

func checkPage(_ page: UnsafeRawBufferPointer, pageNumber: UInt64, salt: UInt64, verifyChecksum: Bool = true) {
    // Any body is also fed to the root-record payload decoder: it is the one decoder of a concatenation.
    if page.count > PageFormat.headerSize {
        _ = try? RootRecord.decode(
            UnsafeRawBufferPointer(rebasing: page[PageFormat.headerSize...]), firstPage: pageNumber)
    }
    let header: PageHeader
    do {
        header =
            verifyChecksum
            ? try PageHeader.decode(page, expectedPageNumber: pageNumber, salt: salt)
            : try PageHeader.read(page, expectedPageNumber: pageNumber)
    } catch { return }
    fuzzCheck(header.pageNumber == pageNumber, "page number")
    fuzzCheck(header.bodyLength <= page.count - PageFormat.headerSize, "body longer than the page")
    var views = PageViewChecks(page: page, header: header, seed: salt ^ pageNumber)
    views.run()
    let paddingIsZero = page[(PageFormat.headerSize + header.bodyLength)...].allSatisfy { $0 == 0 }
    var fresh = [UInt8](repeating: 0, count: page.count)
    switch header.type {
    case .leaf:
        guard let leaf = try? LeafPage.decode(page, header: header) else { return }
        fuzzCheck(leaf.keys.count == header.itemCount && leaf.values.count == header.itemCount, "leaf cell count")
        fuzzCheck(zip(leaf.keys, leaf.keys.dropFirst()).allSatisfy { $0 < $1 }, "leaf keys not increasing")
        fresh.withUnsafeMutableBytes {
            LeafPage.encode(
                keys: leaf.keys, values: leaf.values, into: $0, pageNumber: pageNumber, generation: header.generation,
                salt: salt)
        }
        let again = fresh.withUnsafeBytes { bytes in
            (try? PageHeader.decode(bytes, expectedPageNumber: pageNumber, salt: salt)).flatMap {
                try? LeafPage.decode(bytes, header: $0)
            }
        }
        fuzzCheck(again?.keys == leaf.keys && again?.values == leaf.values, "leaf does not round-trip")
    case .internal:
        guard let node = try? InternalPage.decode(page, header: header) else { return }
        fuzzCheck(node.children.count >= 2 && node.keys.count == node.children.count, "internal child count")
        fuzzCheck(node.children.allSatisfy { $0 >= 1 && $0 < pageNumber }, "internal child after its parent")
        fresh.withUnsafeMutableBytes {
            InternalPage.encode(
                level: node.level, keys: node.keys, children: node.children, into: $0, pageNumber: pageNumber,
                generation: header.generation, salt: salt)
        }
        let again = fresh.withUnsafeBytes { bytes in
            (try? PageHeader.decode(bytes, expectedPageNumber: pageNumber, salt: salt)).flatMap {
                try? InternalPage.decode(bytes, header: $0)
            }
        }
        fuzzCheck(
            again?.level == node.level && again?.keys == node.keys && again?.children == node.children,
            "internal page does not round-trip")
    case .overflow:
        guard let overflow = try? OverflowPage.decode(page, header: header) else { return }
        let data = Array(overflow.data)
        fuzzCheck(
            !data.isEmpty && data.count <= PageFormat.overflowCapacity(pageSize: page.count), "overflow data length")
        fresh.withUnsafeMutableBytes { destination in
            data.withUnsafeBytes {
                OverflowPage.encode(
                    data: $0, next: overflow.next, into: destination, pageNumber: pageNumber,
                    generation: header.generation,
                    salt: salt)
            }
        }
        let again = fresh.withUnsafeBytes { bytes in
            (try? PageHeader.decode(bytes, expectedPageNumber: pageNumber, salt: salt)).flatMap {
                (try? OverflowPage.decode(bytes, header: $0)).map { ($0.next, Array($0.data)) }
            }
        }
        fuzzCheck(again?.0 == overflow.next && again?.1 == data, "overflow page does not round-trip")
    case .indexLeaf:
        guard let entries = try? IndexLeafPage.decode(page, header: header) else { return }
        fuzzCheck(!entries.isEmpty && entries.count == header.itemCount, "index leaf entry count")
        fuzzCheck(
            zip(entries, entries.dropFirst()).allSatisfy { IndexKey.compare($0, $1) < 0 },
            "index entries not increasing")
        for entry in entries { checkIndexEntry(entry) }
        fresh.withUnsafeMutableBytes {
            IndexLeafPage.encode(
                entries: entries, into: $0, pageNumber: pageNumber, generation: header.generation, salt: salt)
        }
        let again = fresh.withUnsafeBytes { bytes in
            (try? PageHeader.decode(bytes, expectedPageNumber: pageNumber, salt: salt)).flatMap {
                try? IndexLeafPage.decode(bytes, header: $0)
            }
        }
        fuzzCheck(again == entries, "index leaf does not round-trip")
    case .indexInternal:
        guard let node = try? IndexInternalPage.decode(page, header: header) else { return }
        fuzzCheck(node.children.count >= 2 && node.keys.count == node.children.count, "index internal child count")
        fuzzCheck(node.children.allSatisfy { $0 >= 1 && $0 < pageNumber }, "index child after its parent")
        fresh.withUnsafeMutableBytes {
            IndexInternalPage.encode(
                level: node.level, keys: node.keys, children: node.children, into: $0, pageNumber: pageNumber,
                generation: header.generation, salt: salt)
        }
        let again = fresh.withUnsafeBytes { bytes in
            (try? PageHeader.decode(bytes, expectedPageNumber: pageNumber, salt: salt)).flatMap {
                try? IndexInternalPage.decode(bytes, header: $0)
            }
        }
        fuzzCheck(
            again?.level == node.level && again?.keys == node.keys && again?.children == node.children,
            "index internal page does not round-trip")
    case .rootRecord:
        guard let part = try? RootRecord.part(of: header) else { return }
        fuzzCheck(part.count >= 1 && part.index < part.count, "root record part")
        guard part.count == 1, let record = try? RootRecord.decode(header.body(of: page), firstPage: pageNumber) else {
            return
        }
        let payload = record.encodedPayload()
        fuzzCheck(payload.elementsEqual(header.body(of: page)), "root record does not encode back to its bytes")
        for table in record.tables {
            fuzzCheck(
                table.tableID < record.nextTableID && table.height <= PageFormat.maximumTreeHeight, "root record table")
        }
        fresh.withUnsafeMutableBytes {
            RootRecord.encodePart(
                payload, index: 0, count: 1, into: $0, pageNumber: pageNumber, generation: header.generation, salt: salt
            )
        }
        let again = fresh.withUnsafeBytes { bytes in
            (try? PageHeader.decode(bytes, expectedPageNumber: pageNumber, salt: salt)).flatMap {
                try? RootRecord.decode($0.body(of: bytes), firstPage: pageNumber)
            }
        }
        fuzzCheck(again == record, "root record does not round-trip")
    }
    // Overflow and root-record pages do not check their item count (the format says 0), so only a page
    // with 0 there can re-encode to its own bytes.
    let counted: Set<PageType> = [.leaf, .internal, .indexLeaf, .indexInternal]
    if paddingIsZero, counted.contains(header.type) || header.itemCount == 0 {
        let start = verifyChecksum ? 0 : 4  // the checksum of a page read without verifying it may be anything
        fuzzCheck(fresh[start...].elementsEqual(page[start...]), "\(header.type) page re-encodes to other bytes")
    }
}
