import Foundation

/// Loads Core Data model files into a ``ManagedObjectModel``, through the same builder as the Swift DSL.
///
/// Accepts a `.xcdatamodeld` bundle (its current version, named by `.xccurrentversion`), a `.xcdatamodel`
/// package (a directory holding `contents`), or a `contents` XML file itself. Errors name the element and the
/// line; what Strata reads past is in the model's ``ManagedObjectModel/warnings``.
enum ModelFileLoader {
    /// The reader of the model at `path`.
    static func reader(at path: String) throws(ModelFileError) -> ModelFileReader {
        let url = URL(fileURLWithPath: path)
        if url.pathExtension == "xcdatamodeld" {
            let bundle = try ModelBundle(path: path)
            return try reader(at: bundle.path(ofVersion: bundle.currentVersionName))
        }
        let contents = try contentsPath(of: path)
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: contents)) } catch {
            throw .unreadable(path: contents, reason: "\(error.localizedDescription)")
        }
        return try ModelFileReader(root: XMLElementTreeBuilder.parse(data))
    }

    /// The XML file of a `.xcdatamodel` package, or `path` itself when it is a file.
    static func contentsPath(of path: String) throws(ModelFileError) -> String {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw .unreadable(path: path, reason: "no such file or directory")
        }
        guard isDirectory.boolValue else { return path }
        let contents = URL(fileURLWithPath: path).appendingPathComponent("contents").path
        guard FileManager.default.fileExists(atPath: contents) else {
            throw .unreadable(
                path: path, reason: "a .xcdatamodel package holds a contents file (older binary packages are not read)")
        }
        return contents
    }

    /// The line of the entity or property a builder error names.
    static func line(of error: ModelError, in lines: [String: Int]) -> Int? {
        func property(_ entity: String, _ name: String) -> Int? { lines["\(entity).\(name)"] ?? lines[entity] }
        switch error {
        case .emptyEntityName, .tooManyEntities: return nil
        case .duplicateEntity(let entity): return lines[entity]
        case .unknownParent(let entity, _): return lines[entity]
        case .inheritanceCycle(let entities): return entities.first.flatMap { lines[$0] }
        case .unknownDestination(let entity, let relationship, _), .unknownInverse(let entity, let relationship, _),
            .inverseMismatch(let entity, let relationship, _, _), .invalidCount(let entity, let relationship):
            return property(entity, relationship)
        case .emptyAttributeName(let entity), .invalidUniquenessConstraint(let entity, _, _),
            .invalidFetchIndex(let entity, _, _):
            return lines[entity]
        case .duplicateAttribute(let entity, let attribute), .redeclaredAttribute(let entity, let attribute, _),
            .undefinedTypeOnPersistentAttribute(let entity, let attribute),
            .defaultValueTypeMismatch(let entity, let attribute, _),
            .missingValueTransformerName(let entity, let attribute),
            .optionNotApplicable(let entity, let attribute, _), .ruleNotApplicable(let entity, let attribute, _),
            .invalidRegularExpression(let entity, let attribute, _),
            .invalidDerivation(let entity, let attribute, _, _),
            .invalidFetchedProperty(let entity, let attribute, _):
            return property(entity, attribute)
        case .invalidConfiguration(let name, _): return lines["configuration \(name)"]
        case .invalidFetchRequestTemplate(let name, _): return lines["template \(name)"]
        }
    }
}

extension ManagedObjectModel {
    /// Loads a Core Data model file: a `.xcdatamodeld` bundle (its current version), a `.xcdatamodel` package or
    /// its `contents` XML (Core Data's `NSManagedObjectModel(contentsOf:)` reads the compiled `.momd`; Strata
    /// reads the source Xcode writes, as the compiled form is private).
    ///
    /// For example:
    ///
    ///     let model = try ManagedObjectModel(contentsOf: URL(fileURLWithPath: "Library.xcdatamodeld"))
    ///     for warning in model.warnings { print(warning) }   // e.g. "line 12: <attribute>: preserveAfterDeletion: ..."
    ///
    /// - Parameter url: a file URL.
    /// - Throws: a ``ModelFileError`` naming the element and line at fault.
    public convenience init(contentsOf url: URL) throws(ModelFileError) {
        try self.init(reader: ModelFileLoader.reader(at: url.path))
    }

    /// Builds the model a model file's `contents` XML describes (what ``init(contentsOf:)`` reads from a file).
    ///
    /// - Parameter data: the XML.
    /// - Throws: a ``ModelFileError`` naming the element and line at fault.
    public convenience init(modelFileContents data: Data) throws(ModelFileError) {
        try self.init(reader: ModelFileReader(root: XMLElementTreeBuilder.parse(data)))
    }

    private convenience init(reader: ModelFileReader) throws(ModelFileError) {
        do {
            try self.init(
                entities: reader.entities, configurations: reader.configurations,
                fetchRequestTemplates: reader.fetchRequestTemplates, versionIdentifiers: reader.versionIdentifiers,
                fileWarnings: reader.warnings)
        } catch {
            throw .invalidModel(error, line: ModelFileLoader.line(of: error, in: reader.lines))
        }
    }
}
