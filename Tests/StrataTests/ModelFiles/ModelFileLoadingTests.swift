import Foundation
import StrataQuery
import Testing

@testable import Strata

/// Loading the hand-written Library model (every element the issue lists) and checking that each element
/// became the same description the Swift builder makes.
@Suite struct ModelFileLoadingTests {
    let model: ManagedObjectModel

    init() throws {
        model = try ManagedObjectModel(contentsOf: ModelFileFixtures.library)
    }

    @Test func bundleListsVersionsAndLoadsTheCurrentOne() throws {
        let bundle = try ModelBundle(path: ModelFileFixtures.library.path)
        #expect(bundle.versionNames == ["Library", "Library 2"])
        #expect(bundle.currentVersionName == "Library 2")
        #expect(model.versionIdentifiers == ["v2"])
        let first = try bundle.model(named: "Library")
        #expect(first.entities.map(\.name) == ["Branch", "Shelf"])
        #expect(first.versionIdentifiers == ["v1"])
        #expect(first.versionHash != model.versionHash)
        let package = ModelFileFixtures.library.appendingPathComponent("Library.xcdatamodel")
        #expect(try ManagedObjectModel(contentsOf: package).versionHash == first.versionHash)
        let contents = package.appendingPathComponent("contents")
        #expect(try ManagedObjectModel(contentsOf: contents).versionHash == first.versionHash)
    }

    @Test func entitiesInheritanceAndClassNames() throws {
        #expect(model.entities.map(\.name) == ["Author", "Book", "Item", "Loan", "Magazine", "Shelf"])
        let item = try #require(model.entity(named: "Item"))
        let book = try #require(model.entity(named: "Book"))
        #expect(item.isAbstract)
        #expect(book.superentity === item)
        #expect(item.subentities.map(\.name) == ["Book", "Magazine"])
        #expect(book.managedObjectClassName == "Book")
        #expect(book.attributes.prefix(3).map(\.name) == ["barcode", "title", "added"])
    }

    @Test func everyAttributeTypeAndOption() throws {
        let book = try #require(model.entity(named: "Book"))
        let types = book.attributes.map(\.type)
        for type in AttributeType.allCases { #expect(types.contains(type), "no \(type) attribute") }
        let attributes = book.attributesByName
        #expect(attributes["title"]?.isOptional == false)
        #expect(attributes["added"]?.isOptional == true)
        #expect(attributes["added"]?.defaultValue == .date(Date(timeIntervalSinceReferenceDate: 700_000_000)))
        #expect(attributes["pages"]?.defaultValue == .integer(100))
        #expect(attributes["pages"]?.validationRules == [.range(min: .integer(1), max: .integer(30000))])
        #expect(attributes["title"]?.validationRules == [.length(min: 1, max: 200)])
        #expect(attributes["barcode"]?.validationRules == [.regularExpression("[0-9]{8,13}")])
        #expect(attributes["price"]?.defaultValue == .decimal(Decimal(string: "9.99")!))
        #expect(attributes["price"]?.validationRules == [.range(min: .decimal(0), max: nil)])
        #expect(attributes["rating"]?.defaultValue == .double(2.5))
        #expect(attributes["weight"]?.defaultValue == .float(0.5))
        #expect(attributes["inPrint"]?.defaultValue == .boolean(true))
        #expect(attributes["cover"]?.allowsExternalBinaryDataStorage == true)
        #expect(attributes["uuid"]?.defaultValue == .uuid(UUID(uuidString: "8B6E6B86-6F6A-4C43-9E53-0C5E2C9A1A11")!))
        #expect(attributes["homepage"]?.defaultValue == .uri(URL(string: "https://example.org/books")!))
        #expect(attributes["keywords"]?.valueTransformerName == "LibraryKeywords")
        #expect(attributes["keywords"]?.valueClassName == "[String]")
        #expect(attributes["scratch"]?.isTransient == true)
        #expect(attributes["scratch"]?.storageIndex == nil)
        #expect(attributes["isbn13"]?.isIndexed == true)
        #expect(attributes["title"]?.renamingIdentifier == "name")
        let loan = try #require(model.entity(named: "Loan"))
        #expect(
            loan.attributesByName["due"]?.validationRules == [
                .range(min: .date(Date(timeIntervalSinceReferenceDate: 0)), max: nil)
            ])
    }

    @Test func relationshipsWithInversesRulesAndCounts() throws {
        let book = try #require(model.entity(named: "Book"))
        let authors = try #require(book.relationshipsByName["authors"])
        #expect(authors.isToMany && authors.isOrdered)
        #expect(authors.minCount == 1 && authors.maxCount == 5)
        #expect(authors.inverseRelationship?.name == "books")
        #expect(authors.inverseRelationship?.entity.name == "Author")
        let shelf = try #require(book.relationshipsByName["shelf"])
        #expect(!shelf.isToMany && shelf.isOptional && shelf.deleteRule == .nullify)
        #expect(shelf.entity.name == "Item")
        #expect(book.relationshipsByName["loans"]?.deleteRule == .deny)
        #expect(model.entity(named: "Shelf")?.relationshipsByName["items"]?.deleteRule == .cascade)
        let mentor = try #require(model.entity(named: "Author")?.relationshipsByName["mentor"])
        #expect(mentor.deleteRule == .noAction && mentor.inverseRelationship == nil)
        #expect(model.warnings.contains(.missingInverse(entity: "Author", relationship: "mentor")))
        #expect(model.entity(named: "Loan")?.relationshipsByName["item"]?.isOptional == false)
    }

    @Test func constraintsIndexesAndDerivedAttributes() throws {
        let book = try #require(model.entity(named: "Book"))
        #expect(book.uniquenessConstraints.map(\.attributeNames) == [["barcode"]])
        #expect(
            model.entity(named: "Author")?.uniquenessConstraints.map(\.attributeNames) == [["givenName", "familyName"]])
        let index = try #require(book.indexes.first)
        #expect(index.name == "byTitleAndAdded" && index.entity.name == "Item")
        #expect(index.elements.map(\.propertyName) == ["title", "added"])
        #expect(index.elements.map(\.isAscending) == [true, false])
        let shelfIndex = try #require(model.entity(named: "Shelf")?.indexes.first)
        #expect(shelfIndex.elements.map(\.propertyName) == ["label"])
        let derived = book.derivedAttributes.map { "\($0.name)=\($0.derivation!)" }
        #expect(
            derived == [
                "shelfLabel=shelf.label", "loanCount=loans.@count", "totalFees=loans.fee.@sum", "touched=now()",
            ])
    }

    @Test func fetchedPropertiesConfigurationsTemplatesAndUserInfo() throws {
        let book = try #require(model.entity(named: "Book"))
        let longer = try #require(book.fetchedPropertiesByName["longerBooks"])
        #expect(longer.destinationName == "Book")
        #expect(longer.predicate != nil)
        #expect(book.userInfo == ["shelfMark": "B", "owner": "lending"])
        #expect(model.entity(named: "Magazine")?.attributesByName["issue"]?.userInfo == ["unit": "issue number"])
        #expect(model.configurations == ["Catalog", "Circulation"])
        #expect(model.entities(forConfigurationName: "Circulation")?.map(\.name) == ["Loan"])
        #expect(model.entities(forConfigurationName: nil)?.count == 6)
        let request = try #require(
            model.fetchRequestFromTemplate(named: "ThickBooks", substitutionVariables: ["MINIMUM": .int(300)]))
        #expect(request.entityName == "Book")
        #expect(request.predicate == (try ObjectPredicate(format: "pages >= 300")))
        #expect(model.entity(named: "Shelf")?.renamingIdentifier == "Rack")
    }

    @Test func versionHashModifiersChangeTheHash() throws {
        let author = try #require(model.entity(named: "Author"))
        #expect(author.versionHashModifier == "split-names")
        let body = { (modifier: String) in
            """
            <entity name="Author" versionHashModifier="\(modifier)">
                <attribute name="givenName" attributeType="String"/>
            </entity>
            """
        }
        let one = try ModelFileFixtures.model(body("a"))
        let two = try ModelFileFixtures.model(body("b"))
        #expect(one.versionHash != two.versionHash)
    }

    @Test func ignoredSettingsAreWarningsWithTheirLine() throws {
        let notes = model.warnings.compactMap { warning -> String? in
            if case .modelFile(let element, let line, let note) = warning { return "\(line) \(element) \(note)" }
            return nil
        }
        #expect(notes.contains { $0.hasPrefix("27 attribute preserveAfterDeletion") })
        #expect(notes.contains { $0.contains("configuration usedWithCloudKit") })
    }

    @Test func fileAndBuilderMakeTheSameModel() throws {
        let xml = ModelFileFixtures.document(
            """
            <entity name="Shelf" representedClassName="Shelf">
                <attribute name="label" attributeType="String" defaultValueString="A1"/>
                <attribute name="capacity" optional="YES" attributeType="Integer 16" defaultValueString="40"/>
                <relationship name="branch" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Branch" inverseName="shelves" inverseEntity="Branch"/>
            </entity>
            <entity name="Branch" representedClassName="Branch">
                <attribute name="city" attributeType="String"/>
                <relationship name="shelves" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Shelf" inverseName="branch" inverseEntity="Shelf"/>
            </entity>
            """)
        let loaded = try ManagedObjectModel(modelFileContents: Data(xml.utf8))
        let built = try ManagedObjectModel {
            Entity("Shelf", className: "Shelf") {
                Attribute("label", .string, optional: false, default: .string("A1"))
                Attribute("capacity", .integer16, default: .integer(40))
                Relationship.toOne("branch", "Branch", inverse: "shelves")
            }
            Entity("Branch", className: "Branch") {
                Attribute("city", .string, optional: false)
                Relationship.toMany("shelves", "Shelf", inverse: "branch", deleteRule: .cascade)
            }
        }
        #expect(loaded.versionHash == built.versionHash)
        #expect(loaded.description == built.description)
    }
}
