// swift-format-ignore-file
// (The code between the MARK lines is the article's, verbatim: the formatter must not reorder it.)
// The article Sources/Strata/Strata.docc/GettingStarted.md and this test change together: every code block of
// the article is copied here verbatim and in order (the first block at the top of this file, the others in
// `articleRunsAsWritten`, each under a "block N" mark), and after each block the test asserts what the
// article's comments and prose claim. `everyArticleBlockIsHere` fails when the two drift apart.

// MARK: Article block 1
import Foundation
import Strata

final class Book: ManagedObject {
    @Managed("title") var title: String
    @Managed("pages") var pages: Int64
    @Managed("cover") var cover: Data?
}

// MARK: -

import Testing

@Suite struct GettingStartedTests {
    @Test func articleRunsAsWritten() throws {
        // MARK: Article block 2
        let model = try ManagedObjectModel(entities: [
            Entity("Book", className: "Book") {
                Attribute("title", .string, optional: false)
                Attribute("pages", .integer64, default: .integer(0))
                Attribute("cover", .binaryData).allowsExternalStorage()
            }
        ])
        Book.register(forEntityName: "Book")

        #expect(model.entity(named: "Book")?.attributes.map(\.name) == ["title", "pages", "cover"])

        // MARK: Article block 3
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("library-\(UUID())").path
        let coordinator = PersistentStoreCoordinator(model: model)
        let store = try coordinator.addPersistentStore(.strata(directory: directory))
        let context = ManagedObjectContext(coordinator: coordinator)

        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(FileManager.default.fileExists(atPath: directory))  // "created when it does not exist"

        // MARK: Article block 4
        let dune = Book(context: context)
        dune.title = "Dune"
        dune.pages = 412
        dune.cover = Data(repeating: 0xD5, count: 100_000)  // 100 kB: kept in a blob segment, not in the row

        let emma = Book(context: context)
        emma.title = "Emma"
        emma.pages = 474

        #expect(dune.objectID.isTemporaryID && emma.objectID.isTemporaryID)
        #expect(context.insertedObjects == [dune, emma])
        #expect(try context.count(for: FetchRequest<Book>(entityName: "Book")) == 2)  // counted, though unsaved
        let engine = try #require(store as? StrataStore).engine
        #expect(try engine.blobSegmentStatistics().reduce(0) { $0 + $1.liveBlobs } == 0)  // nothing stored yet

        // MARK: Article block 5
        try context.save()
        let duneID = dune.objectID  // permanent: duneID.isTemporaryID is false

        #expect(!duneID.isTemporaryID && !emma.objectID.isTemporaryID)
        #expect(duneID.storeIdentifier == store.identifier)
        #expect(!context.hasChanges)
        // "kept in a blob segment, not in the row"
        #expect(try engine.blobSegmentStatistics().reduce(0) { $0 + $1.liveBlobs } == 1)

        // MARK: Article block 6
        try coordinator.removePersistentStore(store)

        let library = PersistentStoreCoordinator(model: model)
        try library.addPersistentStore(.strata(directory: directory))
        let reader = ManagedObjectContext(coordinator: library)

        let books = try reader.fetch(FetchRequest<Book>(entityName: "Book"))

        #expect(books.count == 2)
        #expect(books.allSatisfy { $0.isFault })

        // MARK: Article block 7
        let titles = books.map(\.title).sorted()  // ["Dune", "Emma"]; no book is a fault any more

        #expect(titles == ["Dune", "Emma"])
        #expect(!books.contains { $0.isFault })

        // MARK: Article block 8
        let uri = duneID.uriRepresentation()  // x-strata://<store UUID>/Book/p<row ID>
        let id = try library.managedObjectID(forURIRepresentation: uri)
        let book = try reader.existingObject(with: id) as! Book
        // book is the very object of `books` whose title is "Dune"; book.cover?.count is 100_000.

        let storeUUID = try #require(duneID.storeIdentifier).uuidString
        #expect(uri.absoluteString == "x-strata://\(storeUUID)/Book/p\(try #require(duneID.rowID))")
        #expect(id == duneID)
        #expect(book === books.first { $0.title == "Dune" })
        #expect(book.cover?.count == 100_000)
        #expect(book.cover == Data(repeating: 0xD5, count: 100_000))
        #expect(book.pages == 412)

        // MARK: Article block 9
        let writer = ManagedObjectContext(coordinator: library)
        let copy = try writer.existingObject(with: id) as! Book
        copy.pages = 480
        try writer.save()

        #expect(copy !== book)
        #expect(book.pages == 412)  // "In the reader, book.pages is still 412."

        // MARK: Article block 10
        try reader.refresh(book, mergeChanges: false)
        // book is a fault again, and book.pages is now 480.

        #expect(book.isFault)
        #expect(book.pages == 480)

        // MARK: Article block 11
        book.title = "Dune (1965)"
        copy.pages = 500
        try writer.save()
        do {
            try reader.save()  // book was read before the writer's last save
        } catch ObjectGraphError.mergeConflicts(let conflicts) {
            for conflict in conflicts {  // here, only book's
                try reader.refresh(reader.object(with: conflict.objectID), mergeChanges: true)
            }
            try reader.save()
        }
        // book.pages is now 500 (the writer's), and book.title is still "Dune (1965)" (the reader's).

        // Pages 500 with the reader's title: only the refresh of the conflict's IDs can have brought them together
        // (a save without a conflict would have written 480 over the writer's 500).
        #expect(book.pages == 500)
        #expect(book.title == "Dune (1965)")
        #expect(!reader.hasChanges)

        // MARK: Article block 12
        for store in library.persistentStores {
            try library.removePersistentStore(store)
        }

        // "The store's directory now holds "Dune (1965)", 500 pages, with its cover, and "Emma", 474 pages."
        #expect(library.persistentStores.isEmpty)
        let check = PersistentStoreCoordinator(model: model)
        let checkStore = try check.addPersistentStore(.strata(directory: directory))
        defer { try? check.removePersistentStore(checkStore) }
        let checkContext = ManagedObjectContext(coordinator: check)  // alive while its objects are read
        let saved = try checkContext.fetch(FetchRequest<Book>(entityName: "Book"))
            .map { (title: $0.title, pages: $0.pages, cover: $0.cover) }
            .sorted { $0.title < $1.title }
        #expect(saved.map(\.title) == ["Dune (1965)", "Emma"])
        #expect(saved.map(\.pages) == [500, 474])
        #expect(saved.map(\.cover) == [Data(repeating: 0xD5, count: 100_000), nil])
    }

    /// Every ```swift block of the article appears in this file, verbatim (up to indentation) and in order.
    @Test func everyArticleBlockIsHere() throws {
        let testFile = URL(fileURLWithPath: #filePath)
        let article = testFile.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/Strata/Strata.docc/GettingStarted.md")
        let markdown = try String(contentsOf: article, encoding: .utf8)
        let source = try String(contentsOf: testFile, encoding: .utf8)
        func lines(_ text: some StringProtocol) -> [String] {
            text.split(separator: "\n", omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces) }
        }
        var blocks: [[String]] = []
        var current: [String]?
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line == "```swift" {
                current = []
            } else if current != nil, line == "```" {
                blocks.append(current!)
                current = nil
            } else {
                current?.append(line.trimmingCharacters(in: .whitespaces))
            }
        }
        #expect(blocks.count == 12)
        let sourceLines = lines(source)
        var position = 0
        for (number, block) in blocks.enumerated() {
            let start = (position...max(position, sourceLines.count - block.count)).first {
                Array(sourceLines[$0..<min($0 + block.count, sourceLines.count)]) == block
            }
            guard let start else {
                Issue.record("article block \(number + 1) is not in this file, after block \(number)")
                return
            }
            #expect(sourceLines[start - 1] == "// MARK: Article block \(number + 1)")
            position = start + block.count
        }
    }
}
