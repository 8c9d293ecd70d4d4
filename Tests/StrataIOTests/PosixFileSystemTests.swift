import Foundation
import StrataIO
import Testing

/// What only the real file system shows: descriptor flags and locks seen by another process.
/// Everything PosixFileSystem shares with InMemoryFileSystem is in FileSystemConformanceTests.
@Suite struct PosixFileSystemTests {
    /// Runs `body` with a unique empty directory under the temporary directory, removed afterwards.
    private func withTemporaryDirectory<R>(_ body: (TestDirectory) throws -> R) throws -> R {
        let root = FileManager.default.temporaryDirectory
            .appendingPathComponent("strata-io-posix-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: root) }
        return try body(TestDirectory(root: root))
    }

    /// The `flags:` of this process's descriptors that refer to `path`, from `/proc/self/fdinfo`.
    private func openFlags(ofDescriptorsFor path: String) throws -> [Int] {
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        return try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").compactMap { fd in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)"),
                target == resolved || target == path
            else { return nil }
            let info = try String(contentsOfFile: "/proc/self/fdinfo/\(fd)", encoding: .utf8)
            let line = info.split(separator: "\n").first { $0.hasPrefix("flags:") }!
            return Int(line.dropFirst("flags:".count).trimmingCharacters(in: .whitespaces), radix: 8)
        }
    }

    /// `O_CLOEXEC` on Linux (octal 02000000).
    private static let closeOnExecFlag = 0o2_000_000

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/fdinfo")))
    func filesAndLocksAreOpenedCloseOnExec() throws {
        try withTemporaryDirectory { directory in
            let fileSystem = PosixFileSystem()
            let file = try fileSystem.openFile(at: directory.path("a"), mode: .createNew)
            let fileFlags = try openFlags(ofDescriptorsFor: directory.path("a"))
            #expect(fileFlags.count == 1)
            #expect(fileFlags.allSatisfy { $0 & Self.closeOnExecFlag != 0 })
            try file.close()
            #expect(try openFlags(ofDescriptorsFor: directory.path("a")).isEmpty)

            let lock = try fileSystem.lockFile(at: directory.path("LOCK"))
            let lockFlags = try openFlags(ofDescriptorsFor: directory.path("LOCK"))
            #expect(lockFlags.count == 1)
            #expect(lockFlags.allSatisfy { $0 & Self.closeOnExecFlag != 0 })
            lock.unlock()
            #expect(try openFlags(ofDescriptorsFor: directory.path("LOCK")).isEmpty)
        }
    }

    /// Runs `flock --nonblock` from util-linux on `path` and returns its exit status: 0 when it
    /// got the lock, 75 when the lock was held.
    private func lockStatusSeenByAnotherProcess(_ path: String) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
        process.arguments = ["--nonblock", "--conflict-exit-code", "75", path, "true"]
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/flock")))
    func heldLockBlocksAnotherProcessUntilUnlocked() throws {
        try withTemporaryDirectory { directory in
            let fileSystem = PosixFileSystem()
            let path = directory.path("LOCK")
            let lock = try fileSystem.lockFile(at: path)
            #expect(try lockStatusSeenByAnotherProcess(path) == 75)
            lock.unlock()
            #expect(try lockStatusSeenByAnotherProcess(path) == 0)
        }
    }

    @Test func createdFilesAreVisibleToFoundation() throws {
        try withTemporaryDirectory { directory in
            let fileSystem = PosixFileSystem()
            try fileSystem.createDirectory(at: directory.path("x/y"))
            let file = try fileSystem.openFile(at: directory.path("x/y/data"), mode: .createNew)
            try file.write([UInt8]("abc"), at: 0)
            try file.sync()
            try file.close()
            try fileSystem.syncDirectory(at: directory.path("x/y"))
            #expect(FileManager.default.contents(atPath: directory.path("x/y/data")) == Data("abc".utf8))
        }
    }

    @Test func errorsNameTheOperationAndPath() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("missing")
            do throws(IOError) {
                _ = try PosixFileSystem().openFile(at: path, mode: .existing)
                Issue.record("opening a missing file succeeded")
            } catch {
                #expect(error == IOError(.noSuchFile, operation: "open", path: path))
                #expect(error.description == "open \(path): no such file or directory")
            }
        }
    }

    // MARK: - Reading without write access (issue 23)

    /// `O_ACCMODE` on Linux: the access-mode bits of the open flags (`O_RDONLY` is 0).
    private static let accessModeMask = 0o3

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/fdinfo")))
    func filesForReadingAndExistingLocksAreOpenedReadOnly() throws {
        try withTemporaryDirectory { directory in
            let fileSystem = PosixFileSystem()
            let writer = try fileSystem.openFile(at: directory.path("a"), mode: .createNew)
            try writer.write([1, 2, 3], at: 0)
            try writer.close()
            let reader = try fileSystem.openFileForReading(at: directory.path("a"))
            #expect(try reader.read(count: 3, at: 0) == [1, 2, 3])
            let flags = try openFlags(ofDescriptorsFor: directory.path("a"))
            #expect(flags.count == 1 && flags.allSatisfy { $0 & Self.accessModeMask == 0 }, "not O_RDONLY: \(flags)")
            try reader.close()

            #expect(throws: IOError.self) { try fileSystem.lockExistingFile(at: directory.path("LOCK")) }
            #expect(!fileSystem.exists(at: directory.path("LOCK")), "lockExistingFile created the file")
            try fileSystem.lockFile(at: directory.path("LOCK")).unlock()
            let lock = try fileSystem.lockExistingFile(at: directory.path("LOCK"))
            let lockFlags = try openFlags(ofDescriptorsFor: directory.path("LOCK"))
            #expect(lockFlags.count == 1 && lockFlags.allSatisfy { $0 & Self.accessModeMask == 0 })
            #expect(throws: IOError.self) { try fileSystem.lockFile(at: directory.path("LOCK")) }
            lock.unlock()
        }
    }

    @Test func dataEndStopsAtASparseTail() throws {
        try withTemporaryDirectory { directory in
            let fileSystem = PosixFileSystem()
            let file = try fileSystem.openFile(at: directory.path("sparse"), mode: .createNew)
            defer { try? file.close() }
            try file.write([UInt8](repeating: 7, count: 8192), at: 0)
            try file.truncate(to: 1 << 30)
            let end = try file.dataEnd()
            #expect(end >= 8192 && end <= 1 << 30)
            // Every file system Strata runs its tests on reports holes; one that does not answers the size.
            #expect(end < 1 << 20 || end == 1 << 30, "\(end)")
            try file.truncate(to: 100)
            #expect(try file.dataEnd() == 100)
        }
    }
}
