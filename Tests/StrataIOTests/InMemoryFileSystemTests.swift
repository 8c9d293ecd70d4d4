import Testing

@testable import StrataIO

/// InMemoryFileSystem's own API and the places where it departs from a disk on purpose.
/// Shared behaviour is in FileSystemConformanceTests, crash semantics in InMemoryFileSystemCrashTests.
@Suite struct InMemoryFileSystemTests {
    @Test func contentsHelpersSeeCurrentAndDurableBytes() throws {
        let fileSystem = InMemoryFileSystem()
        let file = try fileSystem.openFile(at: "/a", mode: .createNew)
        try file.write([1, 2], at: 0)
        try file.sync()
        try file.write([3], at: 2)

        #expect(fileSystem.contents(of: "/a") == [1, 2, 3])
        #expect(fileSystem.durableContents(of: "/a") == [1, 2])
        #expect(fileSystem.fileSize(of: "/a") == 3)
        try file.close()
    }

    @Test func contentsHelpersReturnNilForMissingFilesAndDirectories() throws {
        let fileSystem = InMemoryFileSystem()
        try fileSystem.createDirectory(at: "/dir")
        for path in ["/missing", "/dir", "/", "/dir/missing", ""] {
            #expect(fileSystem.contents(of: path) == nil)
            #expect(fileSystem.durableContents(of: path) == nil)
            #expect(fileSystem.fileSize(of: path) == nil)
        }
    }

    @Test func setContentsReplacesBytesSeenByOpenHandles() throws {
        let fileSystem = InMemoryFileSystem()
        let file = try fileSystem.openFile(at: "/a", mode: .createNew)
        try file.write([1, 2, 3], at: 0)
        try fileSystem.setContents([9, 9], of: "/a")
        #expect(try file.read(count: 10, at: 0) == [9, 9])
        #expect(fileSystem.durableContents(of: "/a") == [9, 9])
        try file.close()
    }

    @Test func setContentsCreatesAMissingFileButNotItsDirectory() throws {
        let fileSystem = InMemoryFileSystem()
        try fileSystem.setContents([1], of: "/new")
        #expect(fileSystem.contents(of: "/new") == [1])
        expectIOError(.noSuchFile) { () throws(IOError) in try fileSystem.setContents([1], of: "/nowhere/new") }
        try fileSystem.createDirectory(at: "/dir")
        expectIOError(.isADirectory) { () throws(IOError) in try fileSystem.setContents([1], of: "/dir") }
    }

    @Test func absoluteAndRelativePathsNameTheSameEntries() throws {
        let fileSystem = InMemoryFileSystem()
        try fileSystem.createDirectory(at: "db")
        try fileSystem.setContents([1], of: "/db/a")
        #expect(fileSystem.contents(of: "db/a") == [1])
        #expect(fileSystem.contents(of: "/db/./a") == [1])
        #expect(fileSystem.contents(of: "/db/sub/../a") == [1])
        #expect(fileSystem.contents(of: "//db//a") == [1])
        #expect(try fileSystem.contentsOfDirectory(at: "/") == ["db"])
    }

    @Test func emptyPathThrowsNoSuchFile() {
        let fileSystem = InMemoryFileSystem()
        expectIOError(.noSuchFile) { () throws(IOError) in try fileSystem.openFile(at: "", mode: .createIfMissing) }
        expectIOError(.noSuchFile) { () throws(IOError) in try fileSystem.contentsOfDirectory(at: "") }
        #expect(!fileSystem.exists(at: ""))
    }

    /// A directory moves to a new name (a migration swaps store directories), with what it holds; never over an
    /// existing name or into itself, and a file never over a directory.
    @Test func renamingADirectoryMovesItToANewNameOnly() throws {
        let fileSystem = InMemoryFileSystem()
        try fileSystem.createDirectory(at: "/dir")
        try fileSystem.createDirectory(at: "/taken")
        try fileSystem.openFile(at: "/dir/file", mode: .createIfMissing).close()
        expectIOError(.fileExists) { () throws(IOError) in try fileSystem.rename(from: "/dir", to: "/taken") }
        expectIOError(.other(22)) { () throws(IOError) in try fileSystem.rename(from: "/dir", to: "/dir/inner") }
        expectIOError(.isADirectory) { () throws(IOError) in try fileSystem.rename(from: "/dir/file", to: "/taken") }
        try fileSystem.rename(from: "/dir", to: "/other")
        #expect(!fileSystem.exists(at: "/dir") && fileSystem.exists(at: "/other/file"))
        // Removing a directory needs it empty.
        expectIOError(.fileExists) { () throws(IOError) in try fileSystem.removeDirectory(at: "/other") }
        try fileSystem.removeFile(at: "/other/file")
        try fileSystem.removeDirectory(at: "/other")
        #expect(!fileSystem.exists(at: "/other"))
    }

    @Test func renamingAFileOntoItselfChangesNothing() throws {
        let fileSystem = InMemoryFileSystem()
        try fileSystem.setContents([1], of: "/a")
        try fileSystem.rename(from: "/a", to: "/a")
        #expect(fileSystem.contents(of: "/a") == [1])
    }

    @Test func eventsRecordSuccessfulOperationsInOrder() throws {
        let fileSystem = InMemoryFileSystem(recordsEvents: true)
        try fileSystem.createDirectory(at: "/db")
        let file = try fileSystem.openFile(at: "/db/a", mode: .createNew)
        try file.write([1, 2, 3], at: 0)
        _ = try file.read(count: 3, at: 0)
        try file.truncate(to: 2)
        try file.sync()
        try file.close()
        expectIOError(.noSuchFile) { () throws(IOError) in try fileSystem.removeFile(at: "/db/missing") }
        try fileSystem.rename(from: "/db/a", to: "/db/b")
        try fileSystem.syncDirectory(at: "/db")
        let lock = try fileSystem.lockFile(at: "/db/LOCK")
        lock.unlock()
        try fileSystem.removeFile(at: "/db/b")

        let expected: [InMemoryFileSystem.Event] = [
            .createDirectory(path: "/db"),
            .open(path: "/db/a", mode: .createNew),
            .write(path: "/db/a", offset: 0, count: 3),
            .truncate(path: "/db/a", size: 2),
            .sync(path: "/db/a"),
            .rename(from: "/db/a", to: "/db/b"),
            .syncDirectory(path: "/db"),
            .lock(path: "/db/LOCK"),
            .unlock(path: "/db/LOCK"),
            .removeFile(path: "/db/b"),
        ]
        #expect(fileSystem.events == expected)
        #expect(fileSystem.operationCount == expected.count)
    }

    @Test func operationsAreCountedWithoutRecordingEvents() throws {
        let fileSystem = InMemoryFileSystem()
        let file = try fileSystem.openFile(at: "/a", mode: .createNew)
        try file.write([1], at: 0)
        try file.sync()
        try file.close()
        #expect(fileSystem.operationCount == 3)
        #expect(fileSystem.events.isEmpty)
    }

    @Test func removedFilesAreCollectedOnceNothingRefersToThem() throws {
        let fileSystem = InMemoryFileSystem()
        for index in 0..<1_000 {
            let file = try fileSystem.openFile(at: "/f\(index)", mode: .createNew)
            try file.write([UInt8(truncatingIfNeeded: index)], at: 0)
            try file.close()
            try fileSystem.removeFile(at: "/f\(index)")
        }
        // Created and removed without a directory sync: neither namespace names them any more.
        let nodeCount = fileSystem.state.withLock { $0.files.count + $0.directories.count }
        #expect(nodeCount < 200)
        #expect(try fileSystem.contentsOfDirectory(at: "/") == [])
    }

    @Test func removedFileWhoseRemovalIsNotDurableIsNotCollected() throws {
        let fileSystem = InMemoryFileSystem()
        try fileSystem.setContents([42], of: "/keep")  // Durable name and contents.
        try fileSystem.removeFile(at: "/keep")
        fileSystem.state.withLock { $0.collectGarbage() }
        #expect(fileSystem.crashImage().contents(of: "/keep") == [42])
    }

    @Test func openHandleKeepsARemovedFileAliveThroughCollection() throws {
        let fileSystem = InMemoryFileSystem()
        let file = try fileSystem.openFile(at: "/a", mode: .createNew)
        try file.write([5], at: 0)
        try fileSystem.removeFile(at: "/a")
        fileSystem.state.withLock { $0.collectGarbage() }
        #expect(try file.read(count: 1, at: 0) == [5])
        try file.close()
    }
}
