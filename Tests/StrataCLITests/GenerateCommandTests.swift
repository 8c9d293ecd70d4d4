import Foundation
import Strata
import Testing

/// `strata generate`: the classes it writes for the Library model are committed under `Generated/` and compiled
/// into this test target in Swift 6 mode; one test checks that the tool still writes exactly them, the others
/// use them against a store.
@Suite struct GenerateCommandTests {
    static let modelFiles = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("ModelFiles")
    static let library = modelFiles.appendingPathComponent("Library.xcdatamodeld")
    static let generated = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "Generated")

    @Test func theToolWritesTheCommittedClasses() throws {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("generate-\(UUID())")
        defer { try? FileManager.default.removeItem(at: output) }
        let outcome = try ToolRunner.strata("generate", Self.library.path, "--output", output.path)
        #expect(outcome.status == 0, "\(outcome)")
        #expect(outcome.standardError.contains("warning: line 27: <attribute>: preserveAfterDeletion"))
        let written = try FileManager.default.contentsOfDirectory(atPath: output.path).sorted()
        let committed = try FileManager.default.contentsOfDirectory(atPath: Self.generated.path).sorted()
        #expect(written == committed)
        #expect(
            written == [
                "Author.swift", "Book.swift", "Item.swift", "LibraryClasses.swift", "Loan.swift", "Magazine.swift",
                "Shelf.swift",
            ])
        for name in written {
            let fresh = try String(contentsOf: output.appendingPathComponent(name), encoding: .utf8)
            let kept = try String(contentsOf: Self.generated.appendingPathComponent(name), encoding: .utf8)
            #expect(fresh == kept, "\(name) differs from Generated/\(name): run strata generate again")
        }
    }

    @Test func publicAccessAndAnEarlierVersion() throws {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("generate-\(UUID())")
        defer { try? FileManager.default.removeItem(at: output) }
        let outcome = try ToolRunner.strata(
            "generate", Self.library.path, "--output", output.path, "--model-version", "Library", "--public",
            "--registry-name", "OldLibrary")
        #expect(outcome.status == 0, "\(outcome)")
        let shelf = try String(contentsOf: output.appendingPathComponent("Shelf.swift"), encoding: .utf8)
        #expect(shelf.contains("public final class Shelf: ManagedObject {"))
        #expect(shelf.contains("@ManagedRelationship(\"branch\") public var branch: Branch?"))
        let registry = try String(contentsOf: output.appendingPathComponent("OldLibrary.swift"), encoding: .utf8)
        #expect(registry.contains("public enum OldLibrary {"))
    }

    @Test func aRefusedModelExitsWith8NamingTheLine() throws {
        let hostile = Self.modelFiles.appendingPathComponent("Hostile/dangling-inverse.xml")
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("generate-\(UUID())")
        defer { try? FileManager.default.removeItem(at: output) }
        let outcome = try ToolRunner.strata("generate", hostile.path, "--output", output.path)
        #expect(outcome.status == 8, "\(outcome)")
        #expect(outcome.standardError.contains("line 8: Player.team and its inverse players disagree"))
        #expect(!FileManager.default.fileExists(atPath: output.path))
        let missing = try ToolRunner.strata("generate", "/nonexistent/M.xcdatamodel", "--output", output.path)
        #expect(missing.status == 8 && missing.standardError.contains("no such file or directory"))
    }

    @Test func entitiesWithoutAClassGetNoneAndReservedNamesAreRefused() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("generate-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        func contents(_ entities: String) -> String {
            """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            \(entities)
            </model>
            """
        }
        let plain = directory.appendingPathComponent("Plain.xcdatamodel")
        try FileManager.default.createDirectory(at: plain, withIntermediateDirectories: true)
        try Data(
            contents(
                """
                <entity name="Note" representedClassName="NSManagedObject"><attribute name="text" optional="YES" attributeType="String"/></entity>
                <entity name="Tag" representedClassName="MyApp.Tag"><attribute name="class" optional="YES" attributeType="String"/></entity>
                """
            ).utf8
        ).write(to: plain.appendingPathComponent("contents"))
        let output = directory.appendingPathComponent("out")
        let outcome = try ToolRunner.strata("generate", plain.path, "--output", output.path)
        #expect(outcome.status == 0, "\(outcome)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: output.path).sorted() == [
                "PlainClasses.swift", "Tag.swift",
            ])
        let tag = try String(contentsOf: output.appendingPathComponent("Tag.swift"), encoding: .utf8)
        #expect(tag.contains("@Managed(\"class\") var `class`: String?"))

        let reserved = directory.appendingPathComponent("Reserved.xcdatamodel")
        try FileManager.default.createDirectory(at: reserved, withIntermediateDirectories: true)
        try Data(
            contents(
                "<entity name=\"Note\" representedClassName=\"Note\"><attribute name=\"description\" optional=\"YES\" attributeType=\"String\"/></entity>"
            ).utf8
        ).write(to: reserved.appendingPathComponent("contents"))
        let refused = try ToolRunner.strata("generate", reserved.path, "--output", output.path)
        #expect(refused.status == 8)
        #expect(refused.standardError.contains("Note.description would hide ManagedObject's description"))
    }

    @Test(arguments: ["inMemory", "strata"])
    func theGeneratedClassesWorkAgainstAStore(kind: String) throws {
        LibraryClasses.register()
        ValueTransformerRegistry.shared.register(CodableValueTransformer<[String]>(), named: "LibraryKeywords")
        let model = try ManagedObjectModel(contentsOf: Self.library)
        let coordinator = PersistentStoreCoordinator(model: model)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("library-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try coordinator.addPersistentStore(kind == "strata" ? .strata(directory: directory) : .inMemory)
        let context = ManagedObjectContext(coordinator: coordinator)

        let shelf = Shelf(context: context)
        #expect(shelf.label == "A1")  // the model's default
        let author = Author(context: context)
        author.givenName = "Ursula"
        author.familyName = "Le Guin"
        let book = Book(context: context)
        book.barcode = "9780441478125"
        book.title = "The Left Hand of Darkness"
        book.pages = 304
        book.keywords = ["gender", "ice"]
        book.authors = [author]
        book.shelf = shelf
        let thin = Book(context: context)
        thin.barcode = "97801234567"
        thin.title = "Thin"
        thin.pages = 40
        thin.authors = [author]
        let loan = Loan(context: context)
        loan.due = Date(timeIntervalSinceReferenceDate: 800_000_000)
        loan.fee = 1.5
        loan.item = book
        try context.save()

        #expect(book.loanCount == 1 && book.totalFees == 1.5 && book.shelfLabel == "A1")
        #expect(book.touched != nil)
        #expect(author.books == Set([book, thin]))
        #expect(shelf.items == [book])
        #expect(thin.longerBooks == [book])
        #expect(book.longerBooks.isEmpty)

        let reader = ManagedObjectContext(coordinator: coordinator)
        let request = FetchRequest<Book>(entityName: "Book")
        request.predicate = try ObjectPredicate(format: "pages > 100")
        let found = try reader.fetch(request)
        #expect(found.count == 1)
        let fetched = try #require(found.first)
        #expect(fetched.title == "The Left Hand of Darkness")
        #expect(fetched.keywords == ["gender", "ice"])
        #expect(fetched.authors.map(\.familyName) == ["Le Guin"])
        #expect(fetched.loans.first?.fee == 1.5)
        #expect(fetched.inPrint && fetched.price == Decimal(string: "9.99"))
        #expect(fetched.loanCount == 1)
    }
}
