import Foundation
import Strata
import StrataImportTestSupport
import Testing

/// `strata import`: its output, `--json` document, exit codes and messages.
@Suite struct ImportCommandTests {
    static func destination() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("import-cli-\(UUID().uuidString)").path
    }

    @Test func aStoreOfTheCurrentVersionIsImported() throws {
        let source = try ShopStore.write(version: 2)
        defer { ShopStore.remove(source) }
        let store = Self.destination()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let run = try ToolRunner.strata("import", source, "--model", ShopStore.model, store)
        #expect(run.status == 0, "\(run)")
        #expect(run.standardOutput.contains("imported \(source) into \(store)"))
        #expect(run.standardOutput.contains("  model version: Shop 2 (matched by entities, tables and columns)"))
        #expect(
            run.standardOutput.contains("  objects: 14 (Book 3, Magazine 1, Poster 4, Reader 2, Shelf 2, Tag 2)"))
        #expect(run.standardOutput.contains("  skipped Core Data tables: Z_MODELCACHE"))
        #expect(run.standardError.contains("strata import: warning: Core Data's version hashes cannot be computed"))
        let model = try ModelBundle(path: ShopStore.model).model(named: "Shop 2")
        #expect(
            try StrataStore.metadataForPersistentStore(at: store)[PersistentStoreMetadataKey.modelVersionHash]
                == model.versionHash)
        let fsck = try ToolRunner.strata("fsck", store)
        #expect(fsck.status == 0, "\(fsck)")
    }

    @Test func anEarlierVersionIsMigratedAndJSONSaysSo() throws {
        let source = try ShopStore.write(version: 1, leaveWAL: true)
        defer { ShopStore.remove(source) }
        let store = Self.destination()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let json = try ToolRunner.strata("import", source, "--model", ShopStore.model, store, "--json")
        #expect(json.status == 0, "\(json)")
        let document = try json.json()
        #expect(document["sourceVersion"] as? String == "Shop")
        #expect(document["destinationVersion"] as? String == "Shop 2")
        #expect(document["migrated"] as? Bool == true)
        #expect(document["readThroughCopy"] as? Bool == true)
        #expect(document["objects"] as? Int == 15)
        #expect((document["storeVersionHashes"] as? [String: String])?.count == 7)
    }

    @Test func theCompiledModelMatchesByCoreDatasHashes() throws {
        let source = try ShopStore.write(version: 2)
        defer { ShopStore.remove(source) }
        let store = Self.destination()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let compiled = try ShopStore.writeCompiledModel()
        defer {
            try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: compiled).deletingLastPathComponent().path)
        }
        let run = try ToolRunner.strata(
            "import", source, "--model", ShopStore.model, "--compiled-model", compiled, store)
        #expect(run.status == 0, "\(run)")
        #expect(run.standardOutput.contains("  model version: Shop 2 (matched by the compiled model's version hashes)"))
        #expect(!run.standardError.contains("warning"))
        let missing = try ToolRunner.strata(
            "import", source, "--model", ShopStore.model, "--compiled-model", compiled + "-nowhere", Self.destination())
        #expect(missing.status == 8 && missing.standardError.contains("Shop.momd-nowhere: no such file"), "\(missing)")
    }

    @Test func refusalsExitWithTheirCodeAndNameWhatIsWrong() throws {
        let store = Self.destination()
        let unknown = try ShopStore.write { try $0.execute("ALTER TABLE ZSHELF ADD COLUMN ZCOLOUR VARCHAR") }
        defer { ShopStore.remove(unknown) }
        let layout = try ToolRunner.strata("import", unknown, "--model", ShopStore.model, "--version", "Shop", store)
        #expect(layout.status == 8, "\(layout)")
        #expect(layout.standardError.contains("strata import: ZSHELF.ZCOLOUR is no property of the model"))
        let noVersion = try ToolRunner.strata("import", unknown, "--model", ShopStore.model, store)
        #expect(noVersion.status == 8)
        #expect(noVersion.standardError.contains("no version of the model fits the store"))
        #expect(noVersion.standardError.contains("Shop 2: ZSHELF.ZCOLOUR is no property of the model"))

        let wrong = try ShopStore.write { try $0.execute("UPDATE ZITEM SET ZPAGES = 'many' WHERE Z_PK = 1") }

        defer { ShopStore.remove(wrong) }
        let value = try ToolRunner.strata("import", wrong, "--model", ShopStore.model, store, "--json")
        #expect(value.status == 4, "\(value)")
        #expect(value.standardError.contains("ZITEM.ZPAGES of row Z_PK 1 holds TEXT where INTEGER is stored"))
        let failure = try value.json()
        #expect(failure["exitCode"] as? Int == 4)
        #expect((failure["error"] as? [String: Any])?["kind"] as? String == "wrongType")

        let garbage = FileManager.default.temporaryDirectory.appendingPathComponent("junk-\(UUID()).sqlite").path
        try Data(repeating: 7, count: 4096).write(to: URL(fileURLWithPath: garbage))
        defer { try? FileManager.default.removeItem(atPath: garbage) }
        let notDatabase = try ToolRunner.strata("import", garbage, "--model", ShopStore.model, store)
        #expect(notDatabase.status == 8)
        #expect(notDatabase.standardError.contains("is not an SQLite database"))
        #expect(!FileManager.default.fileExists(atPath: store))

        let missing = try ToolRunner.strata("import", garbage, store)
        #expect(missing.status == 64, "\(missing)")
    }
}
