import Foundation

/// Turns the element tree of a model file's `contents` (Xcode's `com.apple.IDECoreDataModeler.DataModel`
/// XML, every `documentVersion` Xcode 9 and later writes) into the definitions the Swift model builder takes,
/// so that a file and the builder produce the same model.
///
/// Every element and attribute is accounted for: what Strata reads becomes part of the definitions; what
/// changes nothing Strata does (layout, Spotlight, CloudKit and code generation settings) becomes a
/// ``ModelWarning/modelFile(element:line:note:)`` or is skipped when it is pure editor state; an unknown
/// element, or one Strata cannot honour (composite attributes, transient relationships, expression indexes,
/// ObjectID attributes) is a ``ModelFileError``: never a silently different model.
struct ModelFileReader {
    /// What the file defines.
    var entities: [Entity] = []
    var configurations: [String: [String]] = [:]
    var fetchRequestTemplates: [FetchRequestTemplate] = []
    var versionIdentifiers: Set<String> = []
    var warnings: [ModelWarning] = []
    /// Lines of entities (`Entity`), properties (`Entity.property`), configurations (`configuration Name`) and
    /// templates (`template Name`), for errors the model builder reports by name.
    var lines: [String: Int] = [:]

    /// Editor state that means nothing to a model: skipped without a warning.
    private static let silentAttributes: Set<String> = [
        "syncable", "codeGenerationType", "usesScalarValueType", "lastSavedToolsVersion", "systemVersion",
        "minimumToolsVersion", "sourceLanguage", "documentVersion", "type", "iOSVersion", "macOSVersion",
        "positionX", "positionY", "width", "height",
    ]
    /// Settings Strata reads past with a warning, and why.
    private static let ignoredAttributes: [String: String] = [
        "preserveAfterDeletion": "persistent history tombstones are not kept; the attribute is stored as usual",
        "spotlightIndexingEnabled": "Spotlight indexing does not exist on Linux; ignored",
        "allowsCloudEncryption": "CloudKit is out of scope; ignored",
        "usedWithCloudKit": "CloudKit is out of scope; ignored",
        "storedInTruthFile": "the truth file of Core Data's ubiquitous stores does not exist; stored as usual",
        "storedInExternalRecord": "Spotlight external records do not exist; ignored",
        "isUbiquitous": "ubiquitous (iCloud) stores are out of scope; ignored",
    ]

    /// Reads a `<model>` element.
    ///
    /// - Throws: ``ModelFileError``.
    init(root: ModelFileElement) throws(ModelFileError) {
        guard root.name == "model" else {
            throw .unsupportedElement(root.name, line: root.line, reason: "a model file's root element is <model>")
        }
        if let type = root.attributes["type"], type != "com.apple.IDECoreDataModeler.DataModel" {
            throw .invalidValue(
                element: "model", attribute: "type", value: type, line: root.line,
                reason: "Strata reads com.apple.IDECoreDataModeler.DataModel files (Xcode 4 and later)")
        }
        try accountFor(root, known: ["userDefinedModelVersionIdentifier"])
        if let identifier = root.attributes["userDefinedModelVersionIdentifier"], !identifier.isEmpty {
            versionIdentifiers.insert(identifier)
        }
        for child in root.children {
            switch child.name {
            case "entity": entities.append(try readEntity(child))
            case "configuration": try readConfiguration(child)
            case "fetchRequest": try readTemplate(child)
            case "elements": break  // the diagram's layout: nothing to do with the model
            default: throw unknown(child, in: "model")
            }
        }
    }

    // MARK: - Entities

    private mutating func readEntity(_ element: ModelFileElement) throws(ModelFileError) -> Entity {
        try accountFor(
            element,
            known: ["name", "representedClassName", "parentEntity", "isAbstract", "elementID", "versionHashModifier"])
        let name = try required("name", of: element)
        lines[name] = element.line
        var className = element.attributes["representedClassName"]
        if className == "NSManagedObject" || className?.isEmpty == true { className = nil }
        var entity = Entity(
            name, parent: element.attributes["parentEntity"], abstract: try flag("isAbstract", of: element),
            className: className)
        entity.renamingIdentifier = element.attributes["elementID"]
        entity.versionHashModifier = element.attributes["versionHashModifier"]
        for child in element.children {
            switch child.name {
            case "attribute": entity.properties.append(.attribute(try readAttribute(child, entity: name)))
            case "relationship": entity.properties.append(.relationship(try readRelationship(child, entity: name)))
            case "fetchedProperty":
                entity.properties.append(.fetchedProperty(try readFetchedProperty(child, entity: name)))
            case "fetchIndex": entity.indexes.append(try readFetchIndex(child))
            case "compoundIndexes":
                for (position, index) in try readCompoundIndexes(child).enumerated() {
                    entity.indexes.append(FetchIndex("compoundIndex\(position + 1)", elements: index))
                }
            case "uniquenessConstraints": entity.uniquenessConstraints += try readUniquenessConstraints(child)
            case "userInfo": entity.userInfo = try readUserInfo(child)
            default: throw unknown(child, in: "entity")
            }
        }
        return entity
    }

    private mutating func readAttribute(_ element: ModelFileElement, entity: String) throws(ModelFileError) -> Attribute
    {
        try accountFor(
            element,
            known: [
                "name", "optional", "transient", "attributeType", "defaultValueString", "defaultDateTimeInterval",
                "minValueString", "maxValueString", "minDateTimeInterval", "maxDateTimeInterval",
                "regularExpressionString", "allowsExternalBinaryDataStorage", "valueTransformerName",
                "customClassName", "attributeValueClassName", "indexed", "derived", "derivationExpression",
                "elementID", "versionHashModifier",
            ])
        let name = try required("name", of: element)
        lines["\(entity).\(name)"] = element.line
        let typeName = try required("attributeType", of: element)
        let type = try Self.attributeType(typeName, element: element)
        var attribute = Attribute(name, type, optional: try flag("optional", of: element))
        attribute.isTransient = try flag("transient", of: element)
        attribute.allowsExternalBinaryDataStorage = try flag("allowsExternalBinaryDataStorage", of: element)
        attribute.isIndexed = try flag("indexed", of: element)
        attribute.valueTransformerName = element.attributes["valueTransformerName"]
        attribute.valueClassName =
            element.attributes["customClassName"] ?? element.attributes["attributeValueClassName"]
        attribute.renamingIdentifier = element.attributes["elementID"]
        attribute.versionHashModifier = element.attributes["versionHashModifier"]
        if try flag("derived", of: element) {
            attribute.derivationExpression = try required("derivationExpression", of: element)
        } else if element.attributes["derivationExpression"] != nil {
            throw .invalidValue(
                element: "attribute", attribute: "derivationExpression",
                value: element.attributes["derivationExpression"]!, line: element.line,
                reason: "only a derived=\"YES\" attribute has a derivation")
        }
        attribute.defaultValue = try defaultValue(of: element, type: type)
        attribute.validationRules = try validationRules(of: element, type: type)
        for child in element.children {
            switch child.name {
            case "userInfo": attribute.userInfo = try readUserInfo(child)
            case "attribute":
                throw .unsupportedElement(
                    "attribute", line: child.line,
                    reason: "composite attributes are not supported; model the fields as attributes of the entity")
            default: throw unknown(child, in: "attribute")
            }
        }
        return attribute
    }

    private static func attributeType(_ name: String, element: ModelFileElement) throws(ModelFileError) -> AttributeType
    {
        switch name {
        case "ObjectID", "Composite":
            throw .invalidValue(
                element: "attribute", attribute: "attributeType", value: name, line: element.line,
                reason: "\(name) attributes are not supported")
        default:
            guard let type = AttributeType.allCases.first(where: { $0.description == name }) else {
                throw .invalidValue(
                    element: "attribute", attribute: "attributeType", value: name, line: element.line,
                    reason: "not an attribute type Core Data writes")
            }
            return type
        }
    }

    private func defaultValue(
        of element: ModelFileElement, type: AttributeType
    ) throws(ModelFileError)
        -> AttributeValue?
    {
        if let interval = element.attributes["defaultDateTimeInterval"] {
            guard type == .date, let seconds = Double(interval), seconds.isFinite else {
                throw invalid(element, "defaultDateTimeInterval", "a date default is a number of seconds")
            }
            return .date(Date(timeIntervalSinceReferenceDate: seconds))
        }
        guard let text = element.attributes["defaultValueString"] else { return nil }
        if let value = Self.value(text, of: type) { return value }
        throw invalid(element, "defaultValueString", "not a \(type) value")
    }

    /// A value of `type` written as model files write it, or nil.
    static func value(_ text: String, of type: AttributeType) -> AttributeValue? {
        switch type {
        case .integer16, .integer32, .integer64:
            guard let number = Int64(text), type.integerRange!.contains(number) else { return nil }
            return .integer(number)
        case .decimal: return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")).map { .decimal($0) }
        case .double: return Double(text).map { .double($0) }
        case .float: return Float(text).map { .float($0) }
        case .string: return .string(text)
        case .boolean:
            switch text {
            case "YES", "true", "1": return .boolean(true)
            case "NO", "false", "0": return .boolean(false)
            default: return nil
            }
        case .uuid: return UUID(uuidString: text).map { .uuid($0) }
        case .uri: return URL(string: text).map { .uri($0) }
        case .date, .binaryData, .transformable, .undefined: return nil
        }
    }

    /// The model editor's minimum, maximum and regular expression as validation rules.
    private func validationRules(
        of element: ModelFileElement, type: AttributeType
    ) throws(ModelFileError)
        -> [ValidationRule]
    {
        var rules: [ValidationRule] = []
        let (minText, maxText) = (element.attributes["minValueString"], element.attributes["maxValueString"])
        if minText != nil || maxText != nil {
            if type == .string || type == .binaryData {
                func length(_ text: String?, _ name: String) throws(ModelFileError) -> Int? {
                    guard let text else { return nil }
                    guard let number = Int(text), number >= 0 else { throw invalid(element, name, "not a length") }
                    return number
                }
                rules.append(
                    .length(min: try length(minText, "minValueString"), max: try length(maxText, "maxValueString")))
            } else if type.integerRange != nil || [.decimal, .double, .float].contains(type) {
                func bound(_ text: String?, _ name: String) throws(ModelFileError) -> AttributeValue? {
                    guard let text else { return nil }
                    let value: AttributeValue? =
                        type.integerRange != nil
                        ? Int64(text).map { .integer($0) }
                        : type == .decimal
                            ? Self.value(text, of: .decimal) : Double(text).map { .double($0) }
                    guard let value else { throw invalid(element, name, "not a \(type) value") }
                    return value
                }
                rules.append(
                    .range(min: try bound(minText, "minValueString"), max: try bound(maxText, "maxValueString")))
            } else {
                let name = minText != nil ? "minValueString" : "maxValueString"
                throw invalid(element, name, "a \(type) attribute has no minimum or maximum")
            }
        }
        let (minDate, maxDate) = (element.attributes["minDateTimeInterval"], element.attributes["maxDateTimeInterval"])
        if minDate != nil || maxDate != nil {
            func bound(_ text: String?, _ name: String) throws(ModelFileError) -> AttributeValue? {
                guard let text else { return nil }
                guard type == .date, let seconds = Double(text), seconds.isFinite else {
                    throw invalid(element, name, "a date bound is a number of seconds on a Date attribute")
                }
                return .date(Date(timeIntervalSinceReferenceDate: seconds))
            }
            rules.append(
                .range(min: try bound(minDate, "minDateTimeInterval"), max: try bound(maxDate, "maxDateTimeInterval")))
        }
        if let pattern = element.attributes["regularExpressionString"] {
            guard type == .string else {
                throw invalid(element, "regularExpressionString", "only strings match patterns")
            }
            rules.append(.regularExpression(pattern))
        }
        return rules
    }

    // MARK: - Relationships and fetched properties

    private mutating func readRelationship(
        _ element: ModelFileElement, entity: String
    ) throws(ModelFileError)
        -> Relationship
    {
        try accountFor(
            element,
            known: [
                "name", "optional", "transient", "minCount", "maxCount", "toMany", "ordered", "deletionRule",
                "destinationEntity", "inverseName", "inverseEntity", "elementID", "versionHashModifier",
            ])
        let name = try required("name", of: element)
        lines["\(entity).\(name)"] = element.line
        let destination = try required("destinationEntity", of: element)
        if try flag("transient", of: element) {
            throw .unsupportedElement(
                "relationship", line: element.line, reason: "transient relationships are not supported (\(name))")
        }
        if let inverseEntity = element.attributes["inverseEntity"], inverseEntity != destination {
            throw invalid(element, "inverseEntity", "the inverse must belong to the destination, \(destination)")
        }
        let inverse = element.attributes["inverseName"]
        if element.attributes["inverseEntity"] != nil, inverse == nil {
            throw .missingAttribute(element: "relationship", attribute: "inverseName", line: element.line)
        }
        let rule: DeleteRule
        switch element.attributes["deletionRule"] ?? "Nullify" {
        case "Nullify": rule = .nullify
        case "Cascade": rule = .cascade
        case "Deny": rule = .deny
        case "No Action": rule = .noAction
        case let other: throw invalid(element, "deletionRule", "not Nullify, Cascade, Deny or No Action", value: other)
        }
        let optional = try flag("optional", of: element)
        func count(_ attribute: String) throws(ModelFileError) -> Int? {
            guard let text = element.attributes[attribute] else { return nil }
            guard let number = Int(text), number >= 0 else { throw invalid(element, attribute, "not a count") }
            return number
        }
        let (minCount, maxCount) = (try count("minCount"), try count("maxCount"))
        var relationship: Relationship
        if try flag("toMany", of: element) {
            // As in Core Data, a mandatory to-many holds at least one object; a maximum of 0 means none.
            relationship = .toMany(
                name, destination, inverse: inverse, ordered: try flag("ordered", of: element), deleteRule: rule,
                minCount: max(minCount ?? 0, optional ? 0 : 1), maxCount: maxCount == 0 ? nil : maxCount)
        } else {
            if try flag("ordered", of: element) { throw invalid(element, "ordered", "only a to-many is ordered") }
            relationship = .toOne(name, destination, inverse: inverse, deleteRule: rule, optional: optional)
        }
        relationship.renamingIdentifier = element.attributes["elementID"]
        relationship.versionHashModifier = element.attributes["versionHashModifier"]
        for child in element.children {
            guard child.name == "userInfo" else { throw unknown(child, in: "relationship") }
            relationship.userInfo = try readUserInfo(child)
        }
        return relationship
    }

    private mutating func readFetchedProperty(
        _ element: ModelFileElement, entity: String
    ) throws(ModelFileError)
        -> FetchedProperty
    {
        try accountFor(element, known: ["name", "optional", "elementID", "versionHashModifier"])
        let name = try required("name", of: element)
        lines["\(entity).\(name)"] = element.line
        var request: ModelFileElement?
        var userInfo: [String: String] = [:]
        for child in element.children {
            switch child.name {
            case "fetchRequest" where request == nil: request = child
            case "userInfo": userInfo = try readUserInfo(child)
            default: throw unknown(child, in: "fetchedProperty")
            }
        }
        guard let request else {
            throw .unsupportedElement("fetchedProperty", line: element.line, reason: "it has no <fetchRequest>")
        }
        try accountFor(request, known: ["name", "entity", "predicateString"])
        for child in request.children { throw unknown(child, in: "fetchRequest") }
        var property = FetchedProperty(
            name, try required("entity", of: request), predicate: request.attributes["predicateString"])
        property.userInfo = userInfo
        property.renamingIdentifier = element.attributes["elementID"]
        property.versionHashModifier = element.attributes["versionHashModifier"]
        return property
    }

    // MARK: - Indexes and constraints

    private mutating func readFetchIndex(_ element: ModelFileElement) throws(ModelFileError) -> FetchIndex {
        try accountFor(element, known: ["name"])
        let name = try required("name", of: element)
        var elements: [FetchIndex.Element] = []
        for child in element.children {
            guard child.name == "fetchIndexElement" else { throw unknown(child, in: "fetchIndex") }
            try accountFor(child, known: ["property", "type", "order", "expression", "expressionType"])
            if child.attributes["expression"] != nil {
                throw .unsupportedElement(
                    "fetchIndexElement", line: child.line, reason: "expression index elements are not supported")
            }
            let property = try required("property", of: child)
            let collation: FetchIndex.CollationType
            switch child.attributes["type"] ?? "Binary" {
            case "Binary": collation = .binary
            case "RTree":
                collation = .rTree
                warnings.append(
                    .modelFile(
                        element: "fetchIndexElement", line: child.line,
                        note: "R-tree index element \(property) is kept as a binary index in Strata"))
            case let other: throw invalid(child, "type", "not Binary or RTree", value: other)
            }
            let ascending: Bool
            switch child.attributes["order"] ?? "ascending" {
            case "ascending": ascending = true
            case "descending": ascending = false
            case let other: throw invalid(child, "order", "not ascending or descending", value: other)
            }
            elements.append(FetchIndex.Element(property, ascending: ascending, collationType: collation))
        }
        return FetchIndex(name, elements: elements)
    }

    /// The deprecated `compoundIndexes` (before `fetchIndex`): each `compoundIndex` lists ascending elements.
    private mutating func readCompoundIndexes(
        _ element: ModelFileElement
    ) throws(ModelFileError)
        -> [[FetchIndex.Element]]
    {
        try accountFor(element, known: [])
        var indexes: [[FetchIndex.Element]] = []
        for compound in element.children {
            guard compound.name == "compoundIndex" else { throw unknown(compound, in: "compoundIndexes") }
            try accountFor(compound, known: [])
            var elements: [FetchIndex.Element] = []
            for index in compound.children {
                guard index.name == "index" else { throw unknown(index, in: "compoundIndex") }
                try accountFor(index, known: ["value"])
                elements.append(.ascending(try required("value", of: index)))
            }
            indexes.append(elements)
        }
        return indexes
    }

    private mutating func readUniquenessConstraints(_ element: ModelFileElement) throws(ModelFileError) -> [[String]] {
        try accountFor(element, known: [])
        var constraints: [[String]] = []
        for constraint in element.children {
            guard constraint.name == "uniquenessConstraint" else {
                throw unknown(constraint, in: "uniquenessConstraints")
            }
            try accountFor(constraint, known: [])
            var names: [String] = []
            for part in constraint.children {
                guard part.name == "constraint" else { throw unknown(part, in: "uniquenessConstraint") }
                try accountFor(part, known: ["value"])
                names.append(try required("value", of: part))
            }
            constraints.append(names)
        }
        return constraints
    }

    // MARK: - Configurations, templates, user info

    private mutating func readConfiguration(_ element: ModelFileElement) throws(ModelFileError) {
        try accountFor(element, known: ["name"])
        let name = try required("name", of: element)
        guard configurations[name] == nil else { throw invalid(element, "name", "the configuration is defined twice") }
        lines["configuration \(name)"] = element.line
        var members: [String] = []
        for child in element.children {
            guard child.name == "memberEntity" else { throw unknown(child, in: "configuration") }
            try accountFor(child, known: ["name"])
            members.append(try required("name", of: child))
        }
        configurations[name] = members
    }

    private mutating func readTemplate(_ element: ModelFileElement) throws(ModelFileError) {
        // What a template keeps is its entity and predicate; other request settings are not part of it.
        let settings = [
            "fetchLimit", "fetchBatchSize", "fetchOffset", "resultType", "returnObjectsAsFaults",
            "includeSubentities", "includePropertyValues", "includesPendingChanges", "returnDistinctResults",
            "fetchColumns", "propertiesToFetch",
        ]
        try accountFor(element, known: ["name", "entity", "predicateString"] + settings)
        for setting in settings where element.attributes[setting] != nil {
            warnings.append(
                .modelFile(
                    element: "fetchRequest", line: element.line,
                    note:
                        "\(setting) is not part of a Strata fetch request template; set it on the request made from it")
            )
        }
        for child in element.children { throw unknown(child, in: "fetchRequest") }
        let name = try required("name", of: element)
        lines["template \(name)"] = element.line
        fetchRequestTemplates.append(
            FetchRequestTemplate(
                name, entity: try required("entity", of: element), predicate: element.attributes["predicateString"]))
    }

    private mutating func readUserInfo(_ element: ModelFileElement) throws(ModelFileError) -> [String: String] {
        try accountFor(element, known: [])
        var info: [String: String] = [:]
        for entry in element.children {
            guard entry.name == "entry" else { throw unknown(entry, in: "userInfo") }
            try accountFor(entry, known: ["key", "value"])
            info[try required("key", of: entry)] = entry.attributes["value"] ?? ""
        }
        return info
    }

    // MARK: - Helpers

    /// Records a warning for each attribute of `element` that Strata reads past, and throws for none: an
    /// unknown attribute is a warning too (newer Xcode versions add settings), naming it and its line.
    private mutating func accountFor(_ element: ModelFileElement, known: [String]) throws(ModelFileError) {
        for name in element.attributes.keys.sorted() where !known.contains(name) {
            if Self.silentAttributes.contains(name) { continue }
            if let note = Self.ignoredAttributes[name] {
                if element.attributes[name] == "YES" || name == "usedWithCloudKit" && element.attributes[name] != "NO" {
                    warnings.append(.modelFile(element: element.name, line: element.line, note: "\(name): \(note)"))
                }
                continue
            }
            warnings.append(
                .modelFile(
                    element: element.name, line: element.line, note: "unknown attribute \(name) is ignored"))
        }
    }

    private func required(_ attribute: String, of element: ModelFileElement) throws(ModelFileError) -> String {
        guard let value = element.attributes[attribute], !value.isEmpty else {
            throw .missingAttribute(element: element.name, attribute: attribute, line: element.line)
        }
        return value
    }

    /// A `YES`/`NO` attribute; absent means NO, as Xcode omits false flags.
    private func flag(_ attribute: String, of element: ModelFileElement) throws(ModelFileError) -> Bool {
        switch element.attributes[attribute] {
        case nil, "NO": return false
        case "YES": return true
        case let other?: throw invalid(element, attribute, "a flag is YES or NO", value: other)
        }
    }

    private func invalid(
        _ element: ModelFileElement, _ attribute: String, _ reason: String, value: String? = nil
    ) -> ModelFileError {
        .invalidValue(
            element: element.name, attribute: attribute, value: value ?? element.attributes[attribute] ?? "",
            line: element.line, reason: reason)
    }

    private func unknown(_ element: ModelFileElement, in parent: String) -> ModelFileError {
        .unsupportedElement(
            element.name, line: element.line, reason: "Strata does not know this element inside <\(parent)>")
    }
}
