import Dispatch
import StrataIO
import Testing

/// Behaviour every FileSystem must share, run against PosixFileSystem (the reference: the real
/// kernel) and InMemoryFileSystem (which must not let a test pass that would fail on disk).
@Suite struct FileSystemConformanceTests {
    // MARK: - Reading and writing

    @Test(arguments: FileSystemKind.allCases)
    func writtenBytesAreReadBack(kind: FileSystemKind) async throws {
        try await kind.withFileSystem { fileSystem, directory in
            let file = try fileSystem.openFile(at: directory.path("a"), mode: .createNew)
            try file.write([UInt8]("hello, world"), at: 0)
            try file.write([UInt8]("WORLD"), at: 7)
            #expect(try file.read(count: 12, at: 0) == [UInt8]("hello, WORLD"))
            #expect(try file.read(count: 5, at: 7) == [UInt8]("WORLD"))
            #expect(try file.size() == 12)
            #expect(file.path == directory.path("a"))
            try file.close()
        }
    }

    @Test(arguments: FileSystemKind.allCases)
    func readPastEndOfFileReturnsFewerBytes(kind: FileSystemKind) async throws {
        try await kind.withFileSystem { fileSystem, directory in
            let file = try fileSystem.openFile(at: directory.path("a"), mode: .createNew)
            try file.write([1, 2, 3, 4], at: 0)
            #expect(try file.read(count: 10, at: 2) == [3, 4])
            #expect(try file.read(count: 10, at: 4) == [])
            #expect(try file.read(count: 10, at: 100) == [])
            var buffer = [UInt8](repeating: 0xEE, count: 6)
            let count = try buffer.withUnsafeMutableBytes { (buffer) throws(IOError) -> Int in
                try file.read(into: buffer, at: 1)
            }
            #expect(count == 3)
            #expect(buffer == [2, 3, 4, 0xEE, 0xEE, 0xEE])
            try file.close()
        }
    }

    @Test(arguments: FileSystemKind.allCases)
    func writePastEndOfFileZeroFillsTheGap(kind: FileSystemKind) async throws {
        try await kind.withFileSystem { fileSystem, directory in
            let file = try fileSystem.openFile(at: directory.path("a"), mode: .createNew)
            try file.write([1, 2], at: 0)
            try file.write([9], at: 5)
            #expect(try file.size() == 6)
            #expect(try file.read(count: 6, at: 0) == [1, 2, 0, 0, 0, 9])
            try file.close()
        }
    }

    @Test(arguments: FileSystemKind.allCases)
    func writeOverlappingTheEndOverwritesAndExtends(kind: FileSystemKind) async throws {
        try await kind.withFileSystem { fileSystem, directory in
            let file = try fileSystem.openFile(at: directory.path("a"), mode: .createNew)
            try file.write([1, 2, 3], at: 0)
            try file.write([7, 8, 9], at: 2)
            #expect(try file.read(count: 10, at: 0) == [1, 2, 7, 8, 9])
            try file.close()
        }
    }

    @Test(arguments: FileSystemKind.allCases)
    func emptyWritePastEndOfFileDoesNotExtendIt(kind: FileSystemKind) async throws {
        try await kind.withFileSystem { fileSystem, directory in
            let file = try fileSystem.openFile(at: directory.path("a"), mode: .createNew)
            try file.write([1, 2], at: 0)
            try file.write([], at: 100)
            #expect(try file.size() == 2)
            try file.close()
        }
    }

    @Test(arguments: FileSystemKind.allCases)
    func truncateShrinksAndThenExtendsWithZeros(kind: FileSystemKind) async throws {
        try await kind.withFileSystem { fileSystem, directory in
            let file = try fileSystem.openFile(at: directory.path("a"), mode: .createNew)
            try file.write([1, 2, 3, 4, 5], at: 0)
            try file.truncate(to: 2)
            #expect(try file.size() == 2)
            #expect(try file.read(count: 5, at: 0) == [1, 2])
            try file.truncate(to: 4)
            #expect(try file.read(count: 5, at: 0) == [1, 2, 0, 0])
            try file.close()
        }
    }

    @Test(arguments: FileSystemKind.allCases)
    func largeWriteIsReadBackWhole(kind: FileSystemKind) async throws {
        try await kind.withFileSystem { fileSystem, directory in
            let bytes = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
            let file = try fileSystem.openFile(at: directory.path("big"), mode: .createNew)
            try file.write(bytes, at: 4096)
            try file.sync()
            #expect(try file.size() == UInt64(4096 + bytes.count))
            #expect(try file.read(count: bytes.count, at: 4096) == bytes)
            try file.close()
        }
    }

    @Test(arguments: FileSystemKind.allCases)
    func concurrentWritesThroughOneHandleAllLand(kind: FileSystemKind) async throws {
        try await kind.withFileSystem { fileSystem, directory in
            let file = try fileSystem.openFile(at: directory.path("a"), mode: .createNew)
            let writers = 8
            let chunk = 4096
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<writers {
                    group.addTask {
                        let bytes = [UInt8](repeating: UInt8(writer + 1), count: chunk)
                        try file.write(bytes, at: UInt64(writer * chunk))
                    }
                }
                try await group.waitForAll()
            }
            let all = try file.read(count: writers * chunk, at: 0)
            for writer in 0..<writers {
                #expect(all[(writer * chunk)..<((writer + 1) * chunk)].allSatisfy { $0 == UInt8(writer + 1) })
            }
            try file.close()
        }
    }

    // MARK: - Opening

    @Test(arguments: FileSystemKind.allCases)
    func openingMissingFileAsExistingThrowsNoSuchFile(kind: FileSystemKind) async throws {
        try await kind.withFileSystem { fileSystem, directory in
            expectIOError(.noSuchFile) { () throws(IOError) in
                try fileSystem.openFile(at: directory.path("missing"), mode: .existing)
            }
            #expect(!fileSystem.exists(at: directory.path("missing")))
        }
    }

    @Test(arguments: FileSystemKind.allCases)
    func createNewOnExistingFileThrowsFileExists(kind: FileSystemKind) async throws {
        try await kind.withFileSystem { fileSystem, directory in
            try fileSystem.openFile(at: directory.path("a"), mode: .createNew).close()
            expectIOError(.fileExists) { () throws(IOError) in
                try fileSystem.openFile(at: directory.path("a"), mode: .createNew)
            }
        }
    }

    @Test(arguments: FileSystemKind.allCases)
    func openingInMissingDirectoryThrowsNoSuchFile(kind: FileSystemKind) async throws {
        try await kind.withFileSystem { fileSystem, directory in
            for mode in [FileOpenMode.existing, .createIfMissing, .createNew, .truncate] {
                expectIOError(.noSuchFile) { () throws(IOError) in
                    try fileSystem.openFile(at: directory.path("nowhere/a"), mode: mode)
                }
            }
        }
    }

    @Test(arguments: FileSystemKind.allCases)
    func openingThroughAFileThrowsNotADirectory(kind: FileSystemKind) async throws {
        try await kind.withFileSystem { fileSystem, directory in
            try fileSystem.openFile(at: directory.path("a"), mode: .createNew).close()
            expectIOError(.notADirectory) { () throws(IOError) in
                try fileSystem.openFile(at: directory.path("a/b"), mode: .createIfMissing)
            }
        }
    }

    @Test(arguments: FileSystemKind.allCases)
    func openingADirectoryThrowsIsADirectory(kind: FileSystemKind) async throws {
        try await kind.withFileSystem { fileSystem, directory in
            try fileSystem.createDirectory(at: directory.path("sub"))
            expectIOError(.isADirectory) { () throws(IOError) in
                try fileSystem.openFile(at: directory.path("sub"), mode: .existing)
            }
        }
    }

    @Test(arguments: FileSystemKind.allCases)
    func openModesKeepOrEmptyExistingContents(kind: FileSystemKind) async throws {
        try await kind.withFileSystem { fileSystem, directory in
            let path = directory.path("a")
            let first = try fileSystem.openFile(at: path, mode: .createIfMissing)
            try first.write([1, 2, 3], at: 0)
            try first.close()

            let existing = try fileSystem.openFile(at: path, mode: .existing)
            #expect(try existing.size() == 3)
            try existing.close()
            let again = try fileSystem.openFile(at: path, mode: .createIfMissing)
            #expect(try again.size() == 3)
            try again.close()
            let truncated = try fileSystem.openFile(at: path, mode: .truncate)
            #expect(try truncated.size() == 0)
            try truncated.close()
        }
    }

    // MARK: - Names

    @Test(arguments: FileSystemKind.allCases)
    func existsSeesFilesAndDirectories(kind: FileSystemKind) async throws {
        try await kind.withFileSystem { fileSystem, directory in
            try fileSystem.openFile(at: directory.path("a"), mode: .createNew).close()
            try fileSystem.createDirectory(at: directory.path("sub"))
            #expect(fileSystem.exists(at: directory.path("a")))
            #expect(fileSystem.exists(at: directory.path("sub")))
            #expect(fileSystem.exists(at: directory.root))
            #expect(!fileSystem.exists(at: directory.path("b")))
            #expect(!fileSystem.exists(at: directory.path("a/b")))
        }
    }

    @Test(arguments: FileSystemKind.allCases)
    func renameMovesTheFileAndReplacesTheDestination(kind: FileSystemKind) async throws {
        try await kind.withFileSystem { fileSystem, directory in
            let source = try fileSystem.openFile(at: directory.path("new"), mode: .createNew)
            try source.write([UInt8]("new"), at: 0)
            try source.close()
            let old = try fileSystem.openFile(at: directory.path("current"), mode: .createNew)
            try old.write([UInt8]("old contents"), at: 0)
            try old.close()

            try fileSystem.rename(from: directory.path("new"), to: directory.path("current"))

            #expect(!fileSystem.exists(at: directory.path("new")))
            let current = try fileSystem.openFile(at: directory.path("current"), mode: .existing)
            #expect(try current.read(count: 100, at: 0) == [UInt8]("new"))
            try current.close()
            #expect(try fileSystem.contentsOfDirectory(at: directory.root) == ["current"])
        }
    }

    @Test(arguments: FileSystemKind.allCases)
    func renameMovesAFileBetweenDirectories(kind: FileSystemKind) async throws {
        try await kind.withFileSystem { fileSystem, directory in
            try fileSystem.createDirectory(at: directory.path("x"))
            try fileSystem.createDirectory(at: directory.path("y"))
            try fileSystem.openFile(at: directory.path("x/a"), mode: .createNew).close()
            try fileSystem.rename(from: directory.path("x/a"), to: directory.path("y/b"))
            #expect(try fileSystem.contentsOfDirectory(at: directory.path("x")) == [])
            #expect(try fileSystem.contentsOfDirectory(at: directory.path("y")) == ["b"])
        }
    }

    @Test(arguments: FileSystemKind.allCases)
    func identityOfAPathFollowsWhatTheNameNames(kind: FileSystemKind) async throws {
        try await kind.withFileSystem { fileSystem, directory in
            let file = try fileSystem.openFile(at: directory.path("a"), mode: .createNew)
            try file.write([1, 2, 3], at: 0)
            let named = try fileSystem.identity(ofFileAt: directory.path("a"))
            #expect(named == (try file.identity()))
            #expect(named.size == 3)
            // A new file renamed over the name: the name now names another file; the open handle keeps the old one.
            let replacement = try fileSystem.openFile(at: directory.path("b"), mode: .createNew)
            try replacement.write([9], at: 0)
            try fileSystem.rename(from: directory.path("b"), to: directory.path("a"))
            let renamed = try fileSystem.identity(ofFileAt: directory.path("a"))
            #expect(!renamed.isSameFile(as: named))
            #expect(renamed == (try replacement.identity()))
            #expect(renamed.size == 1)
            #expect((try file.identity()).isSameFile(as: named))
            try file.close()
            try replacement.close()
            expectIOError(.noSuchFile) { () throws(IOError) in
                _ = try fileSystem.identity(ofFileAt: directory.path("missing"))
            }
        }
    }

    /// Starting writeback is a hint: what was written reads the same, a range past the end is no error, and a sync
    /// after it succeeds.
    @Test(arguments: FileSystemKind.allCases)
    func startingWritebackChangesNothingThatReads(kind: FileSystemKind) async throws {
        try await kind.withFileSystem { fileSystem, directory in
            let file = try fileSystem.openFile(at: directory.path("pages"), mode: .createNew)
            let bytes = (0..<(1 << 16)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            try file.write(bytes, at: 0)
            file.startWriteback(at: 0, count: bytes.count)
            file.startWriteback(at: 1 << 20, count: 4_096)
            try file.sync()
            #expect(try file.read(count: bytes.count, at: 0) == bytes)
            #expect(try file.size() == UInt64(bytes.count))
            try file.close()
        }
    }

    @Test(arguments: FileSystemKind.allCases)
    func renameOfMissingFileThrowsNoSuchFile(kind: FileSystemKind) async throws {
        try await kind.withFileSystem { fileSystem, directory in
            expectIOError(.noSuchFile) { () throws(IOError) in
                try fileSystem.rename(from: directory.path("missing"), to: directory.path("b"))
            }
            try fileSystem.openFile(at: directory.path("a"), mode: .createNew).close()
            expectIOError(.noSuchFile) { () throws(IOError) in
                try fileSystem.rename(from: directory.path("a"), to: directory.path("nowhere/b"))
            }
            #expect(fileSystem.exists(at: directory.path("a")))
        }
    }

    @Test(arguments: FileSystemKind.allCases)
    func renameOntoADirectoryThrowsIsADirectory(kind: FileSystemKind) async throws {
        try await kind.withFileSystem { fileSystem, directory in
            try fileSystem.openFile(at: directory.path("a"), mode: .createNew).close()
            try fileSystem.createDirectory(at: directory.path("sub"))
            expectIOError(.isADirectory) { () throws(IOError) in
                try fileSystem.rename(from: directory.path("a"), to: directory.path("sub"))
            }
        }
    }

    @Test(arguments: FileSystemKind.allCases)
    func handleStaysValidAfterRename(kind: FileSystemKind) async throws {
        try await kind.withFileSystem { fileSystem, directory in
            let file = try fileSystem.openFile(at: directory.path("a"), mode: .createNew)
            try file.write([1, 2, 3], at: 0)
            try fileSystem.rename(from: directory.path("a"), to: directory.path("b"))
            try file.write([4], at: 3)
            try file.sync()
            #expect(try file.read(count: 10, at: 0) == [1, 2, 3, 4])

            let renamed = try fileSystem.openFile(at: directory.path("b"), mode: .existing)
            #expect(try renamed.read(count: 10, at: 0) == [1, 2, 3, 4])
            try renamed.close()
            try file.close()
        }
    }

    @Test(arguments: FileSystemKind.allCases)
    func removedFileIsGoneButOpenHandleStillWorks(kind: FileSystemKind) async throws {
        try await kind.withFileSystem { fileSystem, directory in
            let file = try fileSystem.openFile(at: directory.path("a"), mode: .createNew)
            try file.write([7, 8], at: 0)
            try fileSystem.removeFile(at: directory.path("a"))

            #expect(!fileSystem.exists(at: directory.path("a")))
            #expect(try fileSystem.contentsOfDirectory(at: directory.root) == [])
            try file.write([9], at: 2)
            #expect(try file.read(count: 10, at: 0) == [7, 8, 9])
            try file.close()

            let recreated = try fileSystem.openFile(at: directory.path("a"), mode: .createNew)
            #expect(try recreated.size() == 0)
            try recreated.close()
        }
    }

    @Test(arguments: FileSystemKind.allCases)
    func removingMissingFileOrDirectoryThrows(kind: FileSystemKind) async throws {
        try await kind.withFileSystem { fileSystem, directory in
            expectIOError(.noSuchFile) { () throws(IOError) in
                try fileSystem.removeFile(at: directory.path("missing"))
            }
            try fileSystem.createDirectory(at: directory.path("sub"))
            expectIOError(.isADirectory) { () throws(IOError) in
                try fileSystem.removeFile(at: directory.path("sub"))
            }
        }
    }

    // MARK: - Directories

    @Test(arguments: FileSystemKind.allCases)
    func contentsOfDirectoryListsSortedNames(kind: FileSystemKind) async throws {
        try await kind.withFileSystem { fileSystem, directory in
            for name in ["b", "c", "a"] {
                try fileSystem.openFile(at: directory.path(name), mode: .createNew).close()
            }
            try fileSystem.createDirectory(at: directory.path("sub/deeper"))
            #expect(try fileSystem.contentsOfDirectory(at: directory.root) == ["a", "b", "c", "sub"])
            #expect(try fileSystem.contentsOfDirectory(at: directory.path("sub")) == ["deeper"])
            #expect(try fileSystem.contentsOfDirectory(at: directory.path("sub/deeper")) == [])
        }
    }

    @Test(arguments: FileSystemKind.allCases)
    func contentsOfMissingDirectoryOrFileThrows(kind: FileSystemKind) async throws {
        try await kind.withFileSystem { fileSystem, directory in
            expectIOError(.noSuchFile) { () throws(IOError) in
                try fileSystem.contentsOfDirectory(at: directory.path("missing"))
            }
            try fileSystem.openFile(at: directory.path("a"), mode: .createNew).close()
            expectIOError(.notADirectory) { () throws(IOError) in
                try fileSystem.contentsOfDirectory(at: directory.path("a"))
            }
        }
    }

    @Test(arguments: FileSystemKind.allCases)
    func createDirectoryCreatesParentsAndSucceedsIfPresent(kind: FileSystemKind) async throws {
        try await kind.withFileSystem { fileSystem, directory in
            try fileSystem.createDirectory(at: directory.path("a/b/c"))
            try fileSystem.createDirectory(at: directory.path("a/b/c"))
            try fileSystem.createDirectory(at: directory.path("a/b"))
            #expect(fileSystem.exists(at: directory.path("a/b/c")))
            try fileSystem.openFile(at: directory.path("a/b/c/file"), mode: .createNew).close()
        }
    }

    @Test(arguments: FileSystemKind.allCases)
    func createDirectoryOverOrUnderAFileThrows(kind: FileSystemKind) async throws {
        try await kind.withFileSystem { fileSystem, directory in
            try fileSystem.openFile(at: directory.path("a"), mode: .createNew).close()
            expectIOError(.fileExists) { () throws(IOError) in
                try fileSystem.createDirectory(at: directory.path("a"))
            }
            expectIOError(.notADirectory) { () throws(IOError) in
                try fileSystem.createDirectory(at: directory.path("a/b"))
            }
        }
    }

    @Test(arguments: FileSystemKind.allCases)
    func syncSucceedsOnFilesAndDirectories(kind: FileSystemKind) async throws {
        try await kind.withFileSystem { fileSystem, directory in
            let file = try fileSystem.openFile(at: directory.path("a"), mode: .createNew)
            try file.write([1], at: 0)
            try file.sync()
            try file.close()
            try fileSystem.syncDirectory(at: directory.root)
        }
    }

    @Test(arguments: FileSystemKind.allCases)
    func syncDirectoryOfMissingDirectoryOrFileThrows(kind: FileSystemKind) async throws {
        try await kind.withFileSystem { fileSystem, directory in
            expectIOError(.noSuchFile) { () throws(IOError) in
                try fileSystem.syncDirectory(at: directory.path("missing"))
            }
            try fileSystem.openFile(at: directory.path("a"), mode: .createNew).close()
            expectIOError(.notADirectory) { () throws(IOError) in
                try fileSystem.syncDirectory(at: directory.path("a"))
            }
        }
    }

    // MARK: - Locks

    @Test(arguments: FileSystemKind.allCases)
    func secondLockInSameProcessThrowsWouldBlockUntilUnlocked(kind: FileSystemKind) async throws {
        try await kind.withFileSystem { fileSystem, directory in
            let path = directory.path("LOCK")
            let first = try fileSystem.lockFile(at: path)
            #expect(fileSystem.exists(at: path))
            expectIOError(.wouldBlock) { () throws(IOError) in try fileSystem.lockFile(at: path) }
            expectIOError(.wouldBlock) { () throws(IOError) in try fileSystem.lockFile(at: path) }

            first.unlock()
            first.unlock()  // Harmless.

            let second = try fileSystem.lockFile(at: path)
            expectIOError(.wouldBlock) { () throws(IOError) in try fileSystem.lockFile(at: path) }
            second.unlock()
        }
    }

    @Test(arguments: FileSystemKind.allCases)
    func locksOnDifferentFilesDoNotConflict(kind: FileSystemKind) async throws {
        try await kind.withFileSystem { fileSystem, directory in
            let first = try fileSystem.lockFile(at: directory.path("LOCK1"))
            let second = try fileSystem.lockFile(at: directory.path("LOCK2"))
            first.unlock()
            second.unlock()
        }
    }

    @Test(arguments: FileSystemKind.allCases)
    func droppedLockIsReleased(kind: FileSystemKind) async throws {
        try await kind.withFileSystem { fileSystem, directory in
            let path = directory.path("LOCK")
            do {
                let lock = try fileSystem.lockFile(at: path)
                expectIOError(.wouldBlock) { () throws(IOError) in try fileSystem.lockFile(at: path) }
                withExtendedLifetime(lock) {}
            }
            let again = try fileSystem.lockFile(at: path)
            again.unlock()
        }
    }

    @Test(arguments: FileSystemKind.allCases)
    func handleLockExcludesOtherHandlesAndPathLocksUntilUnlocked(kind: FileSystemKind) async throws {
        try await kind.withFileSystem { fileSystem, directory in
            let path = directory.path("writer")
            let first = try fileSystem.openFile(at: path, mode: .createIfMissing)
            let second = try fileSystem.openFile(at: path, mode: .existing)
            try first.lock(.exclusive, waiting: false)
            try first.lock(.exclusive, waiting: true)  // Already held: nothing to wait for.
            expectIOError(.wouldBlock) { () throws(IOError) in try second.lock(.exclusive, waiting: false) }
            expectIOError(.wouldBlock) { () throws(IOError) in try second.lock(.shared, waiting: false) }
            expectIOError(.wouldBlock) { () throws(IOError) in try fileSystem.lockFile(at: path) }
            first.unlock()
            first.unlock()  // Harmless.
            try second.lock(.exclusive, waiting: false)
            expectIOError(.wouldBlock) { () throws(IOError) in try first.lock(.exclusive, waiting: false) }
            second.unlock()
            let byPath = try fileSystem.lockFile(at: path)
            expectIOError(.wouldBlock) { () throws(IOError) in try first.lock(.shared, waiting: false) }
            byPath.unlock()
            // Shared locks of two handles coexist, and exclude an exclusive one until both go.
            try first.lock(.shared, waiting: false)
            try second.lock(.shared, waiting: false)
            expectIOError(.wouldBlock) { () throws(IOError) in try fileSystem.lockFile(at: path) }
            first.unlock()
            expectIOError(.wouldBlock) { () throws(IOError) in try fileSystem.lockFile(at: path) }
            second.unlock()
            try fileSystem.lockFile(at: path).unlock()
            try first.close()
            try second.close()
        }
    }

    @Test(arguments: FileSystemKind.allCases)
    func closingAHandleReleasesItsLock(kind: FileSystemKind) async throws {
        try await kind.withFileSystem { fileSystem, directory in
            let path = directory.path("writer")
            let first = try fileSystem.openFile(at: path, mode: .createIfMissing)
            try first.lock(.exclusive, waiting: false)
            expectIOError(.wouldBlock) { () throws(IOError) in try fileSystem.lockFile(at: path) }
            try first.close()
            let second = try fileSystem.openFile(at: path, mode: .existing)
            try second.lock(.exclusive, waiting: false)
            try second.close()
        }
    }

    @Test(arguments: FileSystemKind.allCases)
    func waitingHandleLockGetsTheLockOnceItIsReleased(kind: FileSystemKind) async throws {
        try await kind.withFileSystem { fileSystem, directory in
            let path = directory.path("writer")
            let holder = try fileSystem.lockFile(at: path)
            let waiter = try fileSystem.openFile(at: path, mode: .existing)
            // A Dispatch thread, not a task: the waiting call blocks its thread, and tasks share a few.
            let released = DispatchSemaphore(value: 0)
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) {
                holder.unlock()
                released.signal()
            }
            try waiter.lock(.exclusive, waiting: true)
            released.wait()
            expectIOError(.wouldBlock) { () throws(IOError) in try fileSystem.lockFile(at: path) }
            waiter.unlock()
            try waiter.close()
        }
    }

    @Test(arguments: FileSystemKind.allCases)
    func lockInMissingDirectoryThrowsNoSuchFile(kind: FileSystemKind) async throws {
        try await kind.withFileSystem { fileSystem, directory in
            expectIOError(.noSuchFile) { () throws(IOError) in
                try fileSystem.lockFile(at: directory.path("nowhere/LOCK"))
            }
        }
    }

    @Test(arguments: FileSystemKind.allCases)
    func lockOnADirectoryThrowsIsADirectory(kind: FileSystemKind) async throws {
        try await kind.withFileSystem { fileSystem, directory in
            try fileSystem.createDirectory(at: directory.path("sub"))
            expectIOError(.isADirectory) { () throws(IOError) in
                try fileSystem.lockFile(at: directory.path("sub"))
            }
        }
    }
}
