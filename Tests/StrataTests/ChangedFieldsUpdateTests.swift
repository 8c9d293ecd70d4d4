import Foundation
import StrataFormat
import StrataStorage
import Testing

@testable import Strata

/// Updates of objects read from row records (``StoreChanges/Update/changedFields``): the Strata store encodes only the
/// changed fields and copies the others' bytes, and the object settles onto the row it wrote, as a fetched object
/// reads from its record. What every store saves, and what the objects read afterwards, is what a whole update gives.
@Suite struct ChangedFieldsUpdateTests {
    static let owners = ["Ada", "Grace"]

    /// A saved `Kept` (every value of ``RecordRowTests/values``, the transient set) owned by the first of two owners;
    /// its ID and the owners' IDs.
    static func seed(_ stack: TestStack) throws -> (kept: ManagedObjectID, owners: [ManagedObjectID]) {
        let context = stack.context()
        let owners = try Self.owners.map { name in
            let owner = ManagedObject(entity: try #require(stack.model.entity(named: "Owner")), insertInto: context)
            try owner.setValue(name, forKey: "name")
            return owner
        }
        let kept = ManagedObject(entity: try #require(stack.model.entity(named: "Kept")), insertInto: context)
        for (attribute, value) in zip(kept.entity.persistentAttributes, RecordRowTests.values) {
            try kept.setValue(value?.objectValue, forKey: attribute.name)
        }
        try kept.setValue(owners[0], forKey: "owner")
        try context.save()
        return (kept.objectID, owners.map(\.objectID))
    }

    /// Every persistent value and the owner, as a new context reads them from the store.
    static func saved(_ id: ManagedObjectID, in stack: TestStack) throws -> (values: [AttributeValue?], owner: String?)
    {
        let context = stack.context()
        let object = context.object(with: id)
        let values = try object.entity.persistentAttributes.map { try object.attributeValue(forKey: $0.name) }
        let owner = try (object.value(forKey: "owner") as? ManagedObject)?.value(forKey: "name") as? String
        return (values, owner)
    }

    @Test(arguments: StoreKind.allCases)
    func anUpdateOfSomeValuesSavesThemAndKeepsTheOthers(_ kind: StoreKind) throws {
        let stack = try TestStack(kind, model: try RecordRowTests.model())
        let (id, _) = try Self.seed(stack)
        let context = stack.context()
        let kept = context.object(with: id)
        try kept.setValue(Int64(5), forKey: "i64")
        try kept.setValue("Zoë again", forKey: "string")
        // Read, not changed: decoded in the object, written as it was.
        #expect(try kept.value(forKey: "decimal") as? Decimal == Decimal(string: "-98765.4321")!)
        try kept.setValue("scratch value", forKey: "scratch")
        try context.save()

        var expected = RecordRowTests.values
        expected[2] = .integer(5)
        expected[6] = .string("Zoë again")
        let saved = try Self.saved(id, in: stack)
        #expect(saved.values == expected)
        #expect(saved.owner == "Ada")
        // The saving context's object reads the saved values, its transient's included, and has no change left.
        for (attribute, value) in zip(kept.entity.persistentAttributes, expected) {
            #expect(try kept.attributeValue(forKey: attribute.name) == value, "\(attribute.name)")
        }
        #expect(try kept.value(forKey: "scratch") as? String == "scratch value")
        #expect(try (kept.value(forKey: "owner") as? ManagedObject)?.value(forKey: "name") as? String == "Ada")
        #expect(!kept.hasChanges && kept.changedValues().isEmpty)
        #expect(kept.version == 2)
    }

    @Test(arguments: StoreKind.allCases)
    func anUpdateOfAToOneSavesItWithTheValues(_ kind: StoreKind) throws {
        let stack = try TestStack(kind, model: try RecordRowTests.model())
        let (id, owners) = try Self.seed(stack)
        let context = stack.context()
        let kept = context.object(with: id)
        try kept.setValue(context.object(with: owners[1]), forKey: "owner")
        try kept.setValue(Int16(12), forKey: "i16")
        try context.save()
        var expected = RecordRowTests.values
        expected[0] = .integer(12)
        let saved = try Self.saved(id, in: stack)
        #expect(saved.values == expected)
        #expect(saved.owner == "Grace")

        // A to-one read and left as it was, and a change of no attribute at all: a relationship alone.
        let other = stack.context()
        let again = other.object(with: id)
        #expect(try (again.value(forKey: "owner") as? ManagedObject)?.value(forKey: "name") as? String == "Grace")
        try again.setValue(nil, forKey: "owner")
        try other.save()
        #expect(try Self.saved(id, in: stack).owner == nil)
        #expect(try Self.saved(id, in: stack).values == expected)
    }

    /// In the Strata store: the row an update of one field writes is the row a whole update writes, byte for byte; the
    /// object and the row cache hold it as a record at the new version, nothing decoded, and read every value from it.
    @Test func theStrataStoreRewritesTheChangedFieldAloneAndTheObjectSettlesOntoTheRow() throws {
        let stack = try TestStack(.strata, model: try RecordRowTests.model())
        let store = try #require(stack.store as? StrataStore)
        let (id, owners) = try Self.seed(stack)
        let context = stack.context()
        let kept = context.object(with: id)
        try kept.setValue(Int64(5), forKey: "i64")
        let writes = store.rowWrites
        try context.save()
        #expect(store.rowWrites == writes + 1)

        let entity = kept.entity
        let table = try #require(store.engine.snapshot().table(named: "entity.Kept"))
        let bytes = try #require(try store.engine.row(RowID(id.rowID!), in: table))
        var expected = RecordRowTests.values
        expected[2] = .integer(5)
        let owner = try #require(try Self.saved(id, in: stack).owner)
        #expect(owner == "Ada")
        let ownerReference = StoredReference(entity: owners[0].entity, rowID: try #require(owners[0].rowID))
        let whole = RowRecord.encode(
            entityID: entity.entityID, rowVersion: 2,
            fields: try RowCoder(entity: entity).fields(for: expected, references: [ownerReference]))
        #expect(bytes == whole)

        let state = try #require(kept.state)
        let record = try #require(state.record)
        #expect(record.isRecord && record.version == 2 && record.record == whole)
        #expect(state.undecoded.count == entity.persistentAttributes.count)
        #expect(state.committed == nil && state.committedReferences == nil)
        #expect(try kept.value(forKey: "i64") as? Int64 == 5)
        #expect(try kept.value(forKey: "i16") as? Int16 == -32768)
        let cached = try #require(
            stack.coordinator.rowCache.row(for: RowCache.Key(id), maximumAge: nil, retaining: false))
        #expect(cached.isRecord && cached == record)
    }

    /// An object whose row keeps a value in a blob is written whole, as before: the blob stays and reads back.
    @Test(arguments: StoreKind.allCases)
    func anUpdateOfAnObjectWithABlobKeepsTheBlob(_ kind: StoreKind) throws {
        let stack = try TestStack(
            kind, model: try RecordRowTests.model(), configuration: testStoreConfiguration(blobThreshold: 64))
        let (id, _) = try Self.seed(stack)
        let data = Data((0..<500).map { UInt8($0 % 251) })
        let writer = stack.context()
        try writer.object(with: id).setValue(data, forKey: "data")
        try writer.save()

        let context = stack.context()
        let kept = context.object(with: id)
        try kept.setValue(Int64(6), forKey: "i64")
        try context.save()
        let reader = stack.context()
        #expect(try reader.object(with: id).value(forKey: "data") as? Data == data)
        #expect(try reader.object(with: id).value(forKey: "i64") as? Int64 == 6)
        #expect(try kept.value(forKey: "data") as? Data == data)
    }

    /// Optimistic locking holds: an update of changed fields whose row moved on conflicts, and writes nothing.
    @Test(arguments: StoreKind.allCases)
    func anUpdateOfChangedFieldsOfARowThatMovedOnConflicts(_ kind: StoreKind) throws {
        let stack = try TestStack(kind, model: try RecordRowTests.model())
        let (id, _) = try Self.seed(stack)
        let first = stack.context()
        let second = stack.context()
        let mine = first.object(with: id)
        let theirs = second.object(with: id)
        try mine.setValue(Int64(1), forKey: "i64")
        try theirs.setValue(Int64(2), forKey: "i64")
        try theirs.setValue("theirs", forKey: "string")
        try second.save()
        #expect(throws: ObjectGraphError.self) { try first.save() }
        var expected = RecordRowTests.values
        expected[2] = .integer(2)
        expected[6] = .string("theirs")
        #expect(try Self.saved(id, in: stack).values == expected)
        // Resolved with the object's changes on top of the store's row: the store's string stays.
        first.mergePolicy = .mergeByPropertyObjectTrump
        try first.save()
        expected[2] = .integer(1)
        #expect(try Self.saved(id, in: stack).values == expected)
        #expect(try mine.value(forKey: "string") as? String == "theirs")
    }

    /// An update made from a record reads whole: its values are the record's where nothing changed them, its to-ones
    /// the record's; setting either makes it a whole update with the same values.
    @Test func anUpdateOfChangedFieldsReadsAsAWholeUpdate() throws {
        let model = try RecordRowTests.model()
        let entity = try #require(model.entity(named: "Kept"))
        let owner = try #require(model.entity(named: "SpecialOwner"))
        var fields = try RowCoder(entity: entity).fields(
            for: RecordRowTests.values, references: [StoredReference(entity: owner, rowID: 5)])
        fields[9] = .null
        let bytes = RowRecord.encode(entityID: entity.entityID, rowVersion: 4, fields: fields)
        let record = StoredRow(entity: entity, version: 4, checkedRecord: bytes, referencesBlobs: false)
        var slots = [AttributeValue?](repeating: nil, count: RecordRowTests.values.count)
        slots[1] = .integer(9)
        var update = StoreChanges.Update(
            entity: entity, rowID: 3, changed: .init(record: record, values: [1], references: false),
            valueSlots: slots, references: [], changedKeys: ["i32"])
        var expected = RecordRowTests.values
        expected[1] = .integer(9)
        #expect(update.expectedVersion == 4)
        #expect(update.values == expected)
        #expect(update.references == [.stored(StoredReference(entity: owner, rowID: 5))])
        #expect(update.writtenValue(atStorageIndex: 1) == .integer(9))
        #expect(update.writtenValue(atStorageIndex: 0) == nil)
        update.values[0] = .integer(1)
        expected[0] = .integer(1)
        #expect(update.changedFields == nil)
        #expect(update.values == expected)
        #expect(update.references == [.stored(StoredReference(entity: owner, rowID: 5))])
        #expect(update.writtenValue(atStorageIndex: 6) == expected[6])
    }
}
