import Foundation
import Testing

@testable import Strata

/// The model of the brief's example plus a second hierarchy, shared by the model, validation and row tests.
enum CompanyModel {
    static func make() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            Entity("Department") {
                Attribute("name", .string, optional: false)
                Attribute("budget", .double, default: .double(0))
            }
            Entity("Employee", className: "Employee") {
                Attribute("name", .string, optional: false).validated(.length(min: 1, max: 100))
                Attribute("salary", .integer64, default: .integer(0)).validated(.range(min: .integer(0), max: nil))
                Attribute("photo", .binaryData).allowsExternalStorage()
                Attribute("fullName", .string).transient()
            }
            Entity("Manager", parent: "Employee") { Attribute("bonus", .double) }
            Entity("Person", abstract: true) { Attribute("nickname", .string).indexed() }
            Entity("Customer", parent: "Person") { Attribute("since", .date) }
        }
    }
}

/// Building a model with the DSL and reading it back.
@Suite struct ModelBuildingTests {
    @Test func entitiesAreSortedByNameAndNumberedFromOne() throws {
        let model = try CompanyModel.make()
        #expect(model.entities.map(\.name) == ["Customer", "Department", "Employee", "Manager", "Person"])
        #expect(model.entities.map(\.entityID) == [1, 2, 3, 4, 5])
        #expect(model.entity(named: "Manager")?.entityID == 4)
        #expect(model.entity(named: "Nobody") == nil)
        #expect(model.entity(withID: 3)?.name == "Employee")
        #expect(model.entity(withID: 0) == nil)
        #expect(model.entity(withID: 6) == nil)
        #expect(Set(model.entitiesByName.keys) == Set(model.entities.map(\.name)))
    }

    @Test func declarationOrderOfEntitiesDoesNotMatter() throws {
        let forward = try ManagedObjectModel {
            Entity("B", parent: "A")
            Entity("A") { Attribute("x", .integer32) }
        }
        let backward = try ManagedObjectModel {
            Entity("A") { Attribute("x", .integer32) }
            Entity("B", parent: "A")
        }
        #expect(forward.entities.map(\.name) == backward.entities.map(\.name))
        #expect(forward.versionHash == backward.versionHash)
    }

    @Test func entitiesAreOrderedByTheUTF8BytesOfTheirNames() throws {
        let model = try ManagedObjectModel {
            Entity("b"); Entity("É"); Entity("Z"); Entity("A")
        }
        #expect(model.entities.map(\.name) == ["A", "Z", "b", "É"])
        #expect(model.entities.map(\.entityID) == [1, 2, 3, 4])
    }

    @Test func builtModelIsSharedAcrossTasks() async throws {
        let model = try CompanyModel.make()
        let counts = await withTaskGroup(of: Int.self) { group in
            for index in 0..<16 {
                group.addTask {
                    let manager = model.entity(named: "Manager")!
                    let salary = manager.attributesByName["salary"]!
                    let valid = (try? salary.validate(.integer(Int64(index) - 8), objectDescription: "o")) != nil
                    return manager.persistentAttributes.count + (valid ? 1 : 0)
                }
            }
            return await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(counts.sorted() == Array(repeating: 4, count: 8) + Array(repeating: 5, count: 8))
    }

    @Test func attributeDescriptionsCarryTheirDefinitions() throws {
        let employee = try #require(try CompanyModel.make().entity(named: "Employee"))
        let name = try #require(employee.attributesByName["name"])
        #expect(name.type == .string)
        #expect(!name.isOptional)
        #expect(!name.isTransient)
        #expect(name.validationRules == [.length(min: 1, max: 100)])
        #expect(name.entity === employee)
        #expect(name.index == 0)
        #expect(name.storageIndex == 0)

        let salary = try #require(employee.attributesByName["salary"])
        #expect(salary.isOptional)
        #expect(salary.defaultValue == .integer(0))
        #expect(salary.validationRules == [.range(min: .integer(0), max: nil)])

        let photo = try #require(employee.attributesByName["photo"])
        #expect(photo.allowsExternalBinaryDataStorage)
        #expect(photo.storageIndex == 2)

        let fullName = try #require(employee.attributesByName["fullName"])
        #expect(fullName.isTransient)
        #expect(fullName.index == 3)
        #expect(fullName.storageIndex == nil)

        #expect(employee.managedObjectClassName == "Employee")
        #expect(employee.classIdentifier == "Employee")
        #expect(employee.properties.map(\.name) == ["name", "salary", "photo", "fullName"])
        #expect(employee.propertiesByName["photo"] === photo)
    }

    @Test func attributesAreOptionalPersistentAndUnindexedByDefault() throws {
        let model = try ManagedObjectModel { Entity("A") { Attribute("x", .string) } }
        let x = try #require(model.entity(named: "A")?.attributesByName["x"])
        #expect(x.isOptional)
        #expect(!x.isTransient)
        #expect(!x.isIndexed)
        #expect(!x.allowsExternalBinaryDataStorage)
        #expect(x.defaultValue == nil)
        #expect(x.valueTransformerName == nil)
        #expect(x.validationRules.isEmpty)
        let person = try #require(try CompanyModel.make().entity(named: "Person"))
        #expect(person.attributesByName["nickname"]?.isIndexed == true)
    }

    @Test func entityWithoutClassNameUsesThePlainManagedObjectIdentifier() throws {
        let department = try #require(try CompanyModel.make().entity(named: "Department"))
        #expect(department.managedObjectClassName == nil)
        #expect(department.classIdentifier == "ManagedObject")
    }

    @Test func builderClosuresAcceptConditionalsAndLoops() throws {
        let includeNotes = true
        let skipped = false
        let model = try ManagedObjectModel {
            for name in ["Alpha", "Beta"] {
                Entity(name) {
                    Attribute("title", .string)
                    if includeNotes { Attribute("notes", .string) }
                    if skipped { Attribute("never", .string) } else { Attribute("always", .boolean) }
                    for day in ["start", "end"] { Attribute(day, .date) }
                }
            }
            if skipped { Entity("Gamma") }
        }
        #expect(model.entities.map(\.name) == ["Alpha", "Beta"])
        #expect(model.entity(named: "Beta")?.attributes.map(\.name) == ["title", "notes", "always", "start", "end"])
    }

    @Test func entityWithoutPropertiesIsValid() throws {
        let model = try ManagedObjectModel { Entity("Empty") }
        #expect(model.entity(named: "Empty")?.attributes.isEmpty == true)
        #expect(model.entity(named: "Empty")?.persistentAttributes.isEmpty == true)
    }

    @Test func modelAndEntitiesDescribeThemselves() throws {
        let model = try CompanyModel.make()
        let manager = try #require(model.entity(named: "Manager"))
        #expect(
            manager.description.hasPrefix("Manager (entity 4, parent Employee): name: String (mandatory) (field 0)"))
        #expect(model.description.split(separator: "\n").count == 5)
    }

    @Test func descriptionsAreHashableByIdentity() throws {
        let model = try CompanyModel.make()
        let employee = try #require(model.entity(named: "Employee"))
        let manager = try #require(model.entity(named: "Manager"))
        let set: Set<EntityDescription> = [employee, manager, employee]
        #expect(set.count == 2)
        #expect(manager.attributesByName["name"] == employee.attributesByName["name"])
    }
}

/// Entity inheritance: attribute layout, links and kinds.
@Suite struct ModelInheritanceTests {
    @Test func subentityListsInheritedAttributesFirstAndSharesTheirDescriptions() throws {
        let model = try CompanyModel.make()
        let employee = try #require(model.entity(named: "Employee"))
        let manager = try #require(model.entity(named: "Manager"))
        #expect(manager.attributes.map(\.name) == ["name", "salary", "photo", "fullName", "bonus"])
        #expect(manager.attributes.map(\.index) == [0, 1, 2, 3, 4])
        #expect(manager.persistentAttributes.map(\.name) == ["name", "salary", "photo", "bonus"])
        #expect(manager.persistentAttributes.map(\.storageIndex) == [0, 1, 2, 3])
        #expect(manager.attributesByName["salary"] === employee.attributesByName["salary"])
        #expect(manager.attributesByName["salary"]?.entity === employee)
        #expect(manager.attributesByName["bonus"]?.entity === manager)
        #expect(employee.attributesByName["bonus"] == nil)
    }

    @Test func inheritedPersistentAttributesArePrefixesOfEveryDescendantsRow() throws {
        let model = try ManagedObjectModel {
            Entity("A") {
                Attribute("a1", .integer64)
                Attribute("aT", .string).transient()
                Attribute("a2", .string)
            }
            Entity("B", parent: "A") {
                Attribute("bT", .undefined).transient()
                Attribute("b1", .double)
            }
            Entity("C", parent: "B") { Attribute("c1", .boolean) }
        }
        let a = try #require(model.entity(named: "A"))
        let c = try #require(model.entity(named: "C"))
        #expect(c.persistentAttributes.map(\.name) == ["a1", "a2", "b1", "c1"])
        #expect(Array(c.persistentAttributes.prefix(a.persistentAttributes.count)) == a.persistentAttributes)
        for (position, attribute) in c.persistentAttributes.enumerated() {
            #expect(attribute.storageIndex == position)
        }
        #expect(c.attributes.map(\.index) == Array(0..<6))
    }

    @Test func superentitySubentitiesAndRootAreLinked() throws {
        let model = try ManagedObjectModel {
            Entity("Animal", abstract: true)
            Entity("Dog", parent: "Animal")
            Entity("Cat", parent: "Animal")
            Entity("Puppy", parent: "Dog")
            Entity("Rock")
        }
        let animal = try #require(model.entity(named: "Animal"))
        let dog = try #require(model.entity(named: "Dog"))
        let cat = try #require(model.entity(named: "Cat"))
        let puppy = try #require(model.entity(named: "Puppy"))
        let rock = try #require(model.entity(named: "Rock"))
        #expect(animal.isAbstract)
        #expect(!dog.isAbstract)
        #expect(animal.superentity == nil)
        #expect(puppy.superentity === dog)
        #expect(cat.superentity === animal)
        #expect(animal.subentities.map(\.name) == ["Cat", "Dog"])
        #expect(dog.subentities.map(\.name) == ["Puppy"])
        #expect(puppy.subentities.isEmpty)
        #expect(puppy.rootEntity === animal)
        #expect(animal.rootEntity === animal)
        #expect(rock.rootEntity === rock)
        #expect(animal.allEntitiesInHierarchyBelow.map(\.name) == ["Animal", "Cat", "Dog", "Puppy"])
        #expect(dog.allEntitiesInHierarchyBelow.map(\.name) == ["Dog", "Puppy"])
        #expect(rock.allEntitiesInHierarchyBelow.map(\.name) == ["Rock"])
    }

    @Test func isKindOfFollowsTheInheritanceChain() throws {
        let model = try CompanyModel.make()
        let employee = try #require(model.entity(named: "Employee"))
        let manager = try #require(model.entity(named: "Manager"))
        let person = try #require(model.entity(named: "Person"))
        #expect(manager.isKind(of: employee))
        #expect(manager.isKind(of: manager))
        #expect(!employee.isKind(of: manager))
        #expect(!manager.isKind(of: person))
    }
}

/// Every way a model definition can be wrong.
@Suite struct ModelErrorTests {
    /// The error building a model of `entities` throws, or nil.
    private func error(_ entities: [Entity]) -> ModelError? {
        do {
            _ = try ManagedObjectModel(entities: entities)
            return nil
        } catch {
            return error
        }
    }

    /// The error building a model of one entity `A` with `attribute` throws, or nil.
    private func error(_ attribute: Attribute) -> ModelError? {
        error([Entity("A") { attribute }])
    }

    @Test func emptyEntityNameIsRejected() {
        #expect(error([Entity("")]) == .emptyEntityName)
    }

    @Test func duplicateEntityIsRejected() {
        #expect(error([Entity("A"), Entity("B"), Entity("A")]) == .duplicateEntity("A"))
    }

    @Test func unknownParentIsRejected() {
        #expect(error([Entity("A", parent: "Ghost")]) == .unknownParent(entity: "A", parent: "Ghost"))
    }

    @Test func inheritanceCycleIsRejectedNamingTheCycleFromItsSmallestName() {
        let threeCycle = [
            Entity("C", parent: "A"), Entity("B", parent: "C"), Entity("A", parent: "B"), Entity("D", parent: "A"),
        ]
        #expect(error(threeCycle) == .inheritanceCycle(["A", "B", "C"]))
        #expect(error([Entity("Self", parent: "Self")]) == .inheritanceCycle(["Self"]))
        let besideAValidTree = [
            Entity("Root"), Entity("Y", parent: "Z"), Entity("Z", parent: "Y"), Entity("W", parent: "Root"),
        ]
        #expect(error(besideAValidTree) == .inheritanceCycle(["Y", "Z"]))
    }

    @Test func tooManyEntitiesAreRejected() {
        let entities = (0...Int(UInt16.max)).map { Entity("E\($0)") }
        #expect(error(entities) == .tooManyEntities(65536))
    }

    @Test func emptyAttributeNameIsRejected() {
        #expect(error(Attribute("", .string)) == .emptyAttributeName(entity: "A"))
    }

    @Test func duplicateAttributeIsRejected() {
        let entity = Entity("A") {
            Attribute("x", .string)
            Attribute("x", .integer16)
        }
        #expect(error([entity]) == .duplicateAttribute(entity: "A", attribute: "x"))
    }

    @Test func redeclaredInheritedAttributeIsRejectedNamingItsDeclaringAncestor() {
        let parent = Entity("A") { Attribute("x", .string) }
        let child = Entity("B", parent: "A") { Attribute("x", .string) }
        #expect(error([parent, child]) == .redeclaredAttribute(entity: "B", attribute: "x", inheritedFrom: "A"))
        let grandchild = Entity("C", parent: "B") { Attribute("x", .string).transient() }
        #expect(
            error([parent, Entity("B", parent: "A"), grandchild])
                == .redeclaredAttribute(entity: "C", attribute: "x", inheritedFrom: "A"))
    }

    @Test func undefinedTypeIsRejectedOnPersistentAttributesOnly() {
        #expect(error(Attribute("x", .undefined)) == .undefinedTypeOnPersistentAttribute(entity: "A", attribute: "x"))
        #expect(error(Attribute("x", .undefined, default: .string("any")).transient()) == nil)
    }

    @Test func defaultValueOfTheWrongTypeIsRejected() {
        #expect(
            error(Attribute("x", .integer64, default: .string("1")))
                == .defaultValueTypeMismatch(entity: "A", attribute: "x", expected: .integer64))
        #expect(
            error(Attribute("x", .integer16, default: .integer(40_000)))
                == .defaultValueTypeMismatch(entity: "A", attribute: "x", expected: .integer16))
        #expect(
            error(Attribute("x", .double, default: .float(1)))
                == .defaultValueTypeMismatch(entity: "A", attribute: "x", expected: .double))
        #expect(error(Attribute("x", .integer16, default: .integer(-32768))) == nil)
    }

    @Test func transformableAttributeWithoutTransformerNameIsRejected() {
        let missing = ModelError.missingValueTransformerName(entity: "A", attribute: "x")
        #expect(error(Attribute("x", .transformable)) == missing)
        #expect(error(Attribute("x", .transformable, valueTransformerName: "")) == missing)
        #expect(error(Attribute("x", .transformable).valueTransformer("NotRegisteredYet")) == nil)
    }

    @Test func optionsOffTheirTypesAreRejected() {
        #expect(
            error(Attribute("x", .string, valueTransformerName: "T"))
                == .optionNotApplicable(entity: "A", attribute: "x", option: "valueTransformerName"))
        #expect(
            error(Attribute("x", .string).allowsExternalStorage())
                == .optionNotApplicable(entity: "A", attribute: "x", option: "allowsExternalBinaryDataStorage"))
        #expect(error(Attribute("x", .transformable, valueTransformerName: "T").allowsExternalStorage()) == nil)
    }

    @Test func validationRulesOffTheirTypesAreRejected() {
        let cases: [(AttributeType, ValidationRule)] = [
            (.integer64, .length(min: 1, max: nil)),
            (.string, .range(min: .integer(0), max: nil)),
            (.binaryData, .regularExpression("a")),
            (.boolean, .range(min: nil, max: nil)),
            (.integer32, .range(min: .double(0), max: nil)),
            (.date, .range(min: nil, max: .integer(5))),
            (.decimal, .range(min: .double(1), max: nil)),
            (.double, .range(min: .decimal(1), max: nil)),
        ]
        for (type, rule) in cases {
            #expect(
                error(Attribute("x", type).validated(rule))
                    == .ruleNotApplicable(entity: "A", attribute: "x", rule: rule), "\(type) \(rule)")
        }
    }

    @Test func patternThatDoesNotCompileIsRejectedWhenTheModelIsBuilt() {
        #expect(
            error(Attribute("x", .string).validated(.regularExpression("(unclosed")))
                == .invalidRegularExpression(entity: "A", attribute: "x", pattern: "(unclosed"))
    }

    @Test func everyModelErrorDescribesItself() {
        let errors: [ModelError] = [
            .emptyEntityName, .duplicateEntity("A"), .unknownParent(entity: "A", parent: "B"),
            .inheritanceCycle(["A", "B"]), .tooManyEntities(70_000), .emptyAttributeName(entity: "A"),
            .duplicateAttribute(entity: "A", attribute: "x"),
            .redeclaredAttribute(entity: "B", attribute: "x", inheritedFrom: "A"),
            .undefinedTypeOnPersistentAttribute(entity: "A", attribute: "x"),
            .defaultValueTypeMismatch(entity: "A", attribute: "x", expected: .string),
            .missingValueTransformerName(entity: "A", attribute: "x"),
            .optionNotApplicable(entity: "A", attribute: "x", option: "o"),
            .ruleNotApplicable(entity: "A", attribute: "x", rule: .length(min: 1, max: 2)),
            .invalidRegularExpression(entity: "A", attribute: "x", pattern: "("),
        ]
        #expect(Set(errors.map(\.description)).count == errors.count)
    }
}

/// The version hash: stable across runs and machines, sensitive to row layout only.
@Suite struct ModelVersionHashTests {
    private func hash(_ entities: [Entity]) throws -> String {
        try ManagedObjectModel(entities: entities).versionHash
    }

    /// An entity from a list of attributes.
    private static func entity(named name: String = "A", abstract: Bool = false, _ attributes: Attribute...) -> Entity {
        Entity(name, abstract: abstract) { attributes.map(PropertyDefinition.attribute) }
    }

    private static let x = Attribute("x", .integer64)
    private static let y = Attribute("y", .string, optional: false)
    private static let t = Attribute("t", .transformable, valueTransformerName: "T")
    private static let base = [entity(x, y, t)]

    @Test func stableHasherMatchesPublishedFNV1a128Vectors() {
        var empty = StableHasher()
        empty.combine(bytes: [])
        #expect(empty.hexDigest == "6c62272e07bb014262b821756295c58d")
        var a = StableHasher()
        a.combine(bytes: Array("a".utf8))
        #expect(a.hexDigest == "d228cb696f1a8caf78912b704e4a8964")
        var foobar = StableHasher()
        foobar.combine(bytes: Array("foobar".utf8))
        #expect(foobar.hexDigest == "343e1662793c64bf6f0d3597ba446f18")
    }

    @Test func versionHashIsPinned() throws {
        // Pinned digits: an independent re-implementation of the documented encoding (FNV-1a 128 over
        // the canonical bytes, written in Python) gives the same values.
        let model = try CompanyModel.make()
        #expect(model.versionHash == "95235aeeaae82dbc896729385a9a96a6")
        #expect(model.entityVersionHashesByName["Employee"] == "c78c249e3c1016a5702b7f009b956b63")
        #expect(model.versionHash.count == 32)
        #expect(model.entityVersionHashesByName.count == 5)
        #expect(model.entities.allSatisfy { model.entityVersionHashesByName[$0.name] == $0.versionHash })
    }

    @Test func versionHashIsTheSameForEveryBuildOfTheSameDefinitions() throws {
        #expect(try hash(Self.base) == hash(Self.base))
        #expect(try CompanyModel.make().versionHash == CompanyModel.make().versionHash)
    }

    @Test func versionHashChangesWhenAPersistentAttributeChanges() throws {
        let original = try hash(Self.base)
        let (x, y, t) = (Self.x, Self.y, Self.t)
        let variants: [(String, [Entity])] = [
            ("renamed attribute", [Self.entity(Attribute("x2", .integer64), y, t)]),
            ("changed type", [Self.entity(Attribute("x", .integer32), y, t)]),
            ("changed optionality", [Self.entity(x, Attribute("y", .string), t)]),
            ("changed transformer", [Self.entity(x, y, t.valueTransformer("U"))]),
            ("reordered attributes", [Self.entity(y, x, t)]),
            ("added attribute", [Self.entity(x, y, t, Attribute("z", .uuid))]),
            ("removed attribute", [Self.entity(x, y)]),
            ("made transient", [Self.entity(x.transient(), y, t)]),
            ("made abstract", [Self.entity(abstract: true, x, y, t)]),
            ("renamed entity", [Self.entity(named: "A2", x, y, t)]),
            ("added entity", Self.base + [Entity("B")]),
        ]
        var seen: Set<String> = [original]
        for (change, entities) in variants {
            let changed = try hash(entities)
            #expect(changed != original, "\(change)")
            seen.insert(changed)
        }
        #expect(seen.count == variants.count + 1)
    }

    @Test func versionHashIgnoresRulesDefaultsIndexesExternalStorageAndTransients() throws {
        let decorated = Entity("A", className: "SomeClass") {
            Attribute("x", .integer64, default: .integer(5))
                .validated(.range(min: .integer(0), max: .integer(9)))
                .indexed()
            Attribute("note", .string).transient()
            Attribute("y", .string, optional: false)
                .validated(.length(min: 1, max: nil), .regularExpression("[a-z]+"))
            Attribute("t", .transformable, valueTransformerName: "T").allowsExternalStorage()
        }
        #expect(try hash([decorated]) == hash(Self.base))
    }

    @Test func changingAParentsAttributeChangesTheChildsHash() throws {
        let before = try ManagedObjectModel {
            Entity("P") { Attribute("a", .string) }; Entity("C", parent: "P")
        }
        let after = try ManagedObjectModel {
            Entity("P") { Attribute("a", .integer16) }; Entity("C", parent: "P")
        }
        #expect(before.entityVersionHashesByName["C"] != after.entityVersionHashesByName["C"])
        let reparented = try ManagedObjectModel {
            Entity("P") { Attribute("a", .string) }; Entity("C")
        }
        #expect(before.entityVersionHashesByName["C"] != reparented.entityVersionHashesByName["C"])
    }
}

/// Value transformers and their registry.
@Suite struct ValueTransformerTests {
    struct Address: Codable, Hashable, Sendable {
        var street: String
        var city: String
    }

    @Test func codableTransformerRoundTripsThroughTheRegistry() throws {
        let registry = ValueTransformerRegistry()
        registry.register(CodableValueTransformer<Address>(), named: "Address")
        let transformer = try #require(registry.transformer(named: "Address"))
        let address = Address(street: "1 Infinite Loop", city: "Cupertino")
        let data = try transformer.transformedValue(address)
        #expect(String(decoding: data, as: UTF8.self) == #"{"city":"Cupertino","street":"1 Infinite Loop"}"#)
        #expect(try transformer.reverseTransformedValue(data) as? Address == address)
    }

    @Test func transformersReceiveTheValueKeyValueCodingBoxed() throws {
        // Key-value coding takes `Any`, so it boxes values; the row coder hands transformers the value itself.
        let address = Address(street: "Main St", city: "Springfield")
        let boxed = AnyHashableSendable(unchecked: AnyHashable(address))
        #expect(boxed.value as? Address == address)
        let transformer = CodableValueTransformer<Address>()
        #expect(
            try transformer.reverseTransformedValue(transformer.transformedValue(boxed.value)) as? Address == address)
    }

    @Test func codableTransformerHandlesCollectionsAndScalars() throws {
        let tags = CodableValueTransformer<[String]>()
        #expect(try tags.reverseTransformedValue(tags.transformedValue(["a", "b"])) as? [String] == ["a", "b"])
        let number = CodableValueTransformer<Int>()
        #expect(try number.reverseTransformedValue(number.transformedValue(42)) as? Int == 42)
    }

    @Test func codableTransformerRejectsAValueOfAnotherType() {
        #expect(throws: ValueTransformerError.unexpectedValueType(expected: "Address", found: "String")) {
            try CodableValueTransformer<Address>().transformedValue("not an address")
        }
        #expect(throws: DecodingError.self) {
            try CodableValueTransformer<Address>().reverseTransformedValue(Data("[1]".utf8))
        }
    }

    @Test func registryReplacesAndRemovesTransformers() throws {
        let registry = ValueTransformerRegistry()
        #expect(registry.transformer(named: "T") == nil)
        registry.register(CodableValueTransformer<Int>(), named: "T")
        registry.register(CodableValueTransformer<String>(), named: "T")
        let transformer = try #require(registry.transformer(named: "T"))
        #expect(try transformer.reverseTransformedValue(Data(#""s""#.utf8)) as? String == "s")
        registry.removeTransformer(named: "T")
        #expect(registry.transformer(named: "T") == nil)
    }

    @Test func sharedRegistryServesEveryThread() async throws {
        let name = "ValueTransformerTests.\(UUID().uuidString)"
        defer { ValueTransformerRegistry.shared.removeTransformer(named: name) }
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<32 {
                group.addTask {
                    ValueTransformerRegistry.shared.register(CodableValueTransformer<Int>(), named: "\(name).\(index)")
                    ValueTransformerRegistry.shared.register(CodableValueTransformer<Int>(), named: name)
                    _ = ValueTransformerRegistry.shared.transformer(named: name)
                }
            }
        }
        for index in 0..<32 {
            #expect(ValueTransformerRegistry.shared.transformer(named: "\(name).\(index)") != nil)
            ValueTransformerRegistry.shared.removeTransformer(named: "\(name).\(index)")
        }
        #expect(ValueTransformerRegistry.shared.transformer(named: name) != nil)
    }
}
