import StrataIO
import Testing

/// What survives InMemoryFileSystem.crashImage: file data only after a sync, names only after a
/// sync of their directory (LevelDB's fault-injection tests, Pebble's CrashClone).
@Suite struct InMemoryFileSystemCrashTests {
    /// A file system with a durable, empty `/db` directory.
    private func makeFileSystem() throws -> InMemoryFileSystem {
        let fileSystem = InMemoryFileSystem()
        try fileSystem.createDirectory(at: "/db")
        try fileSystem.syncDirectory(at: "/")
        return fileSystem
    }

    /// Creates `path` with `bytes`, synced, and its name made durable.
    private func writeDurably(_ bytes: [UInt8], to path: String, in fileSystem: InMemoryFileSystem) throws {
        let file = try fileSystem.openFile(at: path, mode: .createNew)
        try file.write(bytes, at: 0)
        try file.sync()
        try file.close()
        try fileSystem.syncDirectory(at: "/db")
    }

    // MARK: - File data

    @Test func unsyncedWritesAreLost() throws {
        let fileSystem = try makeFileSystem()
        try writeDurably([1, 2, 3], to: "/db/a", in: fileSystem)
        let file = try fileSystem.openFile(at: "/db/a", mode: .existing)
        try file.write([4, 5], at: 3)
        try file.write([9], at: 0)

        let image = fileSystem.crashImage()
        #expect(image.contents(of: "/db/a") == [1, 2, 3])
        #expect(fileSystem.contents(of: "/db/a") == [9, 2, 3, 4, 5])
        try file.close()
    }

    @Test func syncedWritesAreKept() throws {
        let fileSystem = try makeFileSystem()
        try writeDurably([1, 2, 3], to: "/db/a", in: fileSystem)
        let file = try fileSystem.openFile(at: "/db/a", mode: .existing)
        try file.write([4, 5], at: 3)
        try file.sync()
        try file.write([6], at: 5)

        #expect(fileSystem.crashImage().contents(of: "/db/a") == [1, 2, 3, 4, 5])
        try file.close()
    }

    @Test func unsyncedTruncationIsUndone() throws {
        let fileSystem = try makeFileSystem()
        try writeDurably([1, 2, 3], to: "/db/a", in: fileSystem)
        let file = try fileSystem.openFile(at: "/db/a", mode: .existing)
        try file.truncate(to: 1)
        #expect(fileSystem.crashImage().contents(of: "/db/a") == [1, 2, 3])
        try file.sync()
        #expect(fileSystem.crashImage().contents(of: "/db/a") == [1])
        try file.close()
    }

    @Test func unsyncedTruncatingOpenIsUndone() throws {
        let fileSystem = try makeFileSystem()
        try writeDurably([1, 2, 3], to: "/db/a", in: fileSystem)
        try fileSystem.openFile(at: "/db/a", mode: .truncate).close()
        #expect(fileSystem.contents(of: "/db/a") == [])
        #expect(fileSystem.crashImage().contents(of: "/db/a") == [1, 2, 3])
    }

    // MARK: - Names

    @Test func fileCreatedWithoutDirectorySyncDisappears() throws {
        let fileSystem = try makeFileSystem()
        let file = try fileSystem.openFile(at: "/db/a", mode: .createNew)
        try file.write([1], at: 0)
        try file.sync()  // The data is durable, the name is not.

        let image = fileSystem.crashImage()
        #expect(!image.exists(at: "/db/a"))
        #expect(try image.contentsOfDirectory(at: "/db") == [])
        try file.close()
    }

    @Test func fileCreatedWithDirectorySyncKeepsOnlySyncedData() throws {
        let fileSystem = try makeFileSystem()
        let file = try fileSystem.openFile(at: "/db/a", mode: .createNew)
        try fileSystem.syncDirectory(at: "/db")
        try file.write([1], at: 0)

        #expect(fileSystem.crashImage().contents(of: "/db/a") == [])
        try file.sync()
        #expect(fileSystem.crashImage().contents(of: "/db/a") == [1])
        try file.close()
    }

    @Test func directoryCreatedWithoutParentSyncDisappears() throws {
        let fileSystem = InMemoryFileSystem()
        try fileSystem.createDirectory(at: "/db/sub")
        try fileSystem.syncDirectory(at: "/db")  // The entry "sub" is durable, "db" in "/" is not.
        try writeDurably([1], to: "/db/sub/a", in: fileSystem)
        try fileSystem.syncDirectory(at: "/db/sub")

        #expect(!fileSystem.crashImage().exists(at: "/db"))
        try fileSystem.syncDirectory(at: "/")
        #expect(fileSystem.crashImage().contents(of: "/db/sub/a") == [1])
    }

    @Test func renameWithoutDirectorySyncIsUndone() throws {
        let fileSystem = try makeFileSystem()
        try writeDurably([1], to: "/db/tmp", in: fileSystem)
        try fileSystem.rename(from: "/db/tmp", to: "/db/final")

        let image = fileSystem.crashImage()
        #expect(try image.contentsOfDirectory(at: "/db") == ["tmp"])
        #expect(image.contents(of: "/db/tmp") == [1])
    }

    @Test func renameWithDirectorySyncIsKept() throws {
        let fileSystem = try makeFileSystem()
        try writeDurably([1], to: "/db/tmp", in: fileSystem)
        try fileSystem.rename(from: "/db/tmp", to: "/db/final")
        try fileSystem.syncDirectory(at: "/db")

        let image = fileSystem.crashImage()
        #expect(try image.contentsOfDirectory(at: "/db") == ["final"])
        #expect(image.contents(of: "/db/final") == [1])
    }

    @Test func renameOverAFileWithoutDirectorySyncRestoresTheReplacedFile() throws {
        let fileSystem = try makeFileSystem()
        try writeDurably([1], to: "/db/current", in: fileSystem)
        try writeDurably([2], to: "/db/new", in: fileSystem)
        try fileSystem.rename(from: "/db/new", to: "/db/current")
        #expect(fileSystem.contents(of: "/db/current") == [2])

        let image = fileSystem.crashImage()
        #expect(image.contents(of: "/db/current") == [1])
        #expect(image.contents(of: "/db/new") == [2])

        try fileSystem.syncDirectory(at: "/db")
        let synced = fileSystem.crashImage()
        #expect(try synced.contentsOfDirectory(at: "/db") == ["current"])
        #expect(synced.contents(of: "/db/current") == [2])
    }

    @Test func renameBetweenDirectoriesSyncedOnlyAtDestinationLeavesBothNames() throws {
        let fileSystem = try makeFileSystem()
        try fileSystem.createDirectory(at: "/db/archive")
        try fileSystem.syncDirectory(at: "/db")
        try writeDurably([7], to: "/db/a", in: fileSystem)
        try fileSystem.rename(from: "/db/a", to: "/db/archive/a")
        try fileSystem.syncDirectory(at: "/db/archive")

        let image = fileSystem.crashImage()
        #expect(image.contents(of: "/db/a") == [7])
        #expect(image.contents(of: "/db/archive/a") == [7])

        try fileSystem.syncDirectory(at: "/db")
        let synced = fileSystem.crashImage()
        #expect(!synced.exists(at: "/db/a"))
        #expect(synced.contents(of: "/db/archive/a") == [7])
    }

    @Test func removalWithoutDirectorySyncIsUndone() throws {
        let fileSystem = try makeFileSystem()
        try writeDurably([1], to: "/db/a", in: fileSystem)
        try fileSystem.removeFile(at: "/db/a")
        #expect(fileSystem.crashImage().contents(of: "/db/a") == [1])

        try fileSystem.syncDirectory(at: "/db")
        #expect(!fileSystem.crashImage().exists(at: "/db/a"))
    }

    @Test func handleSurvivesRenameAndItsSyncCoversTheNewName() throws {
        let fileSystem = try makeFileSystem()
        let file = try fileSystem.openFile(at: "/db/tmp", mode: .createNew)
        try file.write([1, 2], at: 0)
        try fileSystem.rename(from: "/db/tmp", to: "/db/final")
        try fileSystem.syncDirectory(at: "/db")
        try file.write([3], at: 2)
        try file.sync()

        #expect(file.path == "/db/tmp")
        let image = fileSystem.crashImage()
        #expect(try image.contentsOfDirectory(at: "/db") == ["final"])
        #expect(image.contents(of: "/db/final") == [1, 2, 3])
        try file.close()
    }

    // MARK: - The image itself

    @Test func crashImageIsIndependentOfTheOriginal() throws {
        let fileSystem = try makeFileSystem()
        try writeDurably([1], to: "/db/a", in: fileSystem)
        let image = fileSystem.crashImage()

        let original = try fileSystem.openFile(at: "/db/a", mode: .existing)
        try original.write([2], at: 0)
        try original.sync()
        try original.close()
        let copy = try image.openFile(at: "/db/a", mode: .existing)
        try copy.write([3], at: 1)
        try copy.close()

        #expect(fileSystem.contents(of: "/db/a") == [2])
        #expect(image.contents(of: "/db/a") == [1, 3])
    }

    @Test func crashImageHoldsOnlyDurableStateSoItsOwnImageIsTheSame() throws {
        let fileSystem = try makeFileSystem()
        try writeDurably([1, 2], to: "/db/a", in: fileSystem)
        let file = try fileSystem.openFile(at: "/db/b", mode: .createNew)
        try file.write([3], at: 0)

        let image = fileSystem.crashImage()
        let imageOfImage = image.crashImage()
        #expect(try imageOfImage.contentsOfDirectory(at: "/db") == ["a"])
        #expect(imageOfImage.contents(of: "/db/a") == [1, 2])
        #expect(image.durableContents(of: "/db/a") == [1, 2])
        try file.close()
    }

    @Test func locksAreNotCarriedIntoTheCrashImage() throws {
        let fileSystem = try makeFileSystem()
        let lock = try fileSystem.lockFile(at: "/db/LOCK")
        try fileSystem.syncDirectory(at: "/db")

        let image = fileSystem.crashImage()
        let relocked = try image.lockFile(at: "/db/LOCK")
        relocked.unlock()
        expectIOError(.wouldBlock) { () throws(IOError) in try fileSystem.lockFile(at: "/db/LOCK") }
        lock.unlock()
    }

    @Test func setContentsCountsAsDurable() throws {
        let fileSystem = try makeFileSystem()
        try fileSystem.setContents([4, 2], of: "/db/surgery")
        #expect(fileSystem.crashImage().contents(of: "/db/surgery") == [4, 2])
    }

    // MARK: - Crash policies

    /// A durable file `/db/log` holding `[0xAA] * 4`, then unsynced appends of 1000 bytes each
    /// (`[1] * 1000`, `[2] * 1000`, `[3] * 1000`).
    private func makeLogWithUnsyncedAppends() throws -> InMemoryFileSystem {
        let fileSystem = try makeFileSystem()
        try writeDurably([UInt8](repeating: 0xAA, count: 4), to: "/db/log", in: fileSystem)
        let file = try fileSystem.openFile(at: "/db/log", mode: .existing)
        for value in UInt8(1)...3 {
            try file.write([UInt8](repeating: value, count: 1000), at: try file.size())
        }
        try file.close()
        return fileSystem
    }

    @Test func dropUnsyncedIsTheDefaultPolicy() throws {
        let fileSystem = try makeLogWithUnsyncedAppends()
        #expect(fileSystem.crashImage().contents(of: "/db/log") == [UInt8](repeating: 0xAA, count: 4))
        #expect(
            fileSystem.crashImage(policy: .dropUnsynced).contents(of: "/db/log")
                == fileSystem.crashImage().contents(of: "/db/log")
        )
    }

    @Test func keepUnsyncedPrefixKeepsSyncedDataAndAPrefixOfTheAppends() throws {
        let fileSystem = try makeLogWithUnsyncedAppends()
        let current = try #require(fileSystem.contents(of: "/db/log"))
        var sizes: Set<Int> = []
        for seed in UInt64(0)..<200 {
            let survived = try #require(
                fileSystem.crashImage(policy: .keepUnsyncedPrefix(seed: seed)).contents(of: "/db/log")
            )
            #expect(survived.count >= 4, "seed \(seed)")
            #expect(Array(current.prefix(survived.count)) == survived, "seed \(seed)")
            sizes.insert(survived.count)
        }
        // Across seeds, a crash loses everything unsynced, keeps everything, and tears mid-write.
        #expect(sizes.contains(4))
        #expect(sizes.contains(current.count))
        #expect(sizes.contains { $0 % 1000 != 4 })
    }

    @Test func seededPolicyGivesTheSameImageForTheSameSeed() throws {
        let fileSystem = try makeLogWithUnsyncedAppends()
        for policy in [InMemoryFileSystem.CrashPolicy.keepUnsyncedPrefix(seed: 7), .garbleLastSector(seed: 7)] {
            #expect(
                fileSystem.crashImage(policy: policy).contents(of: "/db/log")
                    == fileSystem.crashImage(policy: policy).contents(of: "/db/log")
            )
        }
    }

    @Test func garbleLastSectorOnlyTouchesTheTornWritesLastSector() throws {
        let fileSystem = try makeLogWithUnsyncedAppends()
        let current = try #require(fileSystem.contents(of: "/db/log"))
        var garbledSomewhere = false
        for seed in UInt64(0)..<200 {
            let survived = try #require(
                fileSystem.crashImage(policy: .garbleLastSector(seed: seed)).contents(of: "/db/log")
            )
            #expect(survived.count >= 4 && survived.count <= current.count, "seed \(seed)")
            #expect(survived.prefix(4).allSatisfy { $0 == 0xAA }, "seed \(seed)")
            // Everything before the last sector of what survived is exactly what was written.
            let intact = max(4, (survived.count - 1) / InMemoryFileSystem.CrashPolicy.sectorSize * 512)
            #expect(survived.prefix(intact) == current.prefix(intact), "seed \(seed)")
            if survived != Array(current.prefix(survived.count)) { garbledSomewhere = true }
        }
        #expect(garbledSomewhere)
    }

    @Test func crashPoliciesKeepNamesExactly() throws {
        let fileSystem = try makeLogWithUnsyncedAppends()
        let file = try fileSystem.openFile(at: "/db/unsynced-name", mode: .createNew)
        try file.write([1], at: 0)
        try file.sync()
        try file.close()
        for seed in UInt64(0)..<20 {
            let image = fileSystem.crashImage(policy: .keepUnsyncedPrefix(seed: seed))
            #expect(try image.contentsOfDirectory(at: "/db") == ["log"])
        }
    }
}
