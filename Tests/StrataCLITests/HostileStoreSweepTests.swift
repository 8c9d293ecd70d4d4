import Foundation
import StrataFormat
import StrataStorage
import StrataTestSupport
import Testing

/// Damaged copies of one small store (a checkpointed table with overflow chains, blobs, commits only the log
/// holds), each run through `strata fsck`, `info`, `dump` and `compact` with `--json`: truncations, runs of
/// overwritten bytes, zeroed pages, huge length fields whose checksums are recomputed (so only structural
/// checks can reject them), deleted files and unexpected ones. For every variant and command: no crash and no
/// hang (a subprocess with a deadline), an exit code of fsck(8), JSON that parses; where the damage is sure to
/// hit data, a non-zero fsck; and wherever fsck calls a variant clean, `dump` prints exactly the original's
/// rows and blobs (a clean verdict never hides changed data). Deterministic (fixed offsets and a seeded
/// generator, printed on failure) and a few seconds long.
@Suite(.serialized) struct HostileStoreSweepTests {
    typealias Tool = StrataToolTests
    typealias Run = ToolRunner

    /// One damaged copy: its name, what to do to the copy, and whether fsck must find a problem.
    struct Variant {
        var name: String
        var mustFail: Bool
        var damage: (String) throws -> Void
    }

    static let seed: UInt64 = 23

    static func variants(pageCount: UInt64, leafPage: UInt64, walRecordsEnd: UInt64, segmentSize: UInt64) -> [Variant] {
        var variants: [Variant] = []
        var random = RepeatableRandomNumberGenerator(seed: seed)
        func add(_ name: String, mustFail: Bool = false, _ damage: @escaping (String) throws -> Void) {
            variants.append(Variant(name: name, mustFail: mustFail, damage: damage))
        }
        func truncate(_ path: String, to size: UInt64) throws {
            let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
            try handle.truncate(atOffset: size)
            try handle.close()
        }
        let pageBytes = pageCount * 4096

        // Truncations.
        for size: UInt64 in [0, 4096, pageBytes / 2, pageBytes - 1, pageBytes - 4096] {
            add("strata.pages cut to \(size) bytes", mustFail: true) { try truncate(Tool.pages($0), to: size) }
        }
        for size: UInt64 in [0, 47, 48 + 10, walRecordsEnd - 1] {
            add("strata.wal cut to \(size) bytes", mustFail: true) { try truncate(Tool.wal($0), to: size) }
        }
        for size: UInt64 in [0, 40, segmentSize / 2] {
            add("blob-000001.seg cut to \(size) bytes", mustFail: true) { try truncate(Tool.segment($0), to: size) }
        }

        // Runs of overwritten bytes (pages after the header page: every byte of those is checksummed).
        for _ in 0..<4 {
            let offset = 4096 + random.next() % (pageBytes - 4096 - 16)
            let fill = UInt8(truncatingIfNeeded: random.next())
            add("strata.pages: 16 bytes at \(offset) set to \(fill)", mustFail: true) {
                try Run.overwrite(Tool.pages($0), at: offset, with: [UInt8](repeating: fill, count: 16))
            }
        }
        for _ in 0..<2 {
            let offset = random.next() % (walRecordsEnd - 8)
            add("strata.wal: 8 bytes at \(offset) set to 0xFF") {
                try Run.overwrite(Tool.wal($0), at: offset, with: [UInt8](repeating: 0xFF, count: 8))
            }
        }
        for _ in 0..<2 {
            let offset = random.next() % (segmentSize - 8)
            add("blob-000001.seg: 8 bytes at \(offset) set to 0xA5") {
                try Run.overwrite(Tool.segment($0), at: offset, with: [UInt8](repeating: 0xA5, count: 8))
            }
        }

        // Zeroed pages (one checkpoint wrote them all: every page is reachable).
        for page in Set([0, 1, 2, leafPage, pageCount / 2, pageCount - 2, pageCount - 1]).sorted() {
            add("page \(page) zeroed", mustFail: true) {
                try Run.overwrite(Tool.pages($0), at: page * 4096, with: [UInt8](repeating: 0, count: 4096))
            }
        }

        // Huge length and count fields, page checksums recomputed (FORMAT.md §4.1).
        for (page, field, value) in [
            (leafPage, 24, UInt32(0xFFFF_FFF0)), (leafPage, 6, 0xFFFF), (leafPage, 28, 0xFFFF_FFFF),
            (pageCount - 1, 24, 0xFFFF_FFF0), (pageCount - 1, 28, 0xFFFF_FFFF), (pageCount / 2, 28, 0x7FFF_FFFF),
        ] {
            add("page \(page): field at \(field) set to \(value), resealed", mustFail: true) {
                let width = field == 6 ? 2 : 4
                let bytes = (0..<width).map { UInt8(truncatingIfNeeded: value >> (8 * UInt32($0))) }
                try Run.overwrite(Tool.pages($0), at: page * 4096 + UInt64(field), with: bytes)
                try Run.resealPage(page, in: Tool.pages($0))
            }
        }
        // A log record's inner length (a put's valueLength, or a commit's count) set huge, its checksum
        // recomputed; and a record's own payload length set huge (no checksum can cover that).
        for which in [0, 1] {
            add("strata.wal: record \(which)'s payload bytes 9..<17 set huge, checksum recomputed", mustFail: true) {
                var bytes = try Run.bytes(Tool.wal($0))
                let layout = try WALLayout(bytes)
                let record = layout.records[which]
                let start = Int(record.offset) + WALFormat.recordHeaderSize + 9
                for index in start..<min(start + 8, Int(record.end)) { bytes[index] = 0xFF }
                WALLayout.recomputeChecksum(ofRecordAt: Int(record.offset), in: &bytes, salt: layout.header.salt)
                try Data(bytes).write(to: URL(fileURLWithPath: Tool.wal($0)))
            }
        }
        add("strata.wal: the first record's payload length set to 2^31", mustFail: true) {
            try Run.overwrite(Tool.wal($0), at: 48 + 4, with: [0, 0, 0, 0x80])
        }
        // A blob chunk record's raw length set huge, its checksum recomputed (FORMAT.md §5.2).
        add("blob-000001.seg: blob 2's record's rawLength set huge, checksum recomputed", mustFail: true) {
            var bytes = try Run.bytes(Tool.segment($0))
            // After the header and blob 1's record (deleted: dead bytes), 1,000 random bytes stored raw.
            let record = 48 + 28 + 1_000
            for index in 0..<4 { bytes[record + 20 + index] = 0xFF }
            let stored = bytes.withUnsafeBytes {
                Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: record + 24, as: UInt32.self)))
            }
            let header = try Run.bytes(Tool.pages($0)).withUnsafeBytes { buffer in
                try Result { () throws(FormatError) in try StoreHeader.decode(buffer) }.get()
            }
            let crc = CRC32C.checksum(
                Array(bytes[(record + 4)..<(record + 28 + stored)]),
                continuing: CRC32C.checksum(of: header.checksumSalt))
            let masked = CRC32C.mask(crc)
            for index in 0..<4 { bytes[record + index] = UInt8(truncatingIfNeeded: masked >> (8 * UInt32(index))) }
            try Data(bytes).write(to: URL(fileURLWithPath: Tool.segment($0)))
        }

        // Deleted files.
        for name in ["strata.pages", "strata.wal", "blob-000001.seg"] {
            add("\(name) deleted", mustFail: true) { try FileManager.default.removeItem(atPath: $0 + "/" + name) }
        }
        add("strata.lock deleted") { try FileManager.default.removeItem(atPath: $0 + "/strata.lock") }

        // Unexpected files.
        for name in ["strata.pages.compact", "strata.wal.tmp", "strata.pages.tmp", "blob-000099.seg", "README"] {
            add("unexpected \(name)") { directory in
                var generator = RepeatableRandomNumberGenerator(seed: seed)
                try Data(generator.bytes(5_000)).write(to: URL(fileURLWithPath: directory + "/" + name))
            }
        }
        add("a directory named blob-000002.seg") {
            try FileManager.default.createDirectory(atPath: $0 + "/blob-000002.seg", withIntermediateDirectories: false)
        }
        return variants
    }

    /// Runs `strata` with `arguments` and checks what every run must: no hang, no crash, an fsck(8) exit code.
    static func checkedRun(_ arguments: [String], variant: String) throws -> Run.Outcome {
        let run = try Run.run(try Tool.locateTool(), arguments, timeout: 30)
        #expect(!run.timedOut, "seed \(seed), \(variant), \(arguments): hung: \(run)")
        #expect(!run.signaled, "seed \(seed), \(variant), \(arguments): crashed: \(run)")
        #expect([0, 1, 4, 8].contains(run.status), "seed \(seed), \(variant), \(arguments): \(run)")
        return run
    }

    @Test func everyDamagedCopyIsReportedWithoutCrashOrHangAndWithJSON() throws {
        try TemporaryStore.withPosixDirectory { root in
            let original = root + "/original"
            try Issue23Tests.makeStore(original, rows: 300, commits: 3)
            let baseline = try Run.strata("dump", original)
            #expect(baseline.status == 0, "\(baseline)")
            let pageCount = try Issue23Tests.fileSize(Tool.pages(original)) / 4096
            let variants = Self.variants(
                pageCount: pageCount, leafPage: try Tool.leafPage(original),
                // The end of the log's records (reserved space follows them, FORMAT.md §3.3): a cut one byte short
                // of it tears the last commit.
                walRecordsEnd: try WALLayout(Array(Data(contentsOf: URL(fileURLWithPath: Tool.wal(original)))))
                    .recordsEnd,
                segmentSize: try Issue23Tests.fileSize(Tool.segment(original)))
            for (number, variant) in variants.enumerated() {
                let copy = root + "/variant-\(number)"
                try FileManager.default.copyItem(atPath: original, toPath: copy)
                try variant.damage(copy)
                let name = "variant \(number) (\(variant.name))"

                let fsck = try Self.checkedRun(["fsck", copy, "--json"], variant: name)
                _ = try? fsck.json()
                #expect((try? fsck.json()) != nil, "\(name): fsck --json is not JSON: \(fsck)")
                if variant.mustFail { #expect(fsck.status != 0, "\(name): the damage went unnoticed: \(fsck)") }
                let info = try Self.checkedRun(["info", copy, "--json"], variant: name)
                #expect((try? info.json()) != nil, "\(name): info --json is not JSON: \(info)")
                #expect((fsck.status == 0) == (info.status == 0) || fsck.status == 4, "\(name): \(fsck)\n\(info)")
                let dump = try Self.checkedRun(["dump", copy, "--json"], variant: name)
                #expect((try? dump.jsonLines()) != nil, "\(name): dump --json is not JSON Lines: \(dump)")
                if fsck.status == 0 {
                    let plain = try Self.checkedRun(["dump", copy], variant: name)
                    #expect(plain.status == 0, "\(name): fsck is clean but dump is not: \(plain)")
                    #expect(
                        plain.standardOutput == baseline.standardOutput,
                        "\(name): fsck called the store clean but its data changed")
                } else {
                    #expect(dump.status != 0, "\(name): fsck found problems but dump exited 0: \(dump)")
                }
                let compact = try Self.checkedRun(["compact", copy, "--json"], variant: name)
                #expect((try? compact.json()) != nil, "\(name): compact --json is not JSON: \(compact)")
                if fsck.status == 4, compact.status == 0 {
                    // Only what recovery or an index rebuild fixes lets a compaction through.
                    let problems = (try? fsck.json()["report"] as? [String: Any])?["problems"] as? [[String: Any]]
                    #expect(
                        problems?.allSatisfy { $0["remedy"] != nil } == true,
                        "\(name): compact went through damage fsck calls unrepairable: \(fsck)")
                }
                try? FileManager.default.removeItem(atPath: copy)
            }
        }
    }
}
