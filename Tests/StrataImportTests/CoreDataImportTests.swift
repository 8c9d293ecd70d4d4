import Foundation
import Strata
import StrataImport
import StrataImportTestSupport
import Testing

/// Stores the transformable's bytes as they are, so that a test reads back exactly what Core Data stored.
struct PassThroughTransformer: ValueTransformer {
    func transformedValue(_ value: Any) throws -> Data { value as! Data }
    func reverseTransformedValue(_ data: Data) throws -> any Hashable & Sendable { data }
}

/// Imports of the Shop store (``ShopStore``), compared with what the SQLite file holds: every row's entity, version
/// and to-ones, every to-many (ordered ones in order), every attribute type's value exactly.
@Suite struct CoreDataImportTests {
    init() {
        ValueTransformerRegistry.shared.register(PassThroughTransformer(), named: "ShopKeywordsTransformer")
    }

    static func destination() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("imported-\(UUID().uuidString)").path
    }

    static func openImported(
        _ directory: String, version: String = "Shop 2"
    ) throws -> (StrataStore, ManagedObjectModel) {
        let model = try ModelBundle(path: ShopStore.model).model(named: version)
        return (try StrataStore(directory: directory, model: model, configuration: StrataStoreConfiguration()), model)
    }

    /// The hashes ``CoreDataImporter/compiledVersionHashes(at:)`` reads from a compiled model written for the test
    /// (and removed).
    static func compiledHashes(versions: [String: [String: Data]]? = nil) throws -> [String: [String: Data]] {
        let compiled = try ShopStore.writeCompiledModel(versions: versions)
        defer {
            try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: compiled).deletingLastPathComponent().path)
        }
        return try CoreDataImporter.compiledVersionHashes(at: compiled)
    }

    /// The value a Strata row holds for `attribute`, external blobs read.
    static func value(_ row: StoredRow, _ name: String, in store: StrataStore) throws -> AttributeValue? {
        let attribute = row.entity.attributesByName[name]!
        let index = row.entity.persistentAttributes.firstIndex { $0 === attribute }!
        if let reference = row.externalReferences[index] { return .data(try store.externalData(reference)) }
        return row.values[index]
    }

    @Test func everyRowKeepsItsEntityVersionAndToOnesAsSQLiteHoldsThem() throws {
        let source = try ShopStore.write(version: 2)
        defer { ShopStore.remove(source) }
        let destination = Self.destination()
        defer { try? FileManager.default.removeItem(atPath: destination) }
        let report = try CoreDataImporter(modelAt: ShopStore.model).importStore(at: source, into: destination)
        #expect(report.sourceVersion == "Shop 2" && !report.migrated && report.match == .tableStructure)
        #expect(report.objects == 14)
        #expect(report.objectsByEntity == ["Book": 3, "Magazine": 1, "Poster": 4, "Reader": 2, "Shelf": 2, "Tag": 2])
        #expect(report.externalValues == 1)
        #expect(report.skippedTables == ["Z_MODELCACHE"])
        #expect(report.storeUUID == ShopStore.storeUUID)
        #expect(report.warnings.contains { $0.contains("matched by the store's entities, tables and columns") })

        let (store, model) = try Self.openImported(destination)
        defer { try? store.close() }
        #expect(store.metadata["CoreDataStoreUUID"] == ShopStore.storeUUID)
        let sqlite = try SQLiteFile(path: source)
        let names = Dictionary(
            uniqueKeysWithValues: try sqlite.run("SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY").map { row in
                guard case .integer(let number) = row[0], case .text(let name) = row[1] else { fatalError() }
                return (number, name)
            })
        var compared = 0
        for (table, root) in [
            ("ZITEM", "Item"), ("ZPOSTER", "Poster"), ("ZREADER", "Reader"), ("ZSHELF", "Shelf"), ("ZTAG", "Tag"),
        ] {
            let columns = try sqlite.run("PRAGMA table_info(\(table))").map { row -> String in
                guard case .text(let name) = row[1] else { fatalError() }
                return name
            }
            for row in try sqlite.run("SELECT * FROM \(table)") {
                func column(_ name: String) -> SQLiteValue { row[columns.firstIndex(of: name)!] }
                guard case .integer(let key) = column("Z_PK"), case .integer(let number) = column("Z_ENT"),
                    case .integer(let version) = column("Z_OPT")
                else { Issue.record("\(table): a row without Z_PK, Z_ENT or Z_OPT"); continue }
                let imported = try #require(
                    try store.row(UInt64(key), of: model.entity(named: root)!), "\(table) \(key)")
                #expect(imported.entity.name == names[number], "\(table) \(key)")
                #expect(imported.version == UInt64(version), "\(table) \(key)")
                for relationship in imported.entity.toOneRelationships {
                    let stored = imported.references[relationship.toOneIndex!]
                    switch column("Z" + relationship.name.uppercased()) {
                    case .integer(let target):
                        #expect(stored?.rowID == UInt64(target), "\(table) \(key) \(relationship.name)")
                    default: #expect(stored == nil, "\(table) \(key) \(relationship.name)")
                    }
                }
                compared += 1
            }
        }
        #expect(compared == 14)

        func related(_ entity: String, _ key: UInt64, _ relationship: String) throws -> [UInt64] {
            let entityDescription = try #require(try store.row(key, of: model.entity(named: entity)!)).entity
            return try store.relatedObjects(
                through: entityDescription.relationshipsByName[relationship]!,
                of: StoredReference(entity: entityDescription, rowID: key)
            ).map(\.rowID)
        }
        func keys(_ sql: String, _ argument: Int64) throws -> [UInt64] {
            try sqlite.run(sql, [.integer(argument)]).map { row in
                guard case .integer(let key) = row[0] else { fatalError() }
                return UInt64(key)
            }
        }
        for shelf in [Int64(1), 2] {
            #expect(
                Set(try related("Shelf", UInt64(shelf), "items"))
                    == Set(try keys("SELECT Z_PK FROM ZITEM WHERE ZSHELF = ?", shelf)))
            #expect(
                try related("Shelf", UInt64(shelf), "posters")
                    == keys("SELECT Z_PK FROM ZPOSTER WHERE ZSHELF = ? ORDER BY Z_FOK_SHELF, Z_PK", shelf))
        }
        #expect(try related("Shelf", 1, "posters") == [2, 1])
        for tag in [Int64(1), 2] {
            #expect(
                Set(try related("Tag", UInt64(tag), "items"))
                    == Set(try keys("SELECT Z_2ITEMS FROM Z_2TAGS WHERE Z_7TAGS = ?", tag)))
        }
        for item in [Int64(1), 2, 3, 5] {
            let entity = item == 3 ? "Magazine" : "Book"
            #expect(
                Set(try related(entity, UInt64(item), "tags"))
                    == Set(try keys("SELECT Z_7TAGS FROM Z_2TAGS WHERE Z_2ITEMS = ?", item)))
        }
        for reader in [Int64(1), 2] {
            #expect(
                try related("Reader", UInt64(reader), "reading")
                    == keys("SELECT Z_1READING FROM Z_1READERS WHERE Z_5READERS = ? ORDER BY Z_FOK_1READING", reader))
        }
        #expect(try related("Reader", 1, "reading") == [2, 1])
        #expect(Set(try related("Book", 1, "readers")) == [1, 2])
    }

    @Test func everyAttributeTypeComesBackExactly() throws {
        let source = try ShopStore.write(version: 2)
        defer { ShopStore.remove(source) }
        let destination = Self.destination()
        defer { try? FileManager.default.removeItem(atPath: destination) }
        _ = try CoreDataImporter(modelAt: ShopStore.model).importStore(at: source, into: destination)
        let (store, model) = try Self.openImported(destination)
        defer { try? store.close() }
        let item = model.entity(named: "Item")!
        let dune = try #require(try store.row(1, of: item))
        func value(_ row: StoredRow, _ name: String) throws -> AttributeValue? { try Self.value(row, name, in: store) }
        #expect(try value(dune, "name") == .string("Dune"))
        #expect(try value(dune, "pages") == .integer(412))
        #expect(try value(dune, "words") == .integer(188_000))
        #expect(try value(dune, "isbn") == .integer(9_780_441_013_593))
        #expect(try value(dune, "price") == .decimal(Decimal(string: "12.99")!))
        #expect(try value(dune, "rating") == .double(4.25))
        #expect(try value(dune, "weight") == .float(ShopStore.duneWeight))
        #expect(try value(dune, "inPrint") == .boolean(true))
        // Bit for bit: the stored seconds since 2001.
        guard case .date(let created)? = try value(dune, "created") else { throw Failure("created") }
        #expect(created.timeIntervalSinceReferenceDate.bitPattern == ShopStore.duneCreated.bitPattern)
        #expect(try value(dune, "sku") == .uuid(ShopStore.duneSKU))
        #expect(try value(dune, "homepage") == .uri(URL(string: "https://example.org/dune")!))
        #expect(try value(dune, "cover") == .data(ShopStore.duneCover))
        guard case .object(let keywords)? = try value(dune, "keywords") else { throw Failure("keywords") }
        #expect(keywords.value as? Data == ShopStore.keywords)

        let emma = try #require(try store.row(2, of: item))
        #expect(try value(emma, "cover") == .data(ShopStore.emmaCover))
        // A DECIMAL column has NUMERIC affinity: SQLite keeps "1234567890.123456789" as the REAL nearest to it, and
        // the import takes that REAL's shortest decimal form, which is what the file holds.
        let held = try SQLiteFile(path: source).run("SELECT typeof(ZPRICE), ZPRICE FROM ZITEM WHERE Z_PK = 2")[0]
        #expect(held[0] == .text("real"))
        guard case .real(let price) = held[1] else { throw Failure("price") }
        #expect(try value(emma, "price") == .decimal(Decimal(string: "\(price)")!))
        #expect(try value(emma, "price") == .decimal(Decimal(string: "1234567890.1234567")!))
        #expect(try value(emma, "pages") == .integer(-3))
        #expect(try value(emma, "isbn") == .integer(Int64.max))
        #expect(try value(emma, "inPrint") == .boolean(false))
        #expect(try value(emma, "created") == nil)

        let wired = try #require(try store.row(3, of: item))
        #expect(wired.entity.name == "Magazine")
        #expect(try value(wired, "issue") == .integer(42))
        // Not an external-storage attribute: a leading 2 is data, not a marker.
        #expect(try value(wired, "scan") == .data(Data([0x02, 0x01, 0x00])))
        #expect(try value(wired, "created") == .date(Date(timeIntervalSinceReferenceDate: -86_400)))

        let empty = try #require(try store.row(5, of: item))
        #expect(try value(empty, "price") == .decimal(7))
        #expect(try value(empty, "name") == nil && value(empty, "cover") == nil && value(empty, "sku") == nil)
    }

    @Test func theObjectGraphReadsTheImportedStore() throws {
        let source = try ShopStore.write(version: 2)
        defer { ShopStore.remove(source) }
        let destination = Self.destination()
        defer { try? FileManager.default.removeItem(atPath: destination) }
        _ = try CoreDataImporter(modelAt: ShopStore.model).importStore(at: source, into: destination)
        let model = try ModelBundle(path: ShopStore.model).model(named: "Shop 2")
        let coordinator = PersistentStoreCoordinator(model: model)
        let store = try coordinator.addPersistentStore(.strata(directory: destination))
        defer { try? coordinator.removePersistentStore(store) }
        let context = ManagedObjectContext(coordinator: coordinator)
        let readers = try context.fetch(FetchRequest<ManagedObject>(entityName: "Reader"))
        let ann = try #require(try readers.first { try $0.value(forKey: "name") as? String == "Ann" })
        let reading = try #require(try ann.value(forKey: "reading") as? [ManagedObject])
        #expect(try reading.map { try $0.value(forKey: "name") as? String } == ["Emma", "Dune"])
        let favorite = try #require(try ann.value(forKey: "favorite") as? ManagedObject)
        #expect(favorite.entity.name == "Magazine")
        let poster = try #require(try ann.value(forKey: "poster") as? ManagedObject)
        #expect(try poster.value(forKey: "title") as? String == "Map")
        #expect(try poster.value(forKey: "owner") as? ManagedObject === ann)
        // The row versions are Core Data's: a save goes on from Z_OPT.
        let shelves = try context.fetch(FetchRequest<ManagedObject>(entityName: "Shelf"))
        let b2 = try #require(try shelves.first { try $0.value(forKey: "label") as? String == "B2" })
        try b2.setValue("B3", forKey: "label")
        try context.save()
        #expect(try (store as! StrataStore).row(2, of: model.entity(named: "Shelf")!)?.version == 4)
        // New objects get row IDs past Core Data's.
        let tag = ManagedObject(entity: model.entity(named: "Tag")!, insertInto: context)
        try tag.setValue("fresh", forKey: "name")
        try context.save()
        #expect((tag.objectID.rowID ?? 0) > 2)
    }

    @Test func aStoreWithAWALFileIsReadThroughItAndLeftUntouched() throws {
        let source = try ShopStore.write(version: 2, leaveWAL: true)
        defer { ShopStore.remove(source) }
        #expect(FileManager.default.fileExists(atPath: source + "-wal"))
        let folder = URL(fileURLWithPath: source).deletingLastPathComponent().path
        let before = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        let (file, wal) = (
            try Data(contentsOf: URL(fileURLWithPath: source)),
            try Data(contentsOf: URL(fileURLWithPath: source + "-wal"))
        )
        let destination = Self.destination()
        defer { try? FileManager.default.removeItem(atPath: destination) }
        let report = try CoreDataImporter(modelAt: ShopStore.model).importStore(at: source, into: destination)
        #expect(report.readThroughCopy)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == before)
        #expect(try Data(contentsOf: URL(fileURLWithPath: source)) == file)
        #expect(try Data(contentsOf: URL(fileURLWithPath: source + "-wal")) == wal)
        let (store, model) = try Self.openImported(destination)
        defer { try? store.close() }
        let walOnly = try #require(try store.row(3, of: model.entity(named: "Tag")!))
        #expect(try Self.value(walOnly, "name", in: store) == .string("wal-only"))
        let shelf = try #require(try store.row(2, of: model.entity(named: "Shelf")!))
        #expect(try Self.value(shelf, "label", in: store) == .string("B2-wal") && shelf.version == 4)
    }

    @Test func aStoreWithoutWALIsOpenedWhereItLiesAndLeftUntouched() throws {
        let source = try ShopStore.write(version: 2)
        defer { ShopStore.remove(source) }
        let folder = URL(fileURLWithPath: source).deletingLastPathComponent().path
        let before = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: source))
        let destination = Self.destination()
        defer { try? FileManager.default.removeItem(atPath: destination) }
        let report = try CoreDataImporter(modelAt: ShopStore.model).importStore(at: source, into: destination)
        #expect(!report.readThroughCopy)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == before)
        #expect(try Data(contentsOf: URL(fileURLWithPath: source)) == bytes)
    }

    @Test func aPathWithSpacesAndURICharactersIsOpened() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("odd #1 ?x=%20 \(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = try ShopStore.write(to: folder.appendingPathComponent("My Shop.sqlite").path, version: 2)
        defer { ShopStore.remove(source) }
        let destination = Self.destination()
        defer { try? FileManager.default.removeItem(atPath: destination) }
        let report = try CoreDataImporter(modelAt: ShopStore.model).importStore(at: source, into: destination)
        #expect(report.objects == 14 && report.externalValues == 1)
    }

    @Test func coreDatasHistoryTablesAreSkippedAndReported() throws {
        let source = try ShopStore.write(version: 2) { file in
            try file.execute(
                """
                CREATE TABLE ACHANGE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCHANGETYPE INTEGER );
                CREATE TABLE ATRANSACTION ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZTIMESTAMP FLOAT );
                INSERT INTO Z_PRIMARYKEY VALUES (16001, 'CHANGE', 0, 0), (16002, 'TRANSACTION', 0, 0);
                INSERT INTO ACHANGE VALUES (1, 16001, 1, 0);
                """)
        }
        defer { ShopStore.remove(source) }
        let destination = Self.destination()
        defer { try? FileManager.default.removeItem(atPath: destination) }
        let report = try CoreDataImporter(modelAt: ShopStore.model).importStore(at: source, into: destination)
        #expect(report.skippedTables == ["ACHANGE", "ATRANSACTION", "Z_MODELCACHE"])
        #expect(report.objects == 14)
    }

    @Test func anEarlierVersionIsFoundAndMigratedOnTheWayIn() throws {
        let source = try ShopStore.write(version: 1)
        defer { ShopStore.remove(source) }
        let destination = Self.destination()
        defer { try? FileManager.default.removeItem(atPath: destination) }
        let report = try CoreDataImporter(modelAt: ShopStore.model).importStore(at: source, into: destination)
        #expect(report.sourceVersion == "Shop" && report.destinationVersion == "Shop 2" && report.migrated)
        #expect(report.warnings.contains { $0.contains("migrated from Shop to Shop 2") })
        let bundle = try ModelBundle(path: ShopStore.model)
        let metadata = try StrataStore.metadataForPersistentStore(at: destination)
        #expect(
            metadata[PersistentStoreMetadataKey.modelVersionHash] == (try bundle.model(named: "Shop 2")).versionHash)
        let coordinator = PersistentStoreCoordinator(model: try bundle.model(named: "Shop 2"))
        let store = try coordinator.addPersistentStore(.strata(directory: destination))
        defer { try? coordinator.removePersistentStore(store) }
        let context = ManagedObjectContext(coordinator: coordinator)
        let shelves = try context.fetch(FetchRequest<ManagedObject>(entityName: "Shelf"))
        let a1 = try #require(try shelves.first { try $0.value(forKey: "label") as? String == "A1" })
        let posters = try #require(try a1.value(forKey: "posters") as? [ManagedObject])
        #expect(try posters.map { try $0.value(forKey: "title") as? String } == ["Sky", "Map"])
        #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Item")) == 4)
    }

    @Test func aRequestedVersionIsUsedAndAnUnknownOneRefused() throws {
        let source = try ShopStore.write(version: 1)
        defer { ShopStore.remove(source) }
        var importer = try CoreDataImporter(modelAt: ShopStore.model)
        importer.requestedVersion = "Shop 3"
        #expect(throws: ImportError.unknownVersion("Shop 3", available: ["Shop", "Shop 2"])) {
            try importer.importStore(at: source, into: Self.destination())
        }
        importer.requestedVersion = "Shop 2"
        #expect(throws: ImportError.missingColumn(table: "ZTAG", column: "ZCOLOR")) {
            try importer.importStore(at: source, into: Self.destination())
        }
        importer.requestedVersion = "Shop"
        importer.currentVersion = "Shop"
        let destination = Self.destination()
        defer { try? FileManager.default.removeItem(atPath: destination) }
        let report = try importer.importStore(at: source, into: destination)
        #expect(report.match == .requested && !report.migrated && report.objects == 14)
    }

    @Test func theCompiledModelsHashesChooseTheVersionExactly() throws {
        let compiled = try ShopStore.writeCompiledModel()
        defer {
            try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: compiled).deletingLastPathComponent().path)
        }
        var importer = try CoreDataImporter(modelAt: ShopStore.model)
        importer.compiledVersionHashes = try CoreDataImporter.compiledVersionHashes(at: compiled)
        let destination = Self.destination()
        defer { try? FileManager.default.removeItem(atPath: destination) }
        let second = try ShopStore.write(version: 2)
        defer { ShopStore.remove(second) }
        let report = try importer.importStore(at: second, into: destination)
        #expect(report.match == .versionHashes && report.sourceVersion == "Shop 2" && report.warnings.isEmpty)
        // The plist's own path works too, and version 1's hashes choose version 1 (then migrated).
        importer.compiledVersionHashes = try CoreDataImporter.compiledVersionHashes(at: compiled + "/VersionInfo.plist")
        let migrated = Self.destination()
        defer { try? FileManager.default.removeItem(atPath: migrated) }
        let earlier = try ShopStore.write(version: 1)
        defer { ShopStore.remove(earlier) }
        let first = try importer.importStore(at: earlier, into: migrated)
        #expect(first.match == .versionHashes && first.sourceVersion == "Shop" && first.migrated)
        // Two versions with the same hashes (they differ only in what Core Data does not hash): the current one.
        importer.compiledVersionHashes = try Self.compiledHashes(versions: [
            "Shop": ShopStore.versionHashes(version: 2), "Shop 2": ShopStore.versionHashes(version: 2),
        ])
        let shared = Self.destination()
        defer { try? FileManager.default.removeItem(atPath: shared) }
        #expect(try importer.importStore(at: second, into: shared).sourceVersion == "Shop 2")
    }

    @Test func hashesThatMatchNoVersionOrALayoutThatDoesNotFitAreRefused() throws {
        let source = try ShopStore.write()
        defer { ShopStore.remove(source) }
        var importer = try CoreDataImporter(modelAt: ShopStore.model)
        importer.compiledVersionHashes = try Self.compiledHashes(versions: ["Shop": ShopStore.versionHashes(version: 5)]
        )
        guard
            case .noMatchingVersion(_, let reasons) = try #require(
                throws: ImportError.self,
                performing: { try importer.importStore(at: source, into: Self.destination()) })
        else { throw Failure("not refused as no matching version") }
        #expect(
            reasons == [
                "Shop: hashes differ for Book, Item, Magazine, Poster, Reader, Shelf, Tag",
                "Shop 2: the compiled model has no hashes for it",
            ])
        // Hashes say version 2, the tables are version 1's: the layout is still checked.
        importer.compiledVersionHashes = try Self.compiledHashes()
        let mislabeled = try ShopStore.write(version: 1) { file in
            try file.run("UPDATE Z_METADATA SET Z_PLIST = ?", [.blob(Array(try ShopStore.metadata(version: 2)))])
        }
        defer { ShopStore.remove(mislabeled) }
        #expect(throws: ImportError.missingColumn(table: "ZTAG", column: "ZCOLOR")) {
            try importer.importStore(at: mislabeled, into: Self.destination())
        }
        let junk = FileManager.default.temporaryDirectory.appendingPathComponent("info-\(UUID()).plist").path
        try Data("nothing".utf8).write(to: URL(fileURLWithPath: junk))
        #expect(throws: ImportError.model("\(junk): no NSManagedObjectModel_VersionHashes dictionary")) {
            try CoreDataImporter.compiledVersionHashes(at: junk)
        }
    }

    @Test func storedBytesTransformersFillOnlyMissingNames() throws {
        let registry = ValueTransformerRegistry()
        let models = try CoreDataImporter(modelAt: ShopStore.model).versions.map(\.model)
        #expect(StoredBytesTransformer.registerWhereMissing(for: models, in: registry) == ["ShopKeywordsTransformer"])
        #expect(StoredBytesTransformer.registerWhereMissing(for: models, in: registry).isEmpty)
        let transformer = try #require(registry.transformer(named: "ShopKeywordsTransformer"))
        #expect(try transformer.transformedValue(ShopStore.keywords) == ShopStore.keywords)
        #expect(try transformer.reverseTransformedValue(ShopStore.keywords) as? Data == ShopStore.keywords)
        #expect(throws: ValueTransformerError.self) { try transformer.transformedValue("text") }
    }

    @Test func progressReachesEveryRow() throws {
        let source = try ShopStore.write(version: 2)
        defer { ShopStore.remove(source) }
        let destination = Self.destination()
        defer { try? FileManager.default.removeItem(atPath: destination) }
        var importer = try CoreDataImporter(modelAt: ShopStore.model)
        importer.batchSize = 3
        var seen: [ImportProgress] = []
        importer.progress = { seen.append($0) }
        _ = try importer.importStore(at: source, into: destination)
        let rows = seen.filter { $0.phase == "reading rows" }
        #expect(rows.first == ImportProgress(phase: "reading rows", completed: 0, total: 14))
        #expect(rows.last == ImportProgress(phase: "reading rows", completed: 14, total: 14))
        #expect(rows.count > 3)
        #expect(seen.contains { $0.phase.hasPrefix("linking") })
    }
}

struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
