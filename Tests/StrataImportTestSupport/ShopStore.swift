import Foundation
import StrataImport

/// A Core Data SQLite store of the Shop model (Tests/ModelFiles/Shop.xcdatamodeld), laid out as Core Data's
/// SQLite store lays one out:
///
/// - `Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX)`: Book 1 (super Item 2), Item 2, Magazine 3 (super 2),
///   Poster 4, Reader 5, Shelf 6, Tag 7.
/// - `Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST)`: a binary property list with `NSStoreModelVersionHashes` (32 bytes
///   per entity), `NSStoreUUID`, `NSStoreType`, `NSStoreModelVersionIdentifiers`.
/// - `ZITEM` for the Item hierarchy (Book and Magazine rows, told apart by `Z_ENT`), `ZPOSTER` with `Z_FOK_SHELF`
///   (its position in `Shelf.posters`), `ZREADER` with `Z2_FAVORITE` (the entity of the to-one `favorite`, whose
///   destination has subentities), `ZSHELF`, `ZTAG`; the one-to-one Poster.owner / Reader.poster has a foreign key
///   on both sides (`ZPOSTER.ZOWNER`, `ZREADER.ZPOSTER`).
/// - `Z_2TAGS (Z_2ITEMS, Z_7TAGS)` for Item.tags / Tag.items, `Z_1READERS (Z_1READING, Z_5READERS,
///   Z_FOK_1READING)` for Book.readers / the ordered Reader.reading.
/// - Book.cover allows external storage: Dune's is inline (marker 1), Emma's in `.<name>_SUPPORT/_EXTERNAL_DATA`
///   (marker 2 and the file's UUID).
public enum ShopStore {
    /// The Shop model bundle.
    public static let model = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("ModelFiles/Shop.xcdatamodeld").path

    public static let storeUUID = "6F1C5A34-8E1B-4F0B-9B55-3B7A2A9C0D11"
    public static let externalUUID = "0C7E2D8A-4B1F-4E2C-8D7B-6A5F4E3D2C1B"
    public static let emmaCover = Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
    public static let duneCover = Data([0xFF, 0x00, 0x01, 0x02])
    public static let keywords = Data("bplist00-keywords-as-stored".utf8)
    public static let duneCreated = 700_000_000.123_456_7
    public static let duneWeight = Float(0.1)
    public static let duneSKU = UUID(uuidString: "8B6E6B86-6F6A-4C43-9E53-0C5E2C9A1A11")!
    public static let entityNumbers = [
        "Book": 1, "Item": 2, "Magazine": 3, "Poster": 4, "Reader": 5, "Shelf": 6, "Tag": 7,
    ]

    /// Writes the store at `path` (a temporary file when nil) for the Shop model's version 1 (`Shop`) or 2 (`Shop
    /// 2`, which adds `Tag.color`).
    ///
    /// - Parameters:
    ///   - leaveWAL: leave the last changes (a Tag "wal-only" and Shelf 2's new label "B2-wal") in a `-wal` file
    ///     beside the store, as a process that stopped before checkpointing does.
    ///   - change: more SQL run after the store is written (the hostile tests' surgery).
    /// - Returns: the store's path.
    @discardableResult
    public static func write(
        to path: String? = nil, version: Int = 1, leaveWAL: Bool = false, change: ((SQLiteFile) throws -> Void)? = nil
    ) throws -> String {
        let directory =
            path.map { URL(fileURLWithPath: $0).deletingLastPathComponent() }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("shop-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = path ?? directory.appendingPathComponent("Shop.sqlite").path
        let file = try SQLiteFile(path: path)
        if leaveWAL { try file.execute("PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;") }
        try file.execute(
            """
            CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER);
            CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB);
            CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB);
            CREATE TABLE ZITEM ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZINPRINT INTEGER,
                ZISBN INTEGER, ZPAGES INTEGER, ZWORDS INTEGER, ZISSUE INTEGER, ZSHELF INTEGER, ZCREATED TIMESTAMP,
                ZRATING FLOAT, ZWEIGHT FLOAT, ZPRICE DECIMAL, ZNAME VARCHAR, ZHOMEPAGE VARCHAR, ZSKU BLOB,
                ZCOVER BLOB, ZKEYWORDS BLOB, ZSCAN BLOB );
            CREATE TABLE ZPOSTER ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZOWNER INTEGER,
                ZSHELF INTEGER, Z_FOK_SHELF INTEGER, ZTITLE VARCHAR );
            CREATE TABLE ZREADER ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZFAVORITE INTEGER,
                Z2_FAVORITE INTEGER, ZPOSTER INTEGER, ZNAME VARCHAR );
            CREATE TABLE ZSHELF ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZLABEL VARCHAR );
            CREATE TABLE ZTAG ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR\(version == 2 ? ", ZCOLOR VARCHAR" : "") );
            CREATE TABLE Z_2TAGS ( Z_2ITEMS INTEGER, Z_7TAGS INTEGER, PRIMARY KEY (Z_2ITEMS, Z_7TAGS) );
            CREATE TABLE Z_1READERS ( Z_1READING INTEGER, Z_5READERS INTEGER, Z_FOK_1READING INTEGER,
                PRIMARY KEY (Z_1READING, Z_5READERS) );
            CREATE INDEX ZITEM_ZSHELF_INDEX ON ZITEM (ZSHELF);
            CREATE INDEX Z_2TAGS_Z_7TAGS_INDEX ON Z_2TAGS (Z_7TAGS, Z_2ITEMS);
            """)
        let entities: [(Int64, String, Int64, Int64)] = [
            (1, "Book", 2, 0), (2, "Item", 0, 5), (3, "Magazine", 2, 0), (4, "Poster", 0, 4), (5, "Reader", 0, 2),
            (6, "Shelf", 0, 2), (7, "Tag", 0, 2),
        ]
        for (number, name, parent, max) in entities {
            try file.insert(
                "Z_PRIMARYKEY",
                ["Z_ENT": .integer(number), "Z_NAME": .text(name), "Z_SUPER": .integer(parent), "Z_MAX": .integer(max)])
        }
        try file.insert(
            "Z_METADATA",
            [
                "Z_VERSION": .integer(1), "Z_UUID": .text(storeUUID),
                "Z_PLIST": .blob(Array(try metadata(version: version))),
            ])
        try file.insert("Z_MODELCACHE", ["Z_CONTENT": .blob([0x78, 0x9C, 0x03, 0x00])])
        try file.insert(
            "ZSHELF", ["Z_PK": .integer(1), "Z_ENT": .integer(6), "Z_OPT": .integer(1), "ZLABEL": .text("A1")])
        try file.insert(
            "ZSHELF", ["Z_PK": .integer(2), "Z_ENT": .integer(6), "Z_OPT": .integer(3), "ZLABEL": .text("B2")])
        var sku = [UInt8](repeating: 0, count: 16)
        withUnsafeBytes(of: duneSKU.uuid) { for index in 0..<16 { sku[index] = $0[index] } }
        try file.insert(
            "ZITEM",
            [
                "Z_PK": .integer(1), "Z_ENT": .integer(1), "Z_OPT": .integer(4), "ZNAME": .text("Dune"),
                "ZCREATED": .real(duneCreated), "ZSKU": .blob(sku), "ZSHELF": .integer(1), "ZPAGES": .integer(412),
                "ZWORDS": .integer(188_000), "ZISBN": .integer(9_780_441_013_593), "ZPRICE": .real(12.99),
                "ZRATING": .real(4.25), "ZWEIGHT": .real(Double(duneWeight)), "ZINPRINT": .integer(1),
                "ZCOVER": .blob([0x01] + Array(duneCover)), "ZHOMEPAGE": .text("https://example.org/dune"),
                "ZKEYWORDS": .blob(Array(keywords)),
            ])
        try file.insert(
            "ZITEM",
            [
                "Z_PK": .integer(2), "Z_ENT": .integer(1), "Z_OPT": .integer(1), "ZNAME": .text("Emma"),
                "ZSHELF": .integer(1), "ZPAGES": .integer(-3), "ZISBN": .integer(Int64.max),
                "ZPRICE": .text("1234567890.123456789"), "ZINPRINT": .integer(0),
                "ZCOVER": .blob([0x02] + Array(externalUUID.utf8) + [0]),
            ])
        try file.insert(
            "ZITEM",
            [
                "Z_PK": .integer(3), "Z_ENT": .integer(3), "Z_OPT": .integer(2), "ZNAME": .text("Wired"),
                "ZSHELF": .integer(2), "ZISSUE": .integer(42), "ZSCAN": .blob([0x02, 0x01, 0x00]),
                "ZCREATED": .integer(-86_400),
            ])
        try file.insert(
            "ZITEM", ["Z_PK": .integer(5), "Z_ENT": .integer(1), "Z_OPT": .integer(7), "ZPRICE": .integer(7)])
        for (key, title, shelf, position) in [
            (1, "Map", 1, 2048), (2, "Sky", 1, 1024), (3, "Sea", 2, 1), (4, "Loose", 0, 0),
        ] {
            try file.insert(
                "ZPOSTER",
                [
                    "Z_PK": .integer(Int64(key)), "Z_ENT": .integer(4), "Z_OPT": .integer(1), "ZTITLE": .text(title),
                    "ZSHELF": shelf == 0 ? .null : .integer(Int64(shelf)),
                    "Z_FOK_SHELF": shelf == 0 ? .null : .integer(Int64(position)),
                    // Poster 1 (Map) and Ann are each other's one-to-one.
                    "ZOWNER": key == 1 ? .integer(1) : .null,
                ])
        }
        try file.insert(
            "ZREADER",
            [
                "Z_PK": .integer(1), "Z_ENT": .integer(5), "Z_OPT": .integer(2), "ZNAME": .text("Ann"),
                "ZFAVORITE": .integer(3), "Z2_FAVORITE": .integer(3), "ZPOSTER": .integer(1),
            ])
        try file.insert(
            "ZREADER", ["Z_PK": .integer(2), "Z_ENT": .integer(5), "Z_OPT": .integer(1), "ZNAME": .text("Bob")])
        try file.insert(
            "ZTAG", ["Z_PK": .integer(1), "Z_ENT": .integer(7), "Z_OPT": .integer(1), "ZNAME": .text("classic")])
        try file.insert(
            "ZTAG", ["Z_PK": .integer(2), "Z_ENT": .integer(7), "Z_OPT": .integer(1), "ZNAME": .text("new")])
        for (item, tag) in [(1, 1), (2, 1), (3, 2), (1, 2)] {
            try file.insert("Z_2TAGS", ["Z_2ITEMS": .integer(Int64(item)), "Z_7TAGS": .integer(Int64(tag))])
        }
        // Ann reads Emma then Dune; Bob reads Dune.
        for (book, reader, position) in [(2, 1, 1), (1, 1, 2), (1, 2, 1)] {
            try file.insert(
                "Z_1READERS",
                [
                    "Z_1READING": .integer(Int64(book)), "Z_5READERS": .integer(Int64(reader)),
                    "Z_FOK_1READING": .integer(Int64(position)),
                ])
        }
        let external = URL(fileURLWithPath: path).deletingLastPathComponent()
            .appendingPathComponent(
                ".\(URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent)_SUPPORT/_EXTERNAL_DATA")
        try FileManager.default.createDirectory(at: external, withIntermediateDirectories: true)
        try emmaCover.write(to: external.appendingPathComponent(externalUUID))
        try change?(file)
        guard leaveWAL else {
            file.close()
            return path
        }
        // Checkpoint what is there so far, then leave the last transaction in the WAL only: copy the file and its
        // -wal while the connection is open (a process that stopped before its checkpoint), then drop the original.
        try file.execute("PRAGMA wal_checkpoint(TRUNCATE);")
        try file.execute(
            "INSERT INTO ZTAG (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (3, 7, 1, 'wal-only'); "
                + "UPDATE ZSHELF SET ZLABEL = 'B2-wal', Z_OPT = 4 WHERE Z_PK = 2; UPDATE Z_PRIMARYKEY SET Z_MAX = 3 WHERE Z_ENT = 7;"
        )
        let crashed = directory.appendingPathComponent("crashed")
        try FileManager.default.createDirectory(at: crashed, withIntermediateDirectories: true)
        let copy = crashed.appendingPathComponent(URL(fileURLWithPath: path).lastPathComponent).path
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        try FileManager.default.copyItem(atPath: path + "-wal", toPath: copy + "-wal")
        let copyExternal = crashed.appendingPathComponent(external.deletingLastPathComponent().lastPathComponent)
        try FileManager.default.copyItem(at: external.deletingLastPathComponent(), to: copyExternal)
        file.close()
        return copy
    }

    /// `Z_METADATA`'s property list.
    public static func metadata(version: Int, hashes: [String: Data]? = nil) throws -> Data {
        let versionHashes = versionHashes(version: version)
        let plist: [String: Any] = [
            "NSStoreType": "SQLite", "NSStoreUUID": storeUUID, "NSStoreModelVersionHashes": hashes ?? versionHashes,
            "NSStoreModelVersionHashesVersion": 3, "NSStoreModelVersionIdentifiers": [""],
            "NSPersistenceFrameworkVersion": 1338,
        ]
        return try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
    }

    /// The stand-in version hashes of a version's entities (32 bytes each, as Core Data's): the store's
    /// `NSStoreModelVersionHashes`, and what ``writeCompiledModel(versions:)`` writes for that version.
    public static func versionHashes(version: Int) -> [String: Data] {
        var hashes: [String: Data] = [:]
        for (name, number) in entityNumbers {
            hashes[name] = Data((0..<32).map { UInt8(truncatingIfNeeded: number * 31 + $0 + version * 7) })
        }
        return hashes
    }

    /// Removes a store ``write(to:version:leaveWAL:change:)`` wrote in a temporary directory of its own, with
    /// everything beside it (its `-wal`, `_EXTERNAL_DATA`, the original of a WAL copy).
    public static func remove(_ path: String) {
        var url = URL(fileURLWithPath: path)
        while url.pathComponents.count > 1 {
            url = url.deletingLastPathComponent()
            if url.lastPathComponent.hasPrefix("shop-") {
                try? FileManager.default.removeItem(at: url)
                return
            }
        }
    }

    /// ``versionHashes(version:)`` as base64, as errors and reports show them.
    public static func base64Hashes(version: Int) -> [String: String] {
        versionHashes(version: version).mapValues { $0.base64EncodedString() }
    }

    /// Writes a compiled model directory, `Shop.momd` with the `VersionInfo.plist` `momc` writes
    /// (`NSManagedObjectModel_CurrentVersionName`, `NSManagedObjectModel_VersionHashes`: version name to entity
    /// hashes), here for `Shop` (version 1) and `Shop 2` (version 2) unless told otherwise.
    ///
    /// - Returns: the `.momd` directory.
    public static func writeCompiledModel(versions: [String: [String: Data]]? = nil) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("momd-\(UUID().uuidString)")
            .appendingPathComponent("Shop.momd")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let info: [String: Any] = [
            "NSManagedObjectModel_CurrentVersionName": "Shop 2",
            "NSManagedObjectModel_VersionHashes": versions ?? [
                "Shop": versionHashes(version: 1), "Shop 2": versionHashes(version: 2),
            ],
        ]
        try PropertyListSerialization.data(fromPropertyList: info, format: .xml, options: 0)
            .write(to: directory.appendingPathComponent("VersionInfo.plist"))
        return directory.path
    }
}
