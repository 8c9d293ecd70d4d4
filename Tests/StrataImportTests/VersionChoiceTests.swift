import Foundation
import Strata
import StrataImport
import StrataImportTestSupport
import Testing

/// Choosing the model version by structure when several versions fit, and a migration on the way in that the data
/// does not fit.
@Suite struct VersionChoiceTests {
    /// A `.xcdatamodeld` bundle of versions made from Shop's first version's XML, each changed by its closure.
    static func bundle(current: String, _ versions: [String: (String) -> String]) throws -> String {
        let shop = try String(contentsOfFile: ShopStore.model + "/Shop.xcdatamodel/contents", encoding: .utf8)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("versions-\(UUID())")
            .appendingPathComponent("Shop.xcdatamodeld")
        for (name, change) in versions {
            let package = directory.appendingPathComponent("\(name).xcdatamodel")
            try FileManager.default.createDirectory(at: package, withIntermediateDirectories: true)
            try change(shop).write(to: package.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        }
        let plist = try PropertyListSerialization.data(
            fromPropertyList: ["_XCCurrentVersionName": "\(current).xcdatamodel"], format: .xml, options: 0)
        try plist.write(to: directory.appendingPathComponent(".xccurrentversion"))
        return directory.path
    }

    /// Removes a bundle ``bundle(current:_:)`` wrote.
    static func removeBundle(_ path: String) {
        try? FileManager.default.removeItem(at: URL(fileURLWithPath: path).deletingLastPathComponent())
    }

    /// Shelf.label required: no trace in the tables.
    static func requiredLabel(_ xml: String) -> String {
        xml.replacingOccurrences(
            of: #"<attribute name="label" optional="YES" attributeType="String"/>"#,
            with: #"<attribute name="label" attributeType="String"/>"#)
    }

    /// Tag.color added: a column more.
    static func withColor(_ xml: String) -> String {
        xml.replacingOccurrences(
            of: #"<attribute name="name" optional="YES" attributeType="String"/>"# + "\n"
                + #"        <relationship name="items" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Item" inverseName="tags""#,
            with: #"<attribute name="color" optional="YES" attributeType="String"/>"# + "\n        "
                + #"<attribute name="name" optional="YES" attributeType="String"/>"# + "\n"
                + #"        <relationship name="items" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Item" inverseName="tags""#
        )
    }

    @Test func versionsTheTablesCannotTellApartAreAmbiguousUnlessOneIsCurrent() throws {
        let model = try Self.bundle(current: "C", ["A": { $0 }, "B": Self.requiredLabel, "C": Self.withColor])
        defer { Self.removeBundle(model) }
        #expect(try String(contentsOfFile: model + "/C.xcdatamodel/contents", encoding: .utf8).contains("color"))
        let source = try ShopStore.write(version: 1)
        defer { ShopStore.remove(source) }
        #expect(
            throws: ImportError.ambiguousVersion(candidates: ["A", "B"], hashes: ShopStore.base64Hashes(version: 1))
        ) {
            try CoreDataImporter(modelAt: model).importStore(at: source, into: CoreDataImportTests.destination())
        }
        let current = try Self.bundle(current: "B", ["A": { $0 }, "B": Self.requiredLabel, "C": Self.withColor])
        defer { Self.removeBundle(current) }
        let destination = CoreDataImportTests.destination()
        defer { try? FileManager.default.removeItem(atPath: destination) }
        let report = try CoreDataImporter(modelAt: current).importStore(at: source, into: destination)
        #expect(report.sourceVersion == "B" && !report.migrated)
        #expect(report.warnings.contains { $0.contains("versions A, B all fit, the current one (B) was used") })
    }

    @Test func aMigrationTheDataDoesNotFitLeavesNothing() throws {
        // The current version requires Item.name, which Z_PK 5 lacks.
        let model = try Self.bundle(
            current: "Strict",
            [
                "Shop": { $0 },
                "Strict": {
                    Self.withColor($0).replacingOccurrences(
                        of: #"<attribute name="name" optional="YES" attributeType="String"/>"# + "\n"
                            + #"        <attribute name="sku""#,
                        with: #"<attribute name="name" attributeType="String"/>"# + "\n"
                            + #"        <attribute name="sku""#)
                },
            ])
        defer { Self.removeBundle(model) }
        #expect(
            try String(contentsOfFile: model + "/Strict.xcdatamodel/contents", encoding: .utf8).contains(
                #"<attribute name="name" attributeType="String"/>"#))
        let destination = CoreDataImportTests.destination()
        let earlier = try ShopStore.write(version: 1)
        defer { ShopStore.remove(earlier) }
        guard
            case .migrationFailed(let reason) = try #require(
                throws: ImportError.self,
                performing: {
                    try CoreDataImporter(modelAt: model).importStore(
                        at: earlier, into: destination)
                })
        else { throw Failure("not refused as a failed migration") }
        #expect(reason.hasPrefix("from Shop to Strict: "))
        #expect(!FileManager.default.fileExists(atPath: destination))
        #expect(!FileManager.default.fileExists(atPath: destination + ".importing"))
    }
}
