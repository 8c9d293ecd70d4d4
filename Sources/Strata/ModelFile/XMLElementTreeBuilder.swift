import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

/// Reads XML into a ``ModelFileElement`` tree with `XMLParser` (FoundationXML on Linux), for a model file.
///
/// The input is untrusted (a model copied from anywhere, or a fuzzer's), so before parsing it must be UTF-8 (what
/// Xcode writes; FoundationXML on Linux traps on an element or attribute name that is not valid UTF-8) with no
/// other encoding declared, and hold no markup Xcode never writes: no document type declaration (entity
/// declarations are how XML bombs grow), CDATA section or processing instruction but the XML declaration
/// (FoundationXML crashes on one without data); external entities are never resolved, nesting is limited to
/// ``maximumDepth`` and the input to ``maximumBytes``.
enum XMLElementTreeBuilder {
    /// Xcode's model files nest four levels deep; anything far deeper is not a model file.
    static let maximumDepth = 32
    /// Far above any real model's `contents` (a 500-entity model is about 1 MB).
    static let maximumBytes = 64 << 20

    /// The document's root element.
    ///
    /// - Throws: ``ModelFileError/malformedXML(line:column:reason:)``.
    static func parse(_ data: Data) throws(ModelFileError) -> ModelFileElement {
        guard data.count <= maximumBytes else {
            throw .malformedXML(line: 1, column: 1, reason: "the file is larger than \(maximumBytes) bytes")
        }
        if let (line, column) = Self.firstInvalidUTF8(in: data) {
            throw .malformedXML(line: line, column: column, reason: "a model file is UTF-8; this byte is not")
        }
        if let encoding = Self.declaredEncoding(in: data), encoding.uppercased() != "UTF-8" {
            throw .malformedXML(
                line: 1, column: 1, reason: "a model file is UTF-8; the document declares encoding \(encoding)")
        }
        if let forbidden = Self.forbiddenMarkup(in: data) {
            throw .malformedXML(
                line: forbidden.line, column: forbidden.column,
                reason: "\(forbidden.markup) is not allowed in a model file (Xcode never writes one)")
        }
        let parser = XMLParser(data: data)
        parser.shouldResolveExternalEntities = false
        parser.shouldProcessNamespaces = false
        let delegate = Delegate()
        parser.delegate = delegate
        let succeeded = parser.parse()
        // XMLParser reports line and column 0 before it has read anything (an empty document): lines count from 1.
        func position(_ line: Int, _ column: Int) -> (Int, Int) { (max(1, line), max(1, column)) }
        if let failure = delegate.failure {
            let (line, column) = position(failure.line, failure.column)
            throw .malformedXML(line: line, column: column, reason: failure.reason)
        }
        // XMLParser on Linux can return true with an error set (a truncated document).
        if !succeeded || parser.parserError != nil {
            let reason = parser.parserError.map { "\($0.localizedDescription)" } ?? "the parser stopped"
            let (line, column) = position(parser.lineNumber, parser.columnNumber)
            throw .malformedXML(line: line, column: column, reason: reason)
        }
        guard let root = delegate.root else {
            let (line, column) = position(parser.lineNumber, parser.columnNumber)
            throw .malformedXML(line: line, column: column, reason: "there is no element")
        }
        return root
    }

    /// The line and column of the first byte that is not part of valid UTF-8, if any.
    private static func firstInvalidUTF8(in data: Data) -> (line: Int, column: Int)? {
        guard String(validating: data, as: UTF8.self) == nil else { return nil }
        var decoder = UTF8()
        var iterator = data.makeIterator()
        var (line, column) = (1, 1)
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar):
                if scalar == "\n" { (line, column) = (line + 1, 1) } else { column += 1 }
            case .emptyInput: return nil
            case .error: return (line, column)
            }
        }
    }

    /// The `encoding` of the XML declaration (`<?xml version="1.0" encoding="UTF-8"?>`), if the document starts
    /// with one that names it.
    private static func declaredEncoding(in data: Data) -> String? {
        guard let end = data.prefix(512).firstIndex(of: UInt8(ascii: ">")),
            let declaration = String(bytes: data[data.startIndex..<end], encoding: .utf8),
            declaration.hasPrefix("<?xml"), let range = declaration.range(of: "encoding=")
        else { return nil }
        let rest = declaration[range.upperBound...]
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return "" }
        return String(rest.dropFirst().prefix { $0 != quote })
    }

    /// The first markup a model file never holds, with its line and column: any `<?` but the XML declaration at
    /// the start (FoundationXML on Linux reads a null pointer for a processing instruction without data), and any
    /// `<!` but a comment (document type and entity declarations, CDATA sections).
    private static func forbiddenMarkup(in data: Data) -> (line: Int, column: Int, markup: String)? {
        var line = 1
        var column = 1
        return data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> (Int, Int, String)? in
            // The XML declaration may follow a UTF-8 byte order mark.
            let declarationStart = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
            for offset in bytes.indices {
                let byte = bytes[offset]
                if byte == UInt8(ascii: "<"), offset + 1 < bytes.count {
                    let next = bytes[offset + 1]
                    if next == UInt8(ascii: "?"), !(offset == declarationStart && isXMLDeclaration(bytes, at: offset)) {
                        return (line, column, "a processing instruction (<?)")
                    }
                    if next == UInt8(ascii: "!") {
                        let comment = offset + 3 < bytes.count && bytes[offset + 2] == 0x2D && bytes[offset + 3] == 0x2D
                        if !comment { return (line, column, "a declaration or CDATA section (<!)") }
                    }
                }
                if byte == UInt8(ascii: "\n") {
                    line += 1
                    column = 1
                } else {
                    column += 1
                }
            }
            return nil
        }
    }

    /// Whether `<?xml` and a space, tab or line break start at `offset` (the XML declaration, which libxml2 reads
    /// itself; any other `<?` is a processing instruction).
    private static func isXMLDeclaration(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> Bool {
        let prefix = Array("<?xml".utf8)
        guard offset + prefix.count < bytes.count else { return false }
        guard prefix.indices.allSatisfy({ bytes[offset + $0] == prefix[$0] }) else { return false }
        return [0x20, 0x09, 0x0A, 0x0D].contains(bytes[offset + prefix.count])
    }

    /// Builds the tree as the parser reports elements; stops the parser at the first problem.
    private final class Delegate: NSObject, XMLParserDelegate {
        var stack: [ModelFileElement] = []
        var root: ModelFileElement?
        var failure: (line: Int, column: Int, reason: String)?

        func parser(
            _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
            qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]
        ) {
            guard failure == nil else { return }
            guard stack.count < XMLElementTreeBuilder.maximumDepth else {
                fail(parser, "elements nest more than \(XMLElementTreeBuilder.maximumDepth) deep")
                return
            }
            guard root == nil || !stack.isEmpty else {
                fail(parser, "a second root element <\(elementName)>")
                return
            }
            stack.append(
                ModelFileElement(name: elementName, attributes: attributeDict, line: max(1, parser.lineNumber)))
        }

        func parser(
            _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?
        ) {
            guard failure == nil, let element = stack.popLast() else { return }
            if stack.isEmpty {
                root = element
            } else {
                stack[stack.count - 1].children.append(element)
            }
        }

        func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
            if failure == nil { fail(parser, "\(parseError.localizedDescription)", abort: false) }
        }

        private func fail(_ parser: XMLParser, _ reason: String, abort: Bool = true) {
            failure = (parser.lineNumber, parser.columnNumber, reason)
            if abort { parser.abortParsing() }
        }
    }
}
