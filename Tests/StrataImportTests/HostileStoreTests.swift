import Foundation
import StrataImport
import StrataImportTestSupport
import Testing

/// SQLite files the importer must refuse, each with the typed error that names what is wrong, leaving nothing at
/// the destination.
@Suite struct HostileStoreTests {
    /// Imports `source` (asking for `version`, when given) and returns the error, checking that no store (nor a
    /// partial `.importing` one) is left.
    static func refusal(_ source: String, version: String? = "Shop") throws -> ImportError? {
        defer { ShopStore.remove(source) }
        var importer = try CoreDataImporter(modelAt: ShopStore.model)
        importer.requestedVersion = version
        importer.currentVersion = "Shop"
        let destination = CoreDataImportTests.destination()
        defer { try? FileManager.default.removeItem(atPath: destination) }
        do {
            _ = try importer.importStore(at: source, into: destination)
            return nil
        } catch {
            #expect(!FileManager.default.fileExists(atPath: destination))
            #expect(!FileManager.default.fileExists(atPath: destination + ".importing"))
            return error
        }
    }

    @Test func aMissingTableIsNamed() throws {
        let source = try ShopStore.write { try $0.execute("DROP TABLE ZTAG") }
        #expect(try Self.refusal(source) == .missingTable("ZTAG"))
        let joins = try ShopStore.write { try $0.execute("DROP TABLE Z_2TAGS") }
        #expect(try Self.refusal(joins) == .missingTable("Z_2TAGS or Z_7ITEMS"))
        let primaryKeys = try ShopStore.write { try $0.execute("DROP TABLE Z_PRIMARYKEY") }
        #expect(try Self.refusal(primaryKeys) == .missingTable("Z_PRIMARYKEY"))
        let metadata = try ShopStore.write { try $0.execute("DROP TABLE Z_METADATA") }
        #expect(try Self.refusal(metadata) == .missingTable("Z_METADATA"))
    }

    @Test func withoutARequestedVersionEveryVersionSaysWhyItDoesNotFit() throws {
        let source = try ShopStore.write { try $0.execute("DROP TABLE ZTAG") }
        guard case .noMatchingVersion(let hashes, let reasons)? = try Self.refusal(source, version: nil) else {
            Issue.record("not refused as no matching version")
            return
        }
        #expect(hashes.count == 7 && hashes["Book"] != nil)
        #expect(reasons == ["Shop: the table ZTAG is missing", "Shop 2: the table ZTAG is missing"])
    }

    @Test func anUnknownColumnOrTableIsNamed() throws {
        let column = try ShopStore.write { try $0.execute("ALTER TABLE ZSHELF ADD COLUMN ZCOLOUR VARCHAR") }
        #expect(try Self.refusal(column) == .unknownColumn(table: "ZSHELF", column: "ZCOLOUR"))
        let joinColumn = try ShopStore.write { try $0.execute("ALTER TABLE Z_2TAGS ADD COLUMN Z_FOK_7TAGS INTEGER") }
        #expect(try Self.refusal(joinColumn) == .unknownColumn(table: "Z_2TAGS", column: "Z_FOK_7TAGS"))
        let table = try ShopStore.write { try $0.execute("CREATE TABLE ZGADGET (Z_PK INTEGER PRIMARY KEY)") }
        #expect(try Self.refusal(table) == .unknownTable("ZGADGET"))
        // `Z<n>_<NAME>` is a to-one's entity column only when NAME is a to-one.
        let entityColumn = try ShopStore.write { try $0.execute("ALTER TABLE ZREADER ADD COLUMN Z9_NAME INTEGER") }
        #expect(try Self.refusal(entityColumn) == .unknownColumn(table: "ZREADER", column: "Z9_NAME"))
        let missing = try ShopStore.write { try $0.execute("ALTER TABLE ZPOSTER DROP COLUMN Z_FOK_SHELF") }
        #expect(try Self.refusal(missing) == .missingColumn(table: "ZPOSTER", column: "Z_FOK_SHELF"))
    }

    @Test func valuesOfTheWrongTypeAreNamedWithTheirRow() throws {
        let text = try ShopStore.write { try $0.execute("UPDATE ZITEM SET ZPAGES = 'many' WHERE Z_PK = 1") }
        #expect(
            try Self.refusal(text)
                == .wrongType(table: "ZITEM", column: "ZPAGES", row: 1, expected: "INTEGER", found: "TEXT"))
        let blob = try ShopStore.write { try $0.execute("UPDATE ZSHELF SET ZLABEL = x'00' WHERE Z_PK = 2") }
        #expect(
            try Self.refusal(blob)
                == .wrongType(table: "ZSHELF", column: "ZLABEL", row: 2, expected: "TEXT", found: "BLOB"))
        let wide = try ShopStore.write { try $0.execute("UPDATE ZITEM SET ZPAGES = 40000 WHERE Z_PK = 1") }
        #expect(
            try Self.refusal(wide)
                == .invalidValue(table: "ZITEM", column: "ZPAGES", row: 1, reason: "40000 does not fit Integer 16"))
        let uuid = try ShopStore.write { try $0.execute("UPDATE ZITEM SET ZSKU = x'0102' WHERE Z_PK = 1") }
        #expect(
            try Self.refusal(uuid)
                == .invalidValue(table: "ZITEM", column: "ZSKU", row: 1, reason: "a UUID is 16 bytes, not 2"))
        let flag = try ShopStore.write { try $0.execute("UPDATE ZITEM SET ZINPRINT = 2 WHERE Z_PK = 1") }
        #expect(
            try Self.refusal(flag)
                == .invalidValue(table: "ZITEM", column: "ZINPRINT", row: 1, reason: "2 is no Boolean (0 or 1)"))
        let version = try ShopStore.write { try $0.execute("UPDATE ZTAG SET Z_OPT = NULL WHERE Z_PK = 2") }
        #expect(
            try Self.refusal(version)
                == .wrongType(table: "ZTAG", column: "Z_OPT", row: 2, expected: "INTEGER", found: "NULL"))
        let marker = try ShopStore.write { try $0.execute("UPDATE ZITEM SET ZCOVER = x'0741' WHERE Z_PK = 1") }
        #expect(
            try Self.refusal(marker)
                == .invalidValue(
                    table: "ZITEM", column: "ZCOVER", row: 1,
                    reason: "marker byte 7: Core Data writes 1 (inline) or 2 (external file)"))
    }

    @Test func aBadPropertyListIsRefused() throws {
        let garbage = try ShopStore.write { try $0.execute("UPDATE Z_METADATA SET Z_PLIST = x'00010203'") }
        #expect(try Self.refusal(garbage) == .invalidMetadata(reason: "Z_PLIST is not a property list (4 bytes)"))
        let noHashes = try ShopStore.write { file in
            let plist = try PropertyListSerialization.data(
                fromPropertyList: ["NSStoreType": "SQLite"], format: .binary, options: 0)
            try file.run("UPDATE Z_METADATA SET Z_PLIST = ?", [.blob(Array(plist))])
        }
        #expect(
            try Self.refusal(noHashes)
                == .invalidMetadata(reason: "the property list has no NSStoreModelVersionHashes dictionary"))
        let text = try ShopStore.write { try $0.execute("UPDATE Z_METADATA SET Z_PLIST = 'plist'") }
        #expect(try Self.refusal(text) == .invalidMetadata(reason: "Z_PLIST holds TEXT, not the property list's blob"))
    }

    @Test func hashesOfAnotherModelAreRefusedAndNamed() throws {
        let gadget = Data(repeating: 0xAB, count: 32)
        let source = try ShopStore.write { file in
            let plist = try ShopStore.metadata(version: 1, hashes: ["Gadget": gadget, "Book": Data(count: 32)])
            try file.run("UPDATE Z_METADATA SET Z_PLIST = ?", [.blob(Array(plist))])
        }
        guard case .noMatchingVersion(let hashes, let reasons)? = try Self.refusal(source, version: nil) else {
            Issue.record("not refused")
            return
        }
        #expect(hashes == ["Gadget": gadget.base64EncodedString(), "Book": Data(count: 32).base64EncodedString()])
        #expect(reasons.count == 2 && reasons[0].hasPrefix("Shop: Z_PRIMARYKEY does not match the model"))
        #expect(reasons[0].contains("names Gadget"))
        #expect(
            ImportError.noMatchingVersion(hashes: hashes, reasons: reasons).description.contains(
                "Gadget=\(gadget.base64EncodedString())"))
    }

    @Test func aFileThatIsNoDatabaseIsRefused() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("garbage-\(UUID()).sqlite").path
        try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        guard case .notADatabase(let named, let reason)? = try Self.refusal(path) else {
            Issue.record("not refused")
            return
        }
        #expect(named == path && reason.contains("not a database"))
        guard case .notADatabase(_, let missing)? = try Self.refusal(path + "-nowhere") else {
            Issue.record("not refused")
            return
        }
        #expect(missing == "no such file")
    }

    @Test func danglingReferencesAndUnknownEntitiesAreRefused() throws {
        let shelf = try ShopStore.write { try $0.execute("UPDATE ZITEM SET ZSHELF = 99 WHERE Z_PK = 1") }
        #expect(try Self.refusal(shelf) == .danglingReference(table: "ZITEM", column: "ZSHELF", row: 1, value: 99))
        // A Poster where a Shelf is expected: Z_PK 3 exists in ZPOSTER but not in ZSHELF.
        let join = try ShopStore.write { try $0.execute("INSERT INTO Z_2TAGS VALUES (1, 9)") }
        guard case .danglingReference(let table, let column, _, let value)? = try Self.refusal(join) else {
            Issue.record("not refused")
            return
        }
        #expect(table == "Z_2TAGS" && column == "Z_7TAGS" && value == 9)
        let abstract = try ShopStore.write { try $0.execute("UPDATE ZITEM SET Z_ENT = 2 WHERE Z_PK = 3") }
        #expect(try Self.refusal(abstract) == .unknownEntity(table: "ZITEM", row: 3, entityNumber: 2))
        let foreign = try ShopStore.write { try $0.execute("UPDATE ZITEM SET Z_ENT = 6 WHERE Z_PK = 3") }
        #expect(try Self.refusal(foreign) == .unknownEntity(table: "ZITEM", row: 3, entityNumber: 6))
        let polymorphic = try ShopStore.write { try $0.execute("UPDATE ZREADER SET Z2_FAVORITE = 1 WHERE Z_PK = 1") }
        #expect(
            try Self.refusal(polymorphic)
                == .invalidValue(
                    table: "ZREADER", column: "Z2_FAVORITE", row: 1,
                    reason: "Z_ENT 1 where the row it names is Magazine (3)"))
        let superentity = try ShopStore.write { try $0.execute("UPDATE Z_PRIMARYKEY SET Z_SUPER = 0 WHERE Z_ENT = 1") }
        #expect(
            try Self.refusal(superentity)
                == .entityMismatch(reason: "Book has Z_SUPER 0 where the model's superentity Item is 2"))
    }

    @Test func aOneToOneWhoseSidesDisagreeIsRefused() throws {
        let source = try ShopStore.write { try $0.execute("UPDATE ZREADER SET ZPOSTER = 1 WHERE Z_PK = 2") }
        #expect(
            try Self.refusal(source)
                == .invalidValue(
                    table: "ZREADER", column: "ZPOSTER", row: 2,
                    reason: "names Poster 1, whose owner names Z_PK 1: a one-to-one's two sides disagree"))
        let oneSided = try ShopStore.write { try $0.execute("UPDATE ZPOSTER SET ZOWNER = NULL WHERE Z_PK = 1") }
        #expect(
            try Self.refusal(oneSided)
                == .invalidValue(
                    table: "ZREADER", column: "ZPOSTER", row: 1,
                    reason: "names Poster 1, whose owner names nothing: a one-to-one's two sides disagree"))
    }

    @Test func aMissingExternalFileIsNamed() throws {
        let source = try ShopStore.write()
        defer { ShopStore.remove(source) }
        let file = URL(fileURLWithPath: source).deletingLastPathComponent()
            .appendingPathComponent(".Shop_SUPPORT/_EXTERNAL_DATA/\(ShopStore.externalUUID)").path
        try FileManager.default.removeItem(atPath: file)
        #expect(try Self.refusal(source) == .missingExternalData(table: "ZITEM", column: "ZCOVER", row: 2, path: file))
    }

    @Test func anExistingDestinationIsNotOverwritten() throws {
        let source = try ShopStore.write()
        defer { ShopStore.remove(source) }
        let destination = CoreDataImportTests.destination()
        try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: destination) }
        #expect(throws: ImportError.destinationExists(destination)) {
            try CoreDataImporter(modelAt: ShopStore.model).importStore(at: source, into: destination)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: destination).isEmpty)
    }
}
