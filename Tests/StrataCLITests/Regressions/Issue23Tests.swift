import Foundation
import StrataFormat
import StrataStorage
import StrataTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Issue 23, "Operating a store safely": the built `strata` run as an operator runs it, one test per numbered
/// item, each failing without its fix.
@Suite(.serialized) struct Issue23Tests {
    typealias Tool = StrataToolTests
    typealias Run = ToolRunner

    static var isRoot: Bool { geteuid() == 0 }

    /// A store made by ``StrataToolTests/makeStore(_:rows:)`` plus `commits` transactions only its log holds
    /// (the writer is released without a checkpoint, as a crash leaves it).
    static func makeStore(_ directory: String, rows: Int = 200, commits: Int = 3) throws {
        try Tool.makeStore(directory, rows: rows)
        guard commits > 0 else { return }
        let writer = try Store.open(at: directory, configuration: Tool.quiet)
        for value in 0..<UInt8(commits) {
            _ = try writer.write { txn in try txn.insert([value], into: txn.table(named: "department")!) }
        }
        _ = writer
    }

    /// Appends bytes that do not read as a record to the log: a torn tail, which `--repair` would cut.
    static func tearLogTail(_ directory: String) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: Tool.wal(directory)))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data([0xDE, 0xAD, 0xBE, 0xEF] + [UInt8](repeating: 7, count: 18)))
        try handle.close()
    }

    static func fileSize(_ path: String) throws -> UInt64 {
        try #require((try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.uint64Value)
    }

    // MARK: - 1. Inspecting needs no write access

    /// The ways to run a read-only command against `store` that no write can get past: plain (the modes
    /// stop a user that is not root), as `nobody` when we are root (`setpriv`), and inside a private mount
    /// namespace where `store` is a read-only bind mount (root only; skipped where mounting is not permitted).
    /// With `plainAsRoot` false, the plain run is left out when we are root (it could write).
    static func readerRuns(
        _ store: String, _ arguments: [String], plainAsRoot: Bool = true
    ) throws -> [(String, Run.Outcome)] {
        var runs: [(String, Run.Outcome)] = []
        if plainAsRoot || !isRoot { runs.append(("plain", try Run.run(try Tool.locateTool(), arguments))) }
        if isRoot, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") {
            runs.append(
                (
                    "as nobody",
                    try Run.run(
                        "/usr/bin/setpriv",
                        ["--reuid=65534", "--regid=65534", "--clear-groups", try Tool.locateTool()] + arguments)
                ))
        }
        if readOnlyMountWorks(store) {
            let script = #"mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" && shift && exec "$0" "$@""#
            runs.append(
                (
                    "read-only mount",
                    try Run.run(
                        "/usr/bin/unshare",
                        ["-m", "--propagation", "private", "/bin/sh", "-c", script, try Tool.locateTool(), store]
                            + arguments)
                ))
        }
        return runs
    }

    /// Whether a private mount namespace with a read-only bind mount of `directory` can be made here.
    static func readOnlyMountWorks(_ directory: String) -> Bool {
        guard isRoot, FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else { return false }
        let probe = try? Run.run(
            "/usr/bin/unshare",
            [
                "-m", "--propagation", "private", "/bin/sh", "-c",
                #"mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" && ! touch "$1/.probe" 2>/dev/null"#, "sh",
                directory,
            ], timeout: 20)
        return probe?.status == 0 && probe?.signaled == false
    }

    @Test func fsckInfoAndDumpReadAStoreTheyCannotWriteAndChangeNothing() throws {
        try TemporaryStore.withPosixDirectory { root in
            let store = root + "/store"
            try Self.makeStore(store)
            // No lock file: a reader must not create one.
            try FileManager.default.removeItem(atPath: store + "/strata.lock")
            for name in try FileManager.default.contentsOfDirectory(atPath: store) {
                try Run.chmod(store + "/" + name, 0o444)
            }
            try Run.chmod(store, 0o555)
            defer {
                try? Run.chmod(store, 0o755)
                for name in (try? FileManager.default.contentsOfDirectory(atPath: store)) ?? [] {
                    try? Run.chmod(store + "/" + name, 0o644)
                }
            }
            let before = try Run.listing(store)
            let commands: [[String]] = [
                ["fsck", store], ["fsck", store, "--json"], ["info", store, "--json"], ["dump", store],
                ["dump", store, "--pages"], ["dump", store, "--wal", "--json"], ["dump", store, "--page", "1"],
            ]
            for arguments in commands {
                for (how, run) in try Self.readerRuns(store, arguments) {
                    #expect(run.status == 0 && !run.signaled, "\(arguments) \(how): \(run)")
                    #expect(!run.standardError.contains("read-only file system"), "\(arguments) \(how): \(run)")
                }
            }
            #expect(try Run.listing(store) == before, "a read-only command changed the store's files")
            #expect(!FileManager.default.fileExists(atPath: store + "/strata.lock"), "a reader created the lock file")
        }
    }

    @Test func repairOfAStoreItCannotWriteSaysSoAndChangesNothing() throws {
        try TemporaryStore.withPosixDirectory { root in
            let store = root + "/store"
            try Self.makeStore(store, commits: 0)
            try Self.tearLogTail(store)
            for name in try FileManager.default.contentsOfDirectory(atPath: store) {
                try Run.chmod(store + "/" + name, 0o444)
            }
            try Run.chmod(store, 0o555)
            defer {
                try? Run.chmod(store, 0o755)
                for name in (try? FileManager.default.contentsOfDirectory(atPath: store)) ?? [] {
                    try? Run.chmod(store + "/" + name, 0o644)
                }
            }
            let before = try Run.listing(store)
            // Root writes through modes: only the runs that really cannot write count (as nobody, a read-only
            // mount), or the plain run when we are not root.
            let runs = try Self.readerRuns(store, ["fsck", store, "--repair", "--json"], plainAsRoot: false)
            for (how, run) in runs {
                #expect(run.status == 8, "\(how): \(run)")
                #expect(run.standardError.contains("cannot repair"), "\(how): \(run)")
                let error = try #require(try run.json()["error"] as? [String: Any], "\(how): \(run)")
                #expect(error["kind"] as? String == "notWritable", "\(how): \(run)")
            }
            #expect(try Run.listing(store) == before)
        }
    }

    // MARK: - 2. dump never shows a state recovery would refuse

    @Test func dumpOfAStoreWhoseNewestRootRecordIsZeroedWarnsAndExitsFour() throws {
        try TemporaryStore.withPosixDirectory { root in
            let store = root + "/store"
            try Tool.makeStore(store, rows: 100)
            let writer = try Store.open(at: store, configuration: Tool.quiet)
            try writer.write { txn in _ = try txn.delete(RowID(3), from: txn.table(named: "department")!) }
            try writer.close()  // a second checkpoint; the log is emptied
            let pages = Tool.pages(store)
            let newest = try Self.fileSize(pages) / 4096 - 1
            try Run.overwrite(pages, at: newest * 4096, with: [UInt8](repeating: 0, count: 4096))

            let text = try Run.strata("dump", store, "--table", "department")
            #expect(text.status == 4, "\(text)")
            #expect(text.standardError.contains("warning"), "\(text)")
            let json = try Run.strata("dump", store, "--table", "department", "--json")
            #expect(json.status == 4)
            let lines = try json.jsonLines()
            #expect(lines.last?["exitCode"] as? Int == 4, "\(json)")
            #expect(try Run.strata("dump", store, "--pages").status == 4)
            #expect(try Run.strata("compact", store).status == 4)
        }
    }

    @Test func dumpOfATruncatedPageFileExitsFour() throws {
        try TemporaryStore.withPosixDirectory { root in
            let store = root + "/store"
            try Tool.makeStore(store, rows: 100)
            let handle = try FileHandle(forUpdating: URL(fileURLWithPath: Tool.pages(store)))
            try handle.truncate(atOffset: 4096)
            try handle.close()
            let run = try Run.strata("dump", store)
            #expect(run.status == 4, "\(run)")
            #expect(run.standardError.contains("warning"))
        }
    }

    // MARK: - 3. Exit codes mean the same in every command

    @Test func infoOnADamagedStoreExitsFourAndDumpPastTheLastPageIsUsage() throws {
        try TemporaryStore.withPosixDirectory { root in
            let store = root + "/store"
            try Tool.makeStore(store, rows: 300)
            let page = try Tool.leafPage(store)
            try Tool.flipByte(Tool.pages(store), at: page * 4096 + 200)
            let info = try Run.strata("info", store)
            #expect(info.status == 4, "\(info)")
            #expect(info.standardOutput.contains("problems found"))
            let json = try Run.strata("info", store, "--json")
            #expect(json.status == 4, "\(json)")
            #expect(try json.json()["exitCode"] as? Int == 4, "\(json)")
            let past = try Run.strata("dump", store, "--page", "1000000")
            #expect(past.status == 64, "\(past)")
        }
    }

    /// An object store whose book "Emma" has an invalid tag (13) in its foreign-key field (field 1), which the
    /// index `fk.CliBook.library` is on, in a page whose checksum is sealed again.
    static func makeStoreWithAnUnindexableRow(_ directory: String) throws {
        _ = try StrataToolIntegrityTests.makeObjectStore(directory)
        let pages = Tool.pages(directory)
        let offset = try Run.findLast("Emma", in: pages)
        try Run.overwrite(pages, at: UInt64(offset + 4), with: [13])
        try Run.resealPage(UInt64(offset / 4096), in: pages)
    }

    @Test func anInvalidRowMetByCompactOrRepairIsProblemFour() throws {
        try TemporaryStore.withPosixDirectory { root in
            let store = root + "/store"
            try Self.makeStoreWithAnUnindexableRow(store)
            #expect(try Run.strata("fsck", store).status == 4)
            let before = try Run.listing(store)
            let compact = try Run.strata("compact", store, "--json")
            #expect(compact.status == 4, "\(compact)")
            #expect(try compact.json()["exitCode"] as? Int == 4)
            let repair = try Run.strata("fsck", store, "--repair")
            #expect(repair.status == 4, "\(repair)")
            #expect(try Run.listing(store) == before)
        }
    }

    // MARK: - 4. Feature flags are honoured

    @Test func anUnknownReadOnlyCompatibleFeatureIsReadButNeverWritten() throws {
        try TemporaryStore.withPosixDirectory { root in
            let store = root + "/store"
            try Self.makeStore(store, commits: 0)
            try Run.editHeader(Tool.pages(store)) { $0.readOnlyCompatibleFeatures = 0x8000_0000 }
            try Self.tearLogTail(store)  // something --repair would write to fix
            let before = try Run.listing(store)
            let check = try Run.strata("fsck", store)
            #expect(check.status == 4, "the torn tail is the only problem: \(check)")
            #expect(check.standardOutput.contains("read-only-compatible features 0x80000000"), "\(check)")
            #expect(try Run.strata("info", store, "--json").status == 4)
            #expect(try Run.strata("dump", store, "--table", "department").status == 4)
            let compact = try Run.strata("compact", store, "--json")
            #expect(compact.status == 8, "\(compact)")
            #expect(compact.standardError.contains("read-only-compatible"), "\(compact)")
            let error = try #require(try compact.json()["error"] as? [String: Any])
            #expect(error["kind"] as? String == "readOnlyStore")
            let repair = try Run.strata("fsck", store, "--repair")
            #expect(repair.status == 8, "\(repair)")
            #expect(repair.standardError.contains("not repairing"), "\(repair)")
            #expect(try Run.listing(store) == before, "a store with an unknown read-only-compatible bit was written")
        }
    }

    @Test func anUnknownIncompatibleFeatureRefusesToOpen() throws {
        try TemporaryStore.withPosixDirectory { root in
            let store = root + "/store"
            try Self.makeStore(store, commits: 0)
            try Run.editHeader(Tool.pages(store)) { $0.incompatibleFeatures = 0x4 }
            let before = try Run.listing(store)
            for command in ["fsck", "info", "dump", "compact"] {
                let run = try Run.strata(command, store, "--json")
                #expect(run.status == 8, "\(command): \(run)")
                #expect(run.standardError.contains("unknown incompatible features 0x4"), "\(command): \(run)")
                let error = try #require(try run.json()["error"] as? [String: Any], "\(command): \(run)")
                #expect(error["kind"] as? String == "unsupportedFormat")
            }
            #expect(try Run.listing(store) == before)
        }
    }

    // MARK: - 5. Paths are taken exactly

    @Test func anArgumentThatIsNotUTF8IsRefusedAndNoOtherPathIsTouched() throws {
        try TemporaryStore.withPosixDirectory { root in
            let parent = root + "/p"
            // What decoding `coll\xff` with replacement would name: a store that must stay as it is.
            let lookalike = parent + "/coll\u{FFFD}"
            try Self.makeStore(lookalike, rows: 10, commits: 0)
            let before = try Run.listing(lookalike)
            let demo = try Run.shell(#"exec "$0" demo "$1$(printf '\377')" --employees 10"#, parent + "/coll")
            #expect(demo.status == 64 && !demo.signaled, "\(demo)")
            #expect(demo.standardError.contains("not valid UTF-8"), "\(demo)")
            let fsck = try Run.shell(#"exec "$0" fsck "$1$(printf '\377')" --json"#, parent + "/coll")
            #expect(fsck.status == 64, "\(fsck)")
            let error = try #require(try fsck.json()["error"] as? [String: Any], "\(fsck)")
            #expect(error["kind"] as? String == "usage")
            #expect(try Run.listing(lookalike) == before, "the look-alike store was touched")
            #expect(try FileManager.default.contentsOfDirectory(atPath: parent) == ["coll\u{FFFD}"])
        }
    }

    @Test func demoRefusesADirectoryHoldingAnythingButAStore() throws {
        try TemporaryStore.withPosixDirectory { root in
            let store = root + "/store"
            try Self.makeStore(store, rows: 10, commits: 0)
            try Data("my thesis".utf8).write(to: URL(fileURLWithPath: store + "/thesis.txt"))
            let before = try Run.listing(store)
            let run = try Run.strata("demo", store, "--employees", "10")
            #expect(run.status == 64, "\(run)")
            #expect(run.standardError.contains("thesis.txt"), "\(run)")
            #expect(try Run.listing(store) == before, "the demo changed a directory it should have refused")

            let other = root + "/other"
            try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
            try Data("x".utf8).write(to: URL(fileURLWithPath: other + "/notes"))
            #expect(try Run.strata("demo", other, "--employees", "10").status == 64)
            #expect(try FileManager.default.contentsOfDirectory(atPath: other) == ["notes"])
        }
    }

    // MARK: - 6. --json is JSON in every case

    @Test func everyOutcomeWithJSONIsAJSONDocument() throws {
        try TemporaryStore.withPosixDirectory { root in
            let store = root + "/store"
            try Self.makeStore(store, rows: 50, commits: 0)
            let missing = root + "/missing"
            var cases: [([String], Int, String)] = [
                (["fsck", "--bogus", "--json"], 64, "usage"),
                (["dump", store, "--pages", "--wal", "--json"], 64, "usage"),
                (["fsck", store, "--repair", "--salvage", root + "/out", "--json"], 64, "usage"),
                (["dump", store, "--page", "99999", "--json"], 64, "usage"),
                (["dump", store, "--table", "nope", "--json"], 8, "notFound"),
            ]
            for command in ["fsck", "info", "compact", "dump"] {
                cases.append(([command, missing, "--json"], 8, "notFound"))
            }
            for (arguments, code, kind) in cases {
                let run = try Run.run(try Tool.locateTool(), arguments)
                #expect(run.status == Int32(code), "\(arguments): \(run)")
                let document = try run.json()
                #expect(document["exitCode"] as? Int == code, "\(arguments): \(run)")
                let error = try #require(document["error"] as? [String: Any], "\(arguments): \(run)")
                #expect(error["kind"] as? String == kind, "\(arguments): \(run)")
                #expect((error["message"] as? String)?.isEmpty == false, "\(arguments): \(run)")
            }
            let holder = try Store.open(at: store, configuration: Tool.quiet)
            let locked = try Run.strata("compact", store, "--json")
            try holder.close()
            #expect(locked.status == 8)
            #expect((try locked.json()["error"] as? [String: Any])?["kind"] as? String == "inUse", "\(locked)")
            #expect(try Run.strata("dump", store, "--pages", "--json").json()["pages"] is [Any])
        }
    }

    // MARK: - 7. fsck reads what it checks

    @Test func aRowThatBreaksTheReaderRulesWithAValidPageChecksumIsAProblem() throws {
        try TemporaryStore.withPosixDirectory { root in
            let store = root + "/store"
            _ = try StrataToolIntegrityTests.makeObjectStore(store)
            #expect(try Run.strata("fsck", store).status == 0)
            // Book "Dune": its title field (0) gets tag 13, which no field has (FORMAT.md §6.1); the field is
            // neither indexed nor a relationship, so only decoding the whole row finds it.
            let pages = Tool.pages(store)
            let offset = try Run.findLast("Dune", in: pages)
            try Run.overwrite(pages, at: UInt64(offset - 1), with: [13])
            try Run.resealPage(UInt64(offset / 4096), in: pages)
            let run = try Run.strata("fsck", store, "--json")
            #expect(run.status == 4, "\(run)")
            let rows = try #require(try run.json()["rows"] as? [String: Any], "\(run)")
            let problems = rows["problems"] as? [[String: Any]] ?? []
            #expect(
                problems.contains { $0["table"] as? String == "entity.CliBook" && $0["row"] as? Int != nil },
                "\(rows)")
            let text = try Run.strata("fsck", store)
            #expect(text.standardOutput.contains("problem: entity.CliBook row"), "\(text)")
            #expect(try Run.strata("dump", store, "--table", "entity.CliBook").status == 4)
        }
    }

    // MARK: - 8. compact and repair agree

    @Test func compactRefusesMidLogDamageAndChangesNoFile() throws {
        try TemporaryStore.withPosixDirectory { root in
            let store = root + "/store"
            try Self.makeStore(store, rows: 100, commits: 4)
            try Tool.flipByte(Tool.wal(store), at: UInt64(Tool.walHeaderSize + Tool.recordHeaderSize + 3))
            #expect(try Run.strata("fsck", store).status == 4)
            let before = try Run.listing(store)
            let run = try Run.strata("compact", store)
            #expect(run.status == 4, "\(run)")
            #expect(run.standardError.contains("compaction refused"), "\(run)")
            #expect(try Run.listing(store) == before, "a refused compaction changed the store")
            #expect(try Run.strata("fsck", store).status == 4, "the damage is still reported")
        }
    }

    @Test func compactRefusesADamagedPageBeforeCheckpointing() throws {
        try TemporaryStore.withPosixDirectory { root in
            let store = root + "/store"
            try Tool.makeStore(store, rows: 300)
            let page = try Tool.leafPage(store)
            try Tool.flipByte(Tool.pages(store), at: page * 4096 + 200)
            do {
                let writer = try Store.open(at: store, configuration: Tool.quiet)
                _ = try writer.write { txn in try txn.insert([1], into: txn.table(named: "department")!) }
                _ = writer  // released without a checkpoint: the log holds a commit recovery would checkpoint
            }
            let before = try Run.listing(store)
            let run = try Run.strata("compact", store)
            #expect(run.status == 4, "\(run)")
            #expect(try Run.listing(store) == before, "the refused compaction checkpointed first")
        }
    }

    // MARK: - 9. Smaller things

    @Test func aFileSizeLimitIsTheEFBIGErrorPathWithItsMessage() throws {
        try TemporaryStore.withPosixDirectory { root in
            let store = root + "/store"
            try Tool.makeStore(store, rows: 2_000)
            let before = try Run.listing(store)
            // 64 blocks of 512 bytes: far less than the compacted page file.
            let run = try Run.shell(#"trap - XFSZ; ulimit -f 64 && exec "$0" compact "$1" --json"#, store)
            #expect(!run.signaled, "killed by a signal instead of failing: \(run)")
            #expect(run.status == 8, "\(run)")
            #expect(run.standardError.lowercased().contains("file too large"), "\(run)")
            #expect(!run.standardError.contains("system error"), "\(run)")
            #expect((try run.json()["error"] as? [String: Any])?["kind"] as? String == "io")
            #expect(try Run.listing(store) == before, "a failed compaction left something behind")
        }
    }

    @Test func commandsOnAnEmptyDirectoryLeaveItEmpty() throws {
        try TemporaryStore.withPosixDirectory { root in
            let empty = root + "/empty"
            try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
            for command in ["compact", "fsck", "info", "dump"] {
                let run = try Run.strata(command, empty)
                #expect(run.status == 8, "\(command): \(run)")
                #expect(try FileManager.default.contentsOfDirectory(atPath: empty).isEmpty, "\(command) left files")
            }
        }
    }

    @Test func fsckFindsTheNewestRootRecordFastBehindATwentyGiBSparseTail() throws {
        try TemporaryStore.withPosixDirectory { root in
            let store = root + "/store"
            try Tool.makeStore(store, rows: 300)
            let pages = Tool.pages(store)
            let size = try Self.fileSize(pages)
            let handle = try FileHandle(forUpdating: URL(fileURLWithPath: pages))
            try handle.truncate(atOffset: size + (20 << 30))
            try handle.close()
            let run = try Run.strata("fsck", store, "--json", timeout: 120)
            #expect(run.status == 0, "\(run)")
            #expect(run.seconds < 5, "the search read the sparse tail: \(run)")
            let report = try #require(try run.json()["report"] as? [String: Any])
            #expect((report["tailPages"] as? Int ?? 0) == (20 << 30) / 4096, "\(report)")
            let info = try Run.strata("info", store, timeout: 120)
            #expect(info.status == 0 && info.seconds < 5, "\(info)")
        }
    }
}
