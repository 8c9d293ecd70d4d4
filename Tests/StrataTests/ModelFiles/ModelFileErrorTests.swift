import Foundation
import Testing

@testable import Strata

/// Hostile and mistaken model files: each gives a typed error naming the element and its line, or a warning;
/// never a crash, a hang, or a silently different model.
@Suite struct ModelFileErrorTests {
    private func error(_ body: String) -> ModelFileError? {
        do {
            _ = try ModelFileFixtures.model(body)
            return nil
        } catch {
            return error
        }
    }

    private func error(file name: String) -> ModelFileError? {
        do {
            _ = try ManagedObjectModel(contentsOf: ModelFileFixtures.hostile(name))
            return nil
        } catch {
            return error
        }
    }

    @Test func documentTypeDeclarationsAreRefusedBeforeParsing() {
        guard case .malformedXML(let line, _, let reason) = error(file: "entity-bomb.xml") else {
            Issue.record("the entity bomb was not refused")
            return
        }
        #expect(line == 2 && reason.contains("declaration"))
        guard case .malformedXML(2, _, _) = error(file: "external-entity.xml") else {
            Issue.record("the external entity was not refused")
            return
        }
    }

    /// Fuzz/FailCases/FuzzModelFile/invalid-utf8-attribute-name: FoundationXML traps on an attribute name that is
    /// not UTF-8, so such a document never reaches it.
    @Test func documentsThatAreNotUTF8AreRefusedBeforeParsing() {
        var bytes = Array(ModelFileFixtures.document("<entity name=\"A\" X/>").utf8)
        let position = bytes.firstIndex(of: UInt8(ascii: "X"))!
        bytes[position] = 0xFF
        #expect(
            throws: ModelFileError.malformedXML(line: 3, column: 18, reason: "a model file is UTF-8; this byte is not")
        ) {
            try ManagedObjectModel(modelFileContents: Data(bytes))
        }
        let latin1 = Data("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<model/>".utf8)
        #expect(
            throws: ModelFileError.malformedXML(
                line: 1, column: 1, reason: "a model file is UTF-8; the document declares encoding ISO-8859-1")
        ) {
            try ManagedObjectModel(modelFileContents: latin1)
        }
    }

    /// Fuzz/FailCases/FuzzModelFile/processing-instruction-without-data: FoundationXML reads a null pointer for
    /// `<?x?>`, so no processing instruction reaches it; comments are fine.
    @Test func processingInstructionsAndCDATAAreRefusedCommentsAreNot() throws {
        #expect(
            throws: ModelFileError.malformedXML(
                line: 3, column: 17,
                reason: "a processing instruction (<?) is not allowed in a model file (Xcode never writes one)")
        ) { try ModelFileFixtures.model("<entity name=\"A\"<?x?>/>") }
        #expect(throws: ModelFileError.self) {
            try ModelFileFixtures.model("<entity name=\"A\"><![CDATA[x]]></entity>")
        }
        // Fuzz/FailCases/FuzzModelFile/processing-instruction-at-start: only `<?xml` may open the document.
        #expect(throws: ModelFileError.self) {
            try ManagedObjectModel(modelFileContents: Data("<?x7s2?>\n<model type=\"x\"/>".utf8))
        }
        let model = try ModelFileFixtures.model("<!-- a comment --><entity name=\"A\"/>")
        #expect(model.entities.map(\.name) == ["A"])
        let withBOM = Data([0xEF, 0xBB, 0xBF] + Array(ModelFileFixtures.document("<entity name=\"B\"/>").utf8))
        #expect(try ManagedObjectModel(modelFileContents: withBOM).entities.map(\.name) == ["B"])
    }

    @Test func truncatedAndDeepDocumentsAreMalformed() {
        guard case .malformedXML = error(file: "truncated.xml") else {
            Issue.record("a truncated document loaded")
            return
        }
        guard case .malformedXML(_, _, let reason) = error(file: "deep-nesting.xml") else {
            Issue.record("200 nested elements loaded")
            return
        }
        #expect(reason.contains("nest"))
        guard case .malformedXML = error(file: "no-such-file-is-here.xml") else {
            if case .unreadable = error(file: "no-such-file-is-here.xml") { return }
            Issue.record("a missing file did not fail")
            return
        }
    }

    @Test func compositeAttributesAreRefusedWithTheirLine() {
        #expect(
            error(file: "composite-attribute.xml")
                == .invalidValue(
                    element: "attribute", attribute: "attributeType", value: "Composite", line: 5,
                    reason: "Composite attributes are not supported"))
    }

    @Test func builderErrorsCarryTheLineOfTheProperty() {
        let found = error(file: "dangling-inverse.xml")
        // Player is linked first (entities are linked by depth, then name): its inverse names another inverse.
        guard case .invalidModel(.inverseMismatch("Player", "team", "players", _), line: 8) = found else {
            Issue.record("got \(String(describing: found))")
            return
        }
        #expect(found?.description.hasPrefix("line 8: Player.team and its inverse players disagree") == true)
    }

    @Test func unknownElementsAreErrorsNamingElementAndLine() {
        let body = """
            <entity name="Book">
                <attribute name="title" attributeType="String"/>
                <shelfMark value="B"/>
            </entity>
            """
        #expect(
            error(body)
                == .unsupportedElement(
                    "shelfMark", line: 5, reason: "Strata does not know this element inside <entity>"))
        #expect(
            error("<composite name=\"Point\"/>")
                == .unsupportedElement(
                    "composite", line: 3, reason: "Strata does not know this element inside <model>"))
    }

    @Test func unsupportedShapesAreErrors() {
        let transient = """
            <entity name="A"><relationship name="b" optional="YES" transient="YES" maxCount="1" destinationEntity="A"/></entity>
            """
        guard case .unsupportedElement("relationship", 3, _) = error(transient) else {
            Issue.record("a transient relationship loaded")
            return
        }
        let expressionIndex = """
            <entity name="A">
                <attribute name="x" attributeType="String"/>
                <fetchIndex name="byX"><fetchIndexElement expression="x" expressionType="String" order="ascending"/></fetchIndex>
            </entity>
            """
        guard case .unsupportedElement("fetchIndexElement", 5, _) = error(expressionIndex) else {
            Issue.record("an expression index loaded")
            return
        }
        let objectID = "<entity name=\"A\"><attribute name=\"x\" attributeType=\"ObjectID\"/></entity>"
        guard case .invalidValue("attribute", "attributeType", "ObjectID", 3, _) = error(objectID) else {
            Issue.record("an ObjectID attribute loaded")
            return
        }
        let derivation = """
            <entity name="A">
                <attribute name="x" attributeType="String"/>
                <attribute name="shout" optional="YES" attributeType="String" derived="YES" derivationExpression="uppercase:(x)"/>
            </entity>
            """
        guard case .invalidModel(.invalidDerivation(entity: "A", attribute: "shout", _, _), line: 5) = error(derivation)
        else {
            Issue.record("an unsupported derivation loaded")
            return
        }
    }

    @Test func badValuesNameAttributeAndLine() {
        let cases: [(String, String, String)] = [
            ("<entity name=\"A\" isAbstract=\"maybe\"/>", "isAbstract", "maybe"),
            (
                "<entity name=\"A\"><attribute name=\"x\" attributeType=\"Integer 16\" defaultValueString=\"70000\"/></entity>",
                "defaultValueString", "70000"
            ),
            ("<entity name=\"A\"><attribute name=\"x\" attributeType=\"Text\"/></entity>", "attributeType", "Text"),
            (
                "<entity name=\"A\"><attribute name=\"x\" attributeType=\"Date\" defaultDateTimeInterval=\"soon\"/></entity>",
                "defaultDateTimeInterval", "soon"
            ),
            (
                "<entity name=\"A\"><attribute name=\"x\" attributeType=\"Boolean\" minValueString=\"1\"/></entity>",
                "minValueString", "1"
            ),
            (
                "<entity name=\"A\"><relationship name=\"r\" maxCount=\"1\" deletionRule=\"Shred\" destinationEntity=\"A\"/></entity>",
                "deletionRule", "Shred"
            ),
            (
                "<entity name=\"A\"><relationship name=\"r\" maxCount=\"-1\" destinationEntity=\"A\"/></entity>",
                "maxCount", "-1"
            ),
            (
                "<entity name=\"A\"><relationship name=\"r\" maxCount=\"1\" destinationEntity=\"A\" inverseName=\"r\" inverseEntity=\"B\"/></entity>",
                "inverseEntity", "B"
            ),
        ]
        for (body, attribute, value) in cases {
            guard case .invalidValue(_, attribute, value, 3, _) = error(body) else {
                Issue.record("\(attribute)=\(value) gave \(String(describing: error(body)))")
                continue
            }
        }
        #expect(
            error("<entity representedClassName=\"A\"/>")
                == .missingAttribute(element: "entity", attribute: "name", line: 3))
        #expect(
            error("<entity name=\"A\"><attribute name=\"x\"/></entity>")
                == .missingAttribute(element: "attribute", attribute: "attributeType", line: 3))
    }

    @Test func wrongRootOrModelTypeIsRefused() throws {
        let plist = Data("<?xml version=\"1.0\"?>\n<plist version=\"1.0\"><dict/></plist>".utf8)
        #expect(
            throws: ModelFileError.unsupportedElement(
                "plist", line: 2, reason: "a model file's root element is <model>")
        ) {
            try ManagedObjectModel(modelFileContents: plist)
        }
        let old = Data("<?xml version=\"1.0\"?>\n<model type=\"com.apple.XCDataModel\"/>".utf8)
        #expect(throws: ModelFileError.self) { try ManagedObjectModel(modelFileContents: old) }
        #expect(throws: ModelFileError.self) {
            try ManagedObjectModel(modelFileContents: Data([0xFF, 0xFE, 0x00, 0x3C]))
        }
        // Fuzz/FailCases/FuzzModelFile/empty-document: XMLParser says line 0 before it reads anything.
        #expect(throws: ModelFileError.malformedXML(line: 1, column: 1, reason: "there is no element")) {
            try ManagedObjectModel(modelFileContents: Data())
        }
    }

    @Test func unknownAttributesAreWarnings() throws {
        let model = try ModelFileFixtures.model(
            "<entity name=\"A\" sparkle=\"YES\"><attribute name=\"x\" optional=\"YES\" attributeType=\"String\"/></entity>"
        )
        #expect(
            model.warnings == [.modelFile(element: "entity", line: 3, note: "unknown attribute sparkle is ignored")])
    }

    @Test func bundlesWithoutACurrentVersionAreRefused() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bundle-\(UUID())")
        let bundle = directory.appendingPathComponent("M.xcdatamodeld")
        defer { try? FileManager.default.removeItem(at: directory) }
        let minimal = Data(ModelFileFixtures.document("<entity name=\"A\"/>").utf8)
        for version in ["M", "M 2"] {
            let package = bundle.appendingPathComponent("\(version).xcdatamodel")
            try FileManager.default.createDirectory(at: package, withIntermediateDirectories: true)
            try minimal.write(to: package.appendingPathComponent("contents"))
        }
        guard case .noCurrentVersion = modelBundleError(bundle.path) else {
            Issue.record("several versions without .xccurrentversion loaded")
            return
        }
        let plist =
            "<?xml version=\"1.0\"?><plist version=\"1.0\"><dict><key>_XCCurrentVersionName</key><string>M 3.xcdatamodel</string></dict></plist>"
        try Data(plist.utf8).write(to: bundle.appendingPathComponent(".xccurrentversion"))
        guard case .noCurrentVersion(_, let reason) = modelBundleError(bundle.path) else {
            Issue.record("a missing current version loaded")
            return
        }
        #expect(reason.contains("M 3.xcdatamodel"))
        let current = plist.replacingOccurrences(of: "M 3", with: "M 2")
        try Data(current.utf8).write(to: bundle.appendingPathComponent(".xccurrentversion"))
        #expect(try ModelBundle(path: bundle.path).currentVersionName == "M 2")
        #expect(try ManagedObjectModel(contentsOf: bundle).entities.map(\.name) == ["A"])
    }

    private func modelBundleError(_ path: String) -> ModelFileError? {
        do {
            _ = try ModelBundle(path: path)
            return nil
        } catch {
            return error
        }
    }
}
