import Foundation
import Logging
import StrataIO
import StrataStorage
import Testing

@testable import Strata

/// A migration on an in-memory file system, on both paths (rows and objects): after every operation that changes
/// the file system, what would survive a power loss at that instant (three policies: unsynced writes dropped; a
/// prefix of them kept, the last one torn; the same with the torn sector garbled) opens with the old model and
/// holds exactly the old objects, or refuses the old model, opens with the new one and holds exactly the migrated
/// objects; never neither, never a mix, never a leftover after the open. And an `ENOSPC` or `EIO` at every
/// operation of a migration is a typed error that leaves the old store (or, after the commit, the new one).
@Suite struct MigrationCrashTests {
    typealias Rows = RowMigrationTests

    static let store = "/m/store"

    static let mutating: Set<FaultInjectingFileSystem.Operation> = [
        .write, .truncate, .sync, .rename, .removeFile, .syncDirectory, .createDirectory, .open,
    ]

    static func configuration(_ fileSystem: any FileSystem) -> StrataStoreConfiguration {
        var configuration = StrataStoreConfiguration(
            storage: StoreConfiguration(
                durability: .full, pageSize: 1024,
                logger: Logger(label: "migration-crash-tests") { _ in SwiftLogNoOpLogHandler() }))
        configuration.fileSystem = fileSystem
        return configuration
    }

    /// A file system holding the v1 store, synced, and its objects.
    static func seeded() throws -> (InMemoryFileSystem, [String]) {
        let memory = InMemoryFileSystem()
        try memory.createDirectory(at: "/m")
        try memory.syncDirectory(at: "/")
        try Rows.seed(store, configuration: configuration(memory))
        return (memory, try Rows.dump(store, model: Rows.v1, configuration: configuration(memory)))
    }

    static func migrator(_ fileSystem: any FileSystem, rows: Bool) throws -> StoreMigrator {
        let mapping = try MappingModel.inferredMappingModel(forSourceModel: Rows.v1, destinationModel: Rows.v2)
        var migrator = StoreMigrator(
            directory: store, source: Rows.v1, destination: Rows.v2, mapping: mapping,
            configuration: configuration(fileSystem))
        migrator.streamsRows = rows
        return migrator
    }

    /// What a file system holds: "old" (the v1 objects exactly), "new" (the v2 objects exactly), or why neither.
    static func outcome(of fileSystem: any FileSystem, old: [String], new: [String]) -> String {
        do {
            let objects = try Rows.dump(store, model: Rows.v1, configuration: configuration(fileSystem))
            return objects == old ? "old" : "old model, other objects: \(objects)"
        } catch ObjectGraphError.incompatibleModel {
            do {
                let objects = try Rows.dump(store, model: Rows.v2, configuration: configuration(fileSystem))
                let leftovers = [".migration", ".premigration", ".migration-complete"].filter {
                    fileSystem.exists(at: store + $0)
                }
                guard leftovers.isEmpty else { return "leftovers \(leftovers)" }
                return objects == new ? "new" : "new model, other objects: \(objects)"
            } catch {
                return "neither model opens it: \(error)"
            }
        } catch {
            return "the old model fails: \(error)"
        }
    }

    final class Images: @unchecked Sendable {
        // @unchecked: every access holds `lock`.
        private let lock = NSLock()
        private var stored: [InMemoryFileSystem] = []
        func append(_ image: InMemoryFileSystem) { lock.withLock { stored.append(image) } }
        var all: [InMemoryFileSystem] { lock.withLock { stored } }
    }

    @Test(arguments: [true, false])
    func everyCrashPointLeavesTheOldOrTheMigratedStore(rows: Bool) throws {
        let (memory, old) = try Self.seeded()
        let images = Images()
        let faulty = FaultInjectingFileSystem(wrapping: memory) { index, operation in
            guard Self.mutating.contains(operation) else { return }
            let mixed = UInt64(index) &* 1_000_003
            for policy: InMemoryFileSystem.CrashPolicy in [
                .dropUnsynced, .keepUnsyncedPrefix(seed: mixed), .garbleLastSector(seed: mixed),
            ] {
                images.append(memory.crashImage(policy: policy))
            }
        }
        try Self.migrator(faulty, rows: rows).migrate()
        let new = try Rows.dump(Self.store, model: Rows.v2, configuration: Self.configuration(memory))
        #expect(new.count == 8 && new != old)
        var counts: [String: Int] = [:]
        var failures: [String] = []
        for (index, image) in images.all.enumerated() {
            let outcome = Self.outcome(of: image, old: old, new: new)
            counts[outcome == "old" || outcome == "new" ? outcome : "failed", default: 0] += 1
            if outcome != "old" && outcome != "new" { failures.append("image \(index): \(outcome)") }
        }
        print("migration crash points (\(rows ? "rows" : "objects")): \(images.all.count) images, \(counts)")
        #expect(failures.isEmpty, "\(failures.prefix(5))")
        // Both outcomes occur: crash points before and after the commit were checked.
        #expect(counts["old", default: 0] > 0 && counts["new", default: 0] > 0)
    }

    @Test(arguments: [IOError.Code.noSpace, .ioFailure], [true, false])
    func aFailureAtAnyOperationIsATypedErrorAndLeavesAStore(code: IOError.Code, rows: Bool) throws {
        let (baseline, old) = try Self.seeded()
        // The operations of a clean migration, counted.
        let counter = Images()
        let counting = FaultInjectingFileSystem(wrapping: baseline.crashImage(policy: .dropUnsynced)) { _, operation in
            if Self.mutating.contains(operation) { counter.append(InMemoryFileSystem()) }
        }
        try Self.migrator(counting, rows: rows).migrate()
        let operations = counter.all.count
        let new = try Rows.dump(Self.store, model: Rows.v2, configuration: Self.configuration(counting))
        var failures: [String] = []
        var (failedOld, failedNew) = (0, 0)
        for skip in 0..<operations {
            let memory = baseline.crashImage(policy: .dropUnsynced)
            let faulty = FaultInjectingFileSystem(wrapping: memory)
            faulty.inject(.init(on: Self.mutating, after: skip, code: code))
            do {
                try Self.migrator(faulty, rows: rows).migrate()
            } catch let error as ObjectGraphError {
                _ = error
            } catch {
                failures.append("operation \(skip): an untyped error \(error)")
            }
            switch Self.outcome(of: memory, old: old, new: new) {
            case "old": failedOld += 1
            case "new": failedNew += 1
            case let outcome: failures.append("operation \(skip): \(outcome)")
            }
        }
        print(
            "migration faults (\(code), \(rows ? "rows" : "objects")): \(operations) operations, \(failedOld) left the old store, \(failedNew) the new one"
        )
        #expect(failures.isEmpty, "\(failures.prefix(5))")
        #expect(failedOld > 0 && failedNew > 0)
    }
}
