import Foundation
import StrataStorage
import StrataTestSupport
import Testing

/// The `strata` tool run as a subprocess, as an operator runs it: `fsck` on healthy and damaged stores
/// (each kind of damage named, with its file and offset in `--json`), `--repair` and `--salvage` doing what
/// they claim, `compact` reclaiming space with the data unchanged (`dump` before and after) and refusing a
/// store another process has open, and the exit codes of fsck(8).
@Suite(.serialized) struct StrataToolTests {
    // MARK: - Running the tool

    struct Run: CustomStringConvertible {
        var status: Int32
        var standardOutput: String
        var standardError: String

        var description: String {
            "exit \(status)\nstdout: \(standardOutput.prefix(3000))\nstderr: \(standardError.prefix(2000))"
        }

        /// The standard output as JSON.
        func json() throws -> [String: Any] {
            let object = try JSONSerialization.jsonObject(with: Data(standardOutput.utf8))
            guard let dictionary = object as? [String: Any] else {
                throw ToolNotFound(description: "not a JSON object")
            }
            return dictionary
        }
    }

    struct ToolNotFound: Error, CustomStringConvertible {
        var description: String
    }

    /// The `strata` binary: `STRATA_BINARY`, or next to the test bundle (SwiftPM builds it: this target
    /// depends on it).
    static func locateTool() throws -> String {
        if let path = ProcessInfo.processInfo.environment["STRATA_BINARY"] { return path }
        let starts = [URL(fileURLWithPath: CommandLine.arguments[0]), Bundle.main.executableURL, Bundle.main.bundleURL]
            .compactMap { $0?.resolvingSymlinksInPath() }
        for start in starts {
            var directory = start.deletingLastPathComponent()
            for _ in 0..<4 {
                let candidate = directory.appendingPathComponent("strata").path
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: candidate, isDirectory: &isDirectory), !isDirectory.boolValue,
                    FileManager.default.isExecutableFile(atPath: candidate)
                {
                    return candidate
                }
                directory = directory.deletingLastPathComponent()
            }
        }
        throw ToolNotFound(description: "strata not found next to the test binary; build it or set STRATA_BINARY")
    }

    @discardableResult
    static func strata(_ arguments: String...) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try locateTool())
        process.arguments = arguments
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("strata-tool-\(UUID().uuidString)")
        let out = scratch.appendingPathExtension("out")
        let err = scratch.appendingPathExtension("err")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        defer {
            try? FileManager.default.removeItem(at: out)
            try? FileManager.default.removeItem(at: err)
        }
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        try process.run()
        process.waitUntilExit()
        return Run(
            status: process.terminationStatus,
            standardOutput: String(decoding: try Data(contentsOf: out), as: UTF8.self),
            standardError: String(decoding: try Data(contentsOf: err), as: UTF8.self))
    }

    // MARK: - Stores

    static let quiet = StoreConfiguration.testing()

    /// A store in `directory`: a table of `rows` rows (every 40th long enough for an overflow chain), three
    /// blobs, one deleted; checkpointed and closed.
    static func makeStore(_ directory: String, rows: Int = 2_000) throws {
        let store = try Store.open(at: directory, configuration: quiet)
        var random = RepeatableRandomNumberGenerator(seed: 5)
        try store.write { txn in
            let table = try txn.createTable(named: "employee")
            for index in 0..<rows { try txn.insert(random.bytes(index % 40 == 0 ? 6_000 : 60), into: table) }
            let other = try txn.createTable(named: "department")
            for _ in 0..<10 { try txn.insert(random.bytes(30), into: other) }
            for length in [1_000, 40_000, 300_000] { _ = try txn.storeBlob(random.bytes(length)) }
        }
        try store.write { txn in _ = try txn.deleteBlob(BlobID(1)) }
        try store.close()
    }

    static func pages(_ directory: String) -> String { directory + "/strata.pages" }
    static func wal(_ directory: String) -> String { directory + "/strata.wal" }
    static func segment(_ directory: String) -> String { directory + "/blob-000001.seg" }
    /// FORMAT.md §3: the log's file header and each record's header.
    static let walHeaderSize = 48
    static let recordHeaderSize = 20

    /// Inverts every bit of the byte at `offset` of the file at `path`.
    static func flipByte(_ path: String, at offset: UInt64) throws {
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seek(toOffset: offset)
        let byte = try #require(try handle.read(upToCount: 1)?.first)
        try handle.seek(toOffset: offset)
        try handle.write(contentsOf: Data([~byte]))
        try handle.synchronize()
    }

    /// Every file in `directory` and its bytes.
    static func snapshotFiles(_ directory: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
            files[name] = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))
        }
        return files
    }

    /// The problems of a `fsck --json` report.
    static func problems(_ run: Run) throws -> [[String: Any]] {
        let report = try #require(try run.json()["report"] as? [String: Any])
        return report["problems"] as? [[String: Any]] ?? []
    }

    /// The first leaf of the page file (from `dump --pages`): the first leaf of table `employee`.
    static func leafPage(_ directory: String) throws -> UInt64 {
        let listing = try strata("dump", directory, "--pages")
        let leaf = listing.standardOutput.split(separator: "\n").first { $0.contains(": leaf ") }
        let text = try #require(leaf.map(String.init))
        return try #require(UInt64(text.dropFirst("page ".count).prefix { $0 != ":" }))
    }

    // MARK: - fsck

    @Test func aHealthyStoreIsCleanAndFsckChangesNothing() throws {
        try TemporaryStore.withPosixDirectory { root in
            let store = root + "/store"
            try Self.makeStore(store)
            let before = try Self.snapshotFiles(store)
            let text = try Self.strata("fsck", store)
            #expect(text.status == 0, "\(text)")
            #expect(text.standardOutput.contains("result: clean (exit 0)"))
            let json = try Self.strata("fsck", store, "--json")
            #expect(json.status == 0)
            #expect(try json.json()["clean"] as? Bool == true)
            #expect(try Self.snapshotFiles(store) == before, "fsck wrote to the store")
            let info = try Self.strata("info", store, "--json")
            #expect(info.status == 0, "\(info)")
            let tables = try #require(try info.json()["tables"] as? [[String: Any]])
            #expect(
                tables.contains {
                    $0["name"] as? String == "employee" && $0["rows"] as? Int == 2_000
                        && ($0["height"] as? Int ?? 0) >= 2
                })
            #expect(try Self.strata("info", store).standardOutput.contains("employee (#1): 2,000 rows"))
            #expect(try Self.snapshotFiles(store) == before, "info wrote to the store")
        }
    }

    @Test func aMissingStoreIsAnOperationalError() throws {
        try TemporaryStore.withPosixDirectory { root in
            for command in ["fsck", "info", "compact", "dump"] {
                let run = try Self.strata(command, root + "/nothing")
                #expect(run.status == 8, "\(command): \(run)")
                #expect(run.standardError.contains("no Strata store"), "\(command): \(run)")
            }
            #expect(!FileManager.default.fileExists(atPath: root + "/nothing"), "nothing was created")
        }
    }

    @Test func aFlippedByteInAPageIsProblemFourWithItsFileAndOffset() throws {
        try TemporaryStore.withPosixDirectory { root in
            let store = root + "/store"
            try Self.makeStore(store)
            let page = try Self.leafPage(store)
            try Self.flipByte(Self.pages(store), at: page * 4096 + 200)
            let run = try Self.strata("fsck", store, "--json")
            #expect(run.status == 4, "\(run)")
            let problems = try Self.problems(run)
            #expect(
                problems.contains {
                    $0["file"] as? String == Self.pages(store) && $0["offset"] as? UInt64 == page * 4096
                },
                "\(run)")
            #expect(
                try Self.strata("fsck", store).standardOutput.contains("problem: \(Self.pages(store)) @\(page * 4096)"))
            // --repair cannot fix a damaged page without losing committed data: problems stay, nothing changes.
            let before = try Self.snapshotFiles(store)
            #expect(try Self.strata("fsck", store, "--repair").status == 4)
            #expect(try Self.snapshotFiles(store) == before)
        }
    }

    @Test func aFlippedByteInAWALRecordIsNamed() throws {
        try TemporaryStore.withPosixDirectory { root in
            let store = root + "/store"
            try Self.makeStore(store, rows: 100)
            // Commits that only the log holds: the writer's process "crashes" (the store is not closed).
            do {
                let writer = try Store.open(at: store, configuration: Self.quiet)
                for value in 0..<4 as Range<UInt8> {
                    _ = try writer.write { txn in try txn.insert([value], into: txn.table(named: "department")!) }
                }
                _ = writer  // not closed: released here without a checkpoint, as a crash leaves it
            }
            #expect(try Self.strata("fsck", store).status == 0, "commits waiting for replay are not a problem")
            try Self.flipByte(Self.wal(store), at: UInt64(Self.walHeaderSize + Self.recordHeaderSize + 3))
            let run = try Self.strata("fsck", store, "--json")
            #expect(run.status == 4, "\(run)")
            let problem = try #require(try Self.problems(run).first { $0["file"] as? String == Self.wal(store) })
            #expect(problem["offset"] as? Int == Self.walHeaderSize)
            #expect((problem["message"] as? String)?.contains("middle of the log") == true, "\(problem)")
            // Recovery would drop the valid commits after the damage: --repair leaves it alone.
            #expect(try Self.strata("fsck", store, "--repair").status == 4)
        }
    }

    @Test func aTornLogTailIsRepairedWithExitCodeOne() throws {
        try TemporaryStore.withPosixDirectory { root in
            let store = root + "/store"
            try Self.makeStore(store, rows: 100)
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: Self.wal(store)))
            try handle.seekToEnd()
            try handle.write(
                contentsOf: Data([
                    0xDE, 0xAD, 0xBE, 0xEF, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18,
                ]))
            try handle.close()
            let check = try Self.strata("fsck", store)
            #expect(check.status == 4 && check.standardOutput.contains("torn tail"), "\(check)")
            let repair = try Self.strata("fsck", store, "--repair")
            #expect(repair.status == 1, "\(repair)")
            #expect(repair.standardOutput.contains("repaired: recovery"))
            #expect(try Self.strata("fsck", store).status == 0)
        }
    }

    @Test func aFlippedByteInABlobAndADeletedSegmentAreNamed() throws {
        try TemporaryStore.withPosixDirectory { root in
            let store = root + "/store"
            try Self.makeStore(store, rows: 10)
            let copy = root + "/copy"
            try FileManager.default.copyItem(atPath: store, toPath: copy)
            // Blob 2 follows blob 1's record (1,000 random bytes, stored raw) in segment 1.
            try Self.flipByte(Self.segment(store), at: 48 + 28 + 1_000 + 28 + 10)
            let run = try Self.strata("fsck", store, "--json")
            #expect(run.status == 4, "\(run)")
            #expect(
                try Self.problems(run).contains {
                    $0["file"] as? String == Self.segment(store)
                        && ($0["message"] as? String)?.contains("blob#2") == true
                }, "\(run)")
            try FileManager.default.removeItem(atPath: Self.segment(copy))
            let missing = try Self.strata("fsck", copy, "--json")
            #expect(missing.status == 4)
            #expect(
                try Self.problems(missing).contains {
                    $0["file"] as? String == Self.segment(copy)
                        && ($0["message"] as? String)?.contains("missing") == true
                }, "\(missing)")
        }
    }

    @Test func aTruncatedPageFileIsNamed() throws {
        try TemporaryStore.withPosixDirectory { root in
            let store = root + "/store"
            try Self.makeStore(store, rows: 300)
            let attributes = try FileManager.default.attributesOfItem(atPath: Self.pages(store))
            let size = try #require((attributes[.size] as? NSNumber)?.uint64Value)
            let handle = try FileHandle(forUpdating: URL(fileURLWithPath: Self.pages(store)))
            try handle.truncate(atOffset: size - 4096 - 100)
            try handle.close()
            let run = try Self.strata("fsck", store)
            #expect(run.status == 4, "\(run)")
            #expect(
                run.standardOutput.contains("no valid root record") || run.standardOutput.contains(Self.wal(store)),
                "\(run)")
        }
    }

    @Test func orphanedBlobBytesAreNotedAndRepairDropsThem() throws {
        try TemporaryStore.withPosixDirectory { root in
            let store = root + "/store"
            try Self.makeStore(store, rows: 10)
            let check = try Self.strata("fsck", store, "--json")
            #expect(check.status == 0, "deleted blobs' bytes are not damage: \(check)")
            let report = try #require(try check.json()["report"] as? [String: Any])
            #expect((report["orphanedBlobBytes"] as? Int ?? 0) > 1_000)
            let repair = try Self.strata("fsck", store, "--repair", "--json")
            #expect(repair.status == 1, "\(repair)")
            let after = try #require(try repair.json()["afterRepair"] as? [String: Any])
            #expect(after["orphanedBlobBytes"] as? Int == 0)
            #expect(try Self.strata("fsck", store, "--repair").status == 0, "nothing left to repair")
        }
    }

    // MARK: - salvage

    @Test func salvageCopiesTheReadableRowsIntoAStoreThatVerifiesClean() throws {
        try TemporaryStore.withPosixDirectory { root in
            let store = root + "/store"
            try Self.makeStore(store)
            let before = try Self.strata("dump", store, "--table", "employee").standardOutput.split(separator: "\n")
            let page = try Self.leafPage(store)
            try Self.flipByte(Self.pages(store), at: page * 4096 + 300)
            let out = root + "/salvaged"
            let run = try Self.strata("fsck", store, "--salvage", out, "--json")
            #expect(run.status == 4, "the damaged store still has its problems: \(run)")
            let salvage = try #require(try run.json()["salvage"] as? [String: Any])
            #expect(salvage["pagesSkipped"] as? Int == 1 && salvage["blobsCopied"] as? Int == 2, "\(salvage)")
            let check = try Self.strata("fsck", out)
            #expect(check.status == 0, "\(check)")
            let after = try Self.strata("dump", out, "--table", "employee").standardOutput.split(separator: "\n")
            #expect(after.count < before.count && after.count > before.count - 200)
            #expect(Set(after).isSubset(of: Set(before)), "every salvaged row is a row of the original, unchanged")
            let blobs = try Self.strata("dump", out).standardOutput.split(separator: "\n").filter {
                $0.hasPrefix("{\"blob\"")
            }
            #expect(blobs.count == 2)
        }
    }

    // MARK: - compact

    @Test func compactionAfterDeletingHalfTheRowsReclaimsFortyPercentAndKeepsTheData() throws {
        try TemporaryStore.withPosixDirectory { root in
            let store = root + "/store"
            try Self.makeStore(store, rows: 6_000)
            let writer = try Store.open(at: store, configuration: Self.quiet)
            try writer.write { txn in
                let table = txn.table(named: "employee")!
                for row in stride(from: UInt64(1), through: 6_000, by: 2) { try txn.delete(RowID(row), from: table) }
            }
            try writer.close()
            let dumpBefore = try Self.strata("dump", store)
            #expect(dumpBefore.status == 0)
            let run = try Self.strata("compact", store, "--json")
            #expect(run.status == 0, "\(run)")
            let report = try run.json()
            let pagesBefore = try #require(report["pageFileBytesBefore"] as? Double)
            let pagesAfter = try #require(report["pageFileBytesAfter"] as? Double)
            #expect((pagesBefore - pagesAfter) / pagesBefore >= 0.4, "\(report)")
            #expect((report["bytesReclaimed"] as? Int ?? 0) > 0)
            let dumpAfter = try Self.strata("dump", store)
            #expect(dumpAfter.standardOutput == dumpBefore.standardOutput, "the data differs after compaction")
            #expect(try Self.strata("fsck", store).status == 0)
            let text = try Self.strata("compact", store)
            #expect(
                text.status == 0 && text.standardOutput.contains("bytes before:")
                    && text.standardOutput.contains("reclaimed:"))
        }
    }

    @Test func compactRefusesAStoreAnotherProcessHasOpen() throws {
        try TemporaryStore.withPosixDirectory { root in
            let store = root + "/store"
            try Self.makeStore(store, rows: 10)
            // The test process holds the store's lock; `strata` is another process.
            let holder = try Store.open(at: store, configuration: Self.quiet)
            let before = try Self.snapshotFiles(store)
            let run = try Self.strata("compact", store)
            #expect(run.status == 8, "\(run)")
            // It names the process that holds the store open: this one.
            #expect(run.standardError.contains("is open in process \(getpid()); close it first"), "\(run)")
            #expect(try Self.snapshotFiles(store) == before)
            let repair = try Self.strata("fsck", store, "--repair")
            #expect(repair.status == 8, "fsck reads a store in use but does not repair it: \(repair)")
            let check = try Self.strata("fsck", store, "--json")
            let report = try check.json()["report"] as? [String: Any]
            #expect(check.status == 0 && report?["lockHeldElsewhere"] as? Bool == true)
            try holder.close()
            #expect(try Self.strata("compact", store).status == 0)
        }
    }

    // MARK: - dump and help

    @Test func dumpPrintsAnnotatedHexAndRowsAsJSONLines() throws {
        try TemporaryStore.withPosixDirectory { root in
            let store = root + "/store"
            try Self.makeStore(store, rows: 50)
            let page = try Self.strata("dump", store, "--page", "0")
            #expect(page.status == 0)
            #expect(page.standardOutput.hasPrefix("0-7: x 89535452410d0a1a # magic"), "\(page)")
            #expect(page.standardOutput.contains("16-19: x 00100000 # page size 4096"))
            let wal = try Self.strata("dump", store, "--wal")
            #expect(wal.status == 0 && wal.standardOutput.contains("# start LSN"))
            let rows = try Self.strata("dump", store, "--table", "department")
            let lines = rows.standardOutput.split(separator: "\n")
            #expect(lines.count == 10)
            let first = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any]
            #expect(
                first?["row"] as? Int == 1 && first?["table"] as? String == "department"
                    && first?["length"] as? Int == 30)
            let noBlobs = try Self.strata("dump", store, "--no-blobs").standardOutput
            #expect(!noBlobs.contains("\"blob\""))
            #expect(try Self.strata("dump", store, "--table", "nope").status == 8)
            #expect(try Self.strata("dump", store, "--pages", "--wal").status == 64, "selectors exclude each other")
        }
    }

    @Test func helpDocumentsTheExitCodes() throws {
        for command in ["fsck", "compact", "info", "dump"] {
            let help = try Self.strata(command, "--help")
            #expect(help.status == 0)
            let text = help.standardOutput.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            #expect(text.contains("4 problems left") && text.contains("8 operational error"), "\(command): \(text)")
        }
    }
}
