import Foundation
import StrataFormat
import Testing

@testable import Strata

/// Rows kept as their record's bytes (``StoredRow``, `RowCoder.checkRow`), each field decoded when read: the same
/// values, references and errors as decoding the whole row at once.
@Suite struct RecordRowTests {
    /// Every attribute type a record-kept entity may have (no transformable, no URI), a to-one to a hierarchy.
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            Entity("Kept") {
                Attribute("i16", .integer16)
                Attribute("i32", .integer32)
                Attribute("i64", .integer64)
                Attribute("decimal", .decimal)
                Attribute("double", .double)
                Attribute("float", .float)
                Attribute("string", .string)
                Attribute("boolean", .boolean)
                Attribute("date", .date)
                Attribute("data", .binaryData).allowsExternalStorage()
                Attribute("uuid", .uuid)
                Attribute("scratch", .undefined).transient()
                Relationship.toOne("owner", "Owner", inverse: "kept")
            }
            Entity("Owner") {
                Attribute("name", .string)
                Relationship.toMany("kept", "Kept", inverse: "owner")
            }
            Entity("SpecialOwner", parent: "Owner") { Attribute("rank", .integer16) }
            Entity("Parsed") {
                Attribute("link", .uri)
            }
            // Fields the check accepts in one pass (every type but decimal and UUID), a to-one to an entity without
            // subentities (its entity field null).
            Entity("Plain") {
                Attribute("i16", .integer16)
                Attribute("i32", .integer32)
                Attribute("i64", .integer64)
                Attribute("double", .double)
                Attribute("float", .float)
                Attribute("string", .string)
                Attribute("boolean", .boolean)
                Attribute("date", .date)
                Attribute("data", .binaryData)
                Relationship.toOne("leaf", "Leaf")
            }
            Entity("Leaf") {
                Attribute("name", .string)
            }
        }
    }

    static let values: [AttributeValue?] = [
        .integer(-32768), .integer(2_147_483_647), .integer(.min), .decimal(Decimal(string: "-98765.4321")!),
        .double(-0.0), .float(3.25), .string("Zoë and a name longer than fifteen bytes"), .boolean(true),
        .date(Date(timeIntervalSinceReferenceDate: 123_456_789.5)), nil,
        .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!),
    ]

    /// The row's fields with a blob reference in `data` and a reference to special owner 5.
    static func record(of entity: EntityDescription, owner: EntityDescription) throws -> [UInt8] {
        var fields = try RowCoder(entity: entity).fields(
            for: values, references: [StoredReference(entity: owner, rowID: 5)])
        fields[9] = .blobReference(77)
        return RowRecord.encode(entityID: entity.entityID, rowVersion: 4, fields: fields)
    }

    @Test func onlyEntitiesWhoseValuesCannotFailToDecodeKeepTheirRowsAsRecords() throws {
        let model = try Self.model()
        #expect(try #require(model.entity(named: "Kept")).keepsRowsAsRecords)
        #expect(try #require(model.entity(named: "Owner")).keepsRowsAsRecords)
        #expect(!(try #require(model.entity(named: "Parsed")).keepsRowsAsRecords))
        #expect(!(try #require(try RowCoderTests.everyTypeModel().entity(named: "Everything")).keepsRowsAsRecords))
    }

    @Test func aRecordRowReadsAsTheDecodedRow() throws {
        let model = try Self.model()
        let entity = try #require(model.entity(named: "Kept"))
        let special = try #require(model.entity(named: "SpecialOwner"))
        let bytes = try Self.record(of: entity, owner: special)
        let coder = RowCoder(entity: entity)
        let decoded = try bytes.withUnsafeBytes { try coder.decodeRow($0, header: try RowRecord.Header.decode($0)) }
        let referencesBlobs = try bytes.withUnsafeBytes {
            try coder.checkRow($0, header: try RowRecord.Header.decode($0))
        }
        // The row keeps a value in blob 77: the check says so.
        #expect(referencesBlobs)
        let record = StoredRow(entity: entity, version: 4, checkedRecord: bytes, referencesBlobs: referencesBlobs)
        #expect(record.isRecord && record.referencesBlobs)
        #expect(record.values == decoded.values)
        #expect(record.references == decoded.references)
        #expect(record.references == [StoredReference(entity: special, rowID: 5)])
        #expect(record.externalReferences == decoded.external)
        #expect(record.externalReferences == [9: 77])
        for index in Self.values.indices {
            #expect(record.value(atStorageIndex: index) == decoded.values[index])
        }
        #expect(record.reference(atToOneIndex: 0) == decoded.references[0])
        // Equal to the same row decoded, and to the same bytes kept again.
        let values = StoredRow(
            entity: entity, version: 4, values: decoded.values, references: decoded.references,
            externalReferences: decoded.external)
        #expect(record == values && values == record)
        #expect(record == StoredRow(entity: entity, version: 4, checkedRecord: bytes, referencesBlobs: true))
        // A change makes it a decoded row with the change.
        var changed = record
        changed.values[0] = .integer(1)
        #expect(!changed.isRecord && changed != record)
        #expect(changed.value(atStorageIndex: 0) == .integer(1) && changed.references == record.references)
    }

    /// The inlined read of an integer or string field (`recordValue(ofField:type:)`, what an object's read of a field
    /// still in its record uses) gives the decoded row's value, and nil for every field it does not settle: other
    /// types, a null, a blob reference, a row of values.
    @Test func theInlinedRecordReadGivesTheDecodedValueOrLeavesTheField() throws {
        let model = try Self.model()
        let entity = try #require(model.entity(named: "Kept"))
        let special = try #require(model.entity(named: "SpecialOwner"))
        let bytes = try Self.record(of: entity, owner: special)
        let record = StoredRow(entity: entity, version: 4, checkedRecord: bytes, referencesBlobs: true)
        for attribute in entity.persistentAttributes {
            let read = record.recordValue(ofField: try #require(attribute.fieldIndex), type: attribute.type)
            switch attribute.type {
            case .integer16, .integer32, .integer64, .string:
                #expect(read != nil && read == record.value(of: attribute), "\(attribute.name)")
            default:
                #expect(read == nil, "\(attribute.name)")
            }
        }
        // Nulls, and a row of values, are left to value(of:).
        var nulls = Self.values
        for index in [0, 1, 2, 6] { nulls[index] = nil }
        let coder = RowCoder(entity: entity)
        let nullBytes = try coder.encode(nulls, rowVersion: 2)
        let nullRecord = StoredRow(entity: entity, version: 2, checkedRecord: nullBytes, referencesBlobs: false)
        let values = StoredRow(entity: entity, version: 4, values: record.values, references: record.references)
        for index in [0, 1, 2, 6] {
            let attribute = entity.persistentAttributes[index]
            let field = try #require(attribute.fieldIndex)
            #expect(nullRecord.recordValue(ofField: field, type: attribute.type) == nil)
            #expect(nullRecord.value(of: attribute) == nil)
            #expect(values.recordValue(ofField: field, type: attribute.type) == nil)
            #expect(values.value(of: attribute) == Self.values[index])
        }
    }

    /// A row whose check found no blob reference is kept saying so: its binary value reads from the row, and no field
    /// is searched for a blob when an object loads it.
    @Test func aRecordWhoseCheckFoundNoBlobReferenceHasNone() throws {
        let model = try Self.model()
        let entity = try #require(model.entity(named: "Kept"))
        var values = Self.values
        values[9] = .data(Data([1, 2, 3]))
        let coder = RowCoder(entity: entity)
        let bytes = try coder.encode(values, rowVersion: 3)
        let referencesBlobs = try bytes.withUnsafeBytes {
            try coder.checkRow($0, header: try RowRecord.Header.decode($0))
        }
        #expect(!referencesBlobs)
        let record = StoredRow(entity: entity, version: 3, checkedRecord: bytes, referencesBlobs: false)
        #expect(record.isRecord && !record.referencesBlobs)
        #expect(record.externalReferences.isEmpty)
        #expect(record.blobReference(atStorageIndex: 9) == nil)
        #expect(record.value(atStorageIndex: 9) == .data(Data([1, 2, 3])))
        #expect(record.values == values)
        #expect(ObjectState.externalReferences(of: record, entity: entity).isEmpty)
    }

    @Test func checkingARowAcceptsExactlyTheDamagedRowsThatDecode() throws {
        let model = try Self.model()
        let entity = try #require(model.entity(named: "Kept"))
        try Self.expectCheckAgreesWithDecoding(
            try Self.record(of: entity, owner: try #require(model.entity(named: "SpecialOwner"))), of: entity)
    }

    /// The fields a row's check accepts where they lie (``RowCoder/FieldCheck``): nulls, ASCII strings, bytes kept in
    /// the row, and a to-one whose destination's own entity needs no entity field.
    @Test func checkingARowOfFieldsAcceptedInPlaceAcceptsExactlyTheDamagedRowsThatDecode() throws {
        let model = try Self.model()
        let entity = try #require(model.entity(named: "Kept"))
        let values: [AttributeValue?] = [
            .integer(7), nil, .integer(-1_000_000), nil, .double(2.5), nil, .string("Ada Lovelace"), .boolean(false),
            .date(Date(timeIntervalSinceReferenceDate: -42)), .data(Data([0, 1, 2, 0xFF])), nil,
        ]
        let bytes = try RowCoder(entity: entity).encode(
            values, references: [StoredReference(entity: try #require(model.entity(named: "Owner")), rowID: 300)],
            rowVersion: 2)
        try Self.expectCheckAgreesWithDecoding(bytes, of: entity)
        // Every to-one and value nil.
        try Self.expectCheckAgreesWithDecoding(
            try RowCoder(entity: entity).encode(Array(repeating: nil, count: values.count), rowVersion: 1), of: entity)
    }

    /// A row whose every field the check accepts in one pass over its field ends (``RowCoder/acceptsEveryField(_:header:)``)
    /// is accepted so, and damaged, is accepted exactly when it decodes; rows the pass is not sure of (a field it does
    /// not take, ends wider than a byte) are checked in full, with the same answers.
    @Test func checkingARowInOnePassAcceptsExactlyTheDamagedRowsThatDecode() throws {
        let model = try Self.model()
        let entity = try #require(model.entity(named: "Plain"))
        let leaf = try #require(model.entity(named: "Leaf"))
        let coder = RowCoder(entity: entity)
        func inOnePass(_ bytes: [UInt8]) throws -> Bool {
            try bytes.withUnsafeBytes { coder.acceptsEveryField($0, header: try RowRecord.Header.decode($0)) }
        }
        let values: [AttributeValue?] = [
            .integer(-300), .integer(70_000), .integer(-1), .double(2.5), .float(-1), .string("Ada Lovelace"),
            .boolean(true), .date(Date(timeIntervalSinceReferenceDate: 42)), .data(Data([0, 0xFF])),
        ]
        let bytes = try coder.encode(values, references: [StoredReference(entity: leaf, rowID: 300)], rowVersion: 2)
        #expect(try inOnePass(bytes))
        try Self.expectCheckAgreesWithDecoding(bytes, of: entity)
        // Every value and the to-one nil.
        let nulls = try coder.encode(Array(repeating: nil, count: values.count), rowVersion: 1)
        #expect(try inOnePass(nulls))
        try Self.expectCheckAgreesWithDecoding(nulls, of: entity)
        // An integer in the row's last bytes, and at each width.
        for number: Int64 in [0, -1, 127, 128, -129, 40_000, 1 << 40, .min, .max] {
            var last = Array(repeating: AttributeValue?.none, count: values.count)
            last[2] = .integer(number)
            last[8] = nil
            let row = try coder.encode(last, rowVersion: 1)
            #expect(try inOnePass(row), "\(number)")
            try Self.expectCheckAgreesWithDecoding(row, of: entity)
        }
        // Not in one pass, and checked in full: a string that is not ASCII, ends of two bytes, a decimal (Kept).
        var other = values
        other[5] = .string("Zoë")
        let nonASCII = try coder.encode(other, rowVersion: 2)
        #expect(try !inOnePass(nonASCII))
        try Self.expectCheckAgreesWithDecoding(nonASCII, of: entity)
        other[5] = .string(String(repeating: "a", count: 300))
        let wide = try coder.encode(other, rowVersion: 2)
        #expect(try !inOnePass(wide))
        #expect(try wide.withUnsafeBytes { try coder.checkRow($0, header: try RowRecord.Header.decode($0)) } == false)
        let kept = try #require(model.entity(named: "Kept"))
        let keptBytes = try Self.record(of: kept, owner: try #require(model.entity(named: "SpecialOwner")))
        #expect(
            try !keptBytes.withUnsafeBytes {
                RowCoder(entity: kept).acceptsEveryField($0, header: try RowRecord.Header.decode($0))
            })
    }

    /// Flips bits of every byte of `original` (a row of `entity`) and expects `checkRow` to accept exactly the rows
    /// `decodeRow` decodes, with the same error for the others (but for a blob reference where it is stricter), and
    /// a row it accepts to read as the decoded row.
    static func expectCheckAgreesWithDecoding(_ original: [UInt8], of entity: EntityDescription) throws {
        let coder = RowCoder(entity: entity)
        var accepted = 0
        var rejected = 0
        for index in original.indices {
            for mask: UInt8 in [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0xFF] {
                var damaged = original
                damaged[index] ^= mask
                damaged.withUnsafeBytes { bytes in
                    guard let header = try? RowRecord.Header.decode(bytes) else { return }
                    let decoded = Result { try coder.decodeRow(bytes, header: header) }
                    let checked = Result { try coder.checkRow(bytes, header: header) }
                    switch (decoded, checked) {
                    case (.success(let row), .success(let referencesBlobs)):
                        accepted += 1
                        // The check finds a blob reference exactly where decodeRow does.
                        #expect(referencesBlobs == !row.external.isEmpty, "byte \(index) ^ \(mask)")
                        // Every field of what the check accepted decodes to what decodeRow made.
                        let kept = StoredRow(
                            entity: entity, version: header.rowVersion, checkedRecord: damaged,
                            referencesBlobs: referencesBlobs)
                        #expect(kept.values == row.values, "byte \(index) ^ \(mask)")
                        #expect(kept.references == row.references, "byte \(index) ^ \(mask)")
                        #expect(kept.externalReferences == row.external, "byte \(index) ^ \(mask)")
                    case (.failure(let decodeError), .failure(let checkError)):
                        rejected += 1
                        #expect(
                            String(describing: decodeError) == String(describing: checkError),
                            "byte \(index) ^ \(mask): another error")
                    case (.success, .failure(let error)):
                        // Stricter on one point only: a blob reference in a field that is not binary data.
                        guard case RowCodingError.fieldTypeMismatch(_, _, .blobReference) = error else {
                            Issue.record("byte \(index) ^ \(mask): the check rejects a row that decodes: \(error)")
                            return
                        }
                        rejected += 1
                    case (.failure(let error), .success):
                        Issue.record("byte \(index) ^ \(mask): the check accepts a row that does not decode: \(error)")
                    }
                }
            }
        }
        #expect(accepted > 0 && rejected > 0)
    }

    @Test func aFetchedObjectDecodesOnlyWhatItReadsAndSeesEveryValue() throws {
        let model = try Self.model()
        let stack = try TestStack(.strata, model: model)
        let context = stack.context()
        let owner = ManagedObject(entity: try #require(model.entity(named: "SpecialOwner")), insertInto: context)
        try owner.setValue("Ada", forKey: "name")
        let kept = ManagedObject(entity: try #require(model.entity(named: "Kept")), insertInto: context)
        for (attribute, value) in zip(kept.entity.persistentAttributes, Self.values) {
            try kept.setValue(value?.objectValue, forKey: attribute.name)
        }
        try kept.setValue(owner, forKey: "owner")
        try context.save()
        let id = kept.objectID

        let reader = stack.context()
        let fetched = try #require(try reader.fetch(FetchRequest<ManagedObject>(entityName: "Kept")).first)
        #expect(fetched.objectID == id)
        #expect(try fetched.value(forKey: "i32") as? Int32 == 2_147_483_647)
        let state = try #require(fetched.state)
        #expect(state.record?.isRecord == true)
        // Read from the row where it lies: nothing decoded into values, which are still the entity's shared defaults.
        #expect(state.undecoded.count == Self.values.count)
        #expect(Self.sharesDefaults(state))
        #expect(try fetched.value(forKey: "string") as? String == "Zoë and a name longer than fifteen bytes")
        #expect(try fetched.value(forKey: "i32") as? Int32 == 2_147_483_647)
        #expect(state.undecoded.count == Self.values.count && Self.sharesDefaults(state))
        // A decimal is decoded once, into values of the state's own: the one field kept.
        #expect(try fetched.value(forKey: "decimal") as? Decimal == Decimal(string: "-98765.4321")!)
        #expect(state.undecoded.count == Self.values.count - 1)
        #expect(!Self.sharesDefaults(state))
        #expect(try fetched.value(forKey: "decimal") as? Decimal == Decimal(string: "-98765.4321")!)
        #expect(!fetched.hasPersistentChangedValues && !fetched.hasChanges)
        #expect(try (fetched.value(forKey: "owner") as? ManagedObject)?.objectID == owner.objectID)
        // Every value, as the object that saved it holds it.
        for attribute in fetched.entity.persistentAttributes {
            #expect(
                try fetched.attributeValue(forKey: attribute.name) == kept.attributeValue(forKey: attribute.name),
                "\(attribute.name)")
        }
        // The attributes and the to-one, from the row.
        let committed = fetched.committedValues(forKeys: nil)
        #expect(committed.count == Self.values.count + 1)
        #expect(committed["i64"]! as? Int64 == .min)
        #expect((committed["owner"]! as? ManagedObject)?.objectID == owner.objectID)

        // A change is a change, and setting the value back is none (compared with the row's).
        try fetched.setValue("Grace", forKey: "string")
        #expect(fetched.hasPersistentChangedValues)
        try fetched.setValue("Zoë and a name longer than fifteen bytes", forKey: "string")
        #expect(!fetched.hasPersistentChangedValues)
        try fetched.setValue(Int64(5), forKey: "i64")
        try reader.save()
        // Settled onto the row the save wrote (its changed fields encoded, the others copied), as a fetched object.
        #expect(fetched.state?.record?.version == 2)
        #expect(fetched.state?.record?.isRecord == true)
        #expect(try fetched.value(forKey: "i64") as? Int64 == 5)
        #expect(try fetched.value(forKey: "i16") as? Int16 == -32768)

        // Refreshed, it fires again from the saved row; rolled back changes return to it.
        try reader.refresh(fetched, mergeChanges: false)
        try fetched.setValue(Int16(3), forKey: "i16")
        reader.rollback()
        #expect(try fetched.value(forKey: "i16") as? Int16 == -32768)
        #expect(try fetched.value(forKey: "i64") as? Int64 == 5)
    }

    /// Whether a state's values are still its entity's shared defaults (it made no buffer of its own).
    static func sharesDefaults(_ state: ObjectState) -> Bool {
        guard let entity = state.record?.entity else { return false }
        return state.values.withUnsafeBufferPointer { mine in
            entity.defaultValues.withUnsafeBufferPointer { $0.baseAddress == mine.baseAddress }
        }
    }

    /// A state loaded from a record shares the entity's default values until its first decode, which gives it a
    /// buffer of its own (made, not copied): the entity's defaults never change, a transient keeps its default, and
    /// every decoded value is the row's, one at a time or all at once.
    @Test func aFiredFaultsFirstReadLeavesTheEntitysDefaultsAsTheyWere() throws {
        let model = try ManagedObjectModel {
            Entity("Defaulted") {
                Attribute("name", .string, default: .string("unnamed"))
                Attribute("count", .integer64, default: .integer(7))
                Attribute("note", .string, default: .string("transient default")).transient()
            }
        }
        let entity = try #require(model.entity(named: "Defaulted"))
        let defaults = entity.defaultValues
        let stack = try TestStack(.strata, model: model)
        // Saved by a context that is gone: its objects' cached rows (decoded) go with it, so the faults read records.
        let ids = try {
            let writer = stack.context()
            let saved = (0..<2).map { number in
                let object = ManagedObject(entity: entity, insertInto: writer)
                try? object.setValue("row \(number)", forKey: "name")
                try? object.setValue(Int64(100 + number), forKey: "count")
                return object
            }
            try writer.save()
            return saved.map(\.objectID)
        }()

        let reader = stack.context()
        let first = reader.object(with: ids[0])
        #expect(try first.value(forKey: "count") as? Int64 == 100)
        let state = try #require(first.state)
        #expect(state.record?.isRecord == true)
        // Read where it lies in the record: the state still shares the defaults, every persistent field undecoded.
        #expect(state.undecoded.count == 2 && Self.sharesDefaults(state))
        #expect(entity.defaultValues == defaults)
        #expect(try first.value(forKey: "note") as? String == "transient default")
        #expect(try first.value(forKey: "name") as? String == "row 0")
        // A write gives the state values of its own; the other field is still read from the record.
        try first.setValue(Int64(5), forKey: "count")
        #expect(!Self.sharesDefaults(state) && state.undecoded.count == 1)
        #expect(try first.value(forKey: "name") as? String == "row 0")
        #expect(try first.value(forKey: "count") as? Int64 == 5)
        #expect(entity.defaultValues == defaults)
        // All at once (the whole values read): the other fault's first decode.
        let second = reader.object(with: ids[1])
        try second.fulfillFaultIfNeeded()
        #expect(second.values == [.string("row 1"), .integer(101), .string("transient default")])
        #expect(entity.defaultValues == defaults)
        #expect(ManagedObject(entity: entity, insertInto: nil).values == defaults)
    }
}
