import Foundation
import StrataFormat
import StrataStorage
import Testing

@testable import Strata

/// A saved insert settles onto the row its store wrote: in the Strata store the object takes the row record as it is
/// written, in place of its values, and the row cache holds the same bytes; its values read back from the row, as a
/// fetched object's do. Stores without records (in-memory, PostgreSQL), entities not kept as records and rows that
/// keep a value in a blob settle onto the values as before. What every store saves, and what the objects read after,
/// is the same.
@Suite struct SavedInsertRowTests {
    /// A `Kept` with every value of ``RecordRowTests/values`` (`data` nil), the transient set, owned by `owner`.
    static func insertKept(
        owner: ManagedObject?, in context: ManagedObjectContext, stack: TestStack
    ) throws -> ManagedObject {
        let kept = ManagedObject(entity: stack.entity("Kept"), insertInto: context)
        for (attribute, value) in zip(kept.entity.persistentAttributes, RecordRowTests.values) {
            try kept.setValue(value?.objectValue, forKey: attribute.name)
        }
        try kept.setValue("scratch value", forKey: "scratch")
        try kept.setValue(owner, forKey: "owner")
        return kept
    }

    /// Every persistent value of `object`, as key-value coding reads it.
    static func values(of object: ManagedObject) throws -> [AttributeValue?] {
        try object.entity.persistentAttributes.map { try object.attributeValue(forKey: $0.name) }
    }

    @Test(arguments: StoreKind.allCases)
    func aSavedInsertReadsBackItsValuesTransientsNilsAndToOnes(_ kind: StoreKind) throws {
        let stack = try TestStack(kind, model: try RecordRowTests.model())
        let context = stack.context()
        let owner = ManagedObject(entity: stack.entity("Owner"), insertInto: context)
        try owner.setValue("Ada", forKey: "name")
        let kept = try Self.insertKept(owner: owner, in: context, stack: stack)
        // Nothing set: every value nil (the defaults), no owner.
        let empty = ManagedObject(entity: stack.entity("Kept"), insertInto: context)
        try context.save()

        for object in [owner, kept, empty] {
            #expect(!object.hasChanges && !object.isInserted && !object.objectID.isTemporaryID)
            #expect(object.version == 1)
        }
        #expect(try Self.values(of: kept) == RecordRowTests.values)
        #expect(try kept.value(forKey: "scratch") as? String == "scratch value")
        #expect(try kept.value(forKey: "owner") as? ManagedObject === owner)
        #expect(try Self.values(of: empty).allSatisfy { $0 == nil })
        #expect(try empty.value(forKey: "owner") == nil)
        #expect(try owner.value(forKey: "name") as? String == "Ada")
        let committed = kept.committedValues(forKeys: ["i64", "string", "data", "owner"])
        #expect(committed["i64"] as? Int64 == Int64.min)
        #expect(committed["string"] as? String == "Zoë and a name longer than fifteen bytes")
        #expect(committed.keys.contains("data") && committed["data"]! == nil)
        #expect(committed["owner"] as? ManagedObject === owner)

        // A new context reads what the objects read.
        let reader = stack.context()
        let fetched = reader.object(with: kept.objectID)
        #expect(try Self.values(of: fetched) == RecordRowTests.values)
        #expect(try (fetched.value(forKey: "owner") as? ManagedObject)?.value(forKey: "name") as? String == "Ada")
        #expect(try Self.values(of: reader.object(with: empty.objectID)).allSatisfy { $0 == nil })

        // The saved objects change, roll back and refresh as any saved object does.
        try kept.setValue(Int64(9), forKey: "i64")
        #expect(kept.changedValues().keys.sorted() == ["i64"])
        context.rollback()
        #expect(try kept.value(forKey: "i64") as? Int64 == Int64.min)
        try kept.setValue(Int64(10), forKey: "i64")
        try kept.setValue(nil, forKey: "owner")
        try context.save()
        #expect(kept.version == 2)
        var expected = RecordRowTests.values
        expected[2] = .integer(10)
        let second = stack.context()
        #expect(try Self.values(of: second.object(with: kept.objectID)) == expected)
        try context.refresh(kept, mergeChanges: false)
        #expect(try Self.values(of: kept) == expected)
        #expect(try kept.value(forKey: "owner") == nil)
    }

    /// In the Strata store: the saved insert holds the row the store wrote, byte for byte what a fetch of it reads, as
    /// a record at version 1 with nothing decoded and no values buffer of its own; the row cache holds the same bytes.
    @Test func theStrataStoresSavedInsertHoldsItsWrittenRowAndTheRowCacheTheSameBytes() throws {
        let stack = try TestStack(.strata, model: try RecordRowTests.model())
        let store = try #require(stack.store as? StrataStore)
        let context = stack.context()
        let owner = ManagedObject(entity: stack.entity("Owner"), insertInto: context)
        try owner.setValue("Ada", forKey: "name")
        let kept = try Self.insertKept(owner: owner, in: context, stack: stack)
        try context.save()

        let entity = kept.entity
        let table = try #require(store.engine.snapshot().table(named: "entity.Kept"))
        let rowID = try #require(kept.objectID.rowID)
        let bytes = try #require(try store.engine.row(RowID(rowID), in: table))
        let read = try #require(try store.row(rowID, of: entity))
        #expect(read.isRecord && read.record == bytes)

        let state = try #require(kept.state)
        let record = try #require(state.record)
        #expect(record.isRecord && !record.referencesBlobs && record.version == 1 && record.record == bytes)
        #expect(record == read)
        #expect(state.undecoded == entity.persistentAttributeIndexes)
        #expect(state.committed == nil && state.committedReferences == nil)
        #expect(record.references == [StoredReference(entity: owner.entity, rowID: try #require(owner.objectID.rowID))])

        let cached = try #require(
            stack.coordinator.rowCache.row(for: RowCache.Key(kept.objectID), maximumAge: nil, retaining: false))
        #expect(cached.isRecord && cached == record)
        // The same buffer, not a copy.
        let cachedBytes = try #require(cached.record)
        let heldBytes = try #require(record.record)
        #expect(
            cachedBytes.withUnsafeBufferPointer { cachedBuffer in
                heldBytes.withUnsafeBufferPointer { $0.baseAddress == cachedBuffer.baseAddress }
            })

        // The owner (no transients) shares its entity's defaults: it made no values buffer of its own.
        let ownerState = try #require(owner.state)
        #expect(ownerState.record?.version == 1 && RecordRowTests.sharesDefaults(ownerState))
        #expect(try owner.value(forKey: "name") as? String == "Ada")
        #expect(try Self.values(of: kept) == RecordRowTests.values)
        #expect(try kept.value(forKey: "scratch") as? String == "scratch value")
        // One row-cache entry per saved registered object.
        #expect(stack.coordinator.rowCache.count == 2)
    }

    /// An entity not kept as records (a URI), and a row that keeps a value in a blob, settle onto their values: no
    /// record, every value read back.
    @Test(arguments: StoreKind.allCases)
    func insertsWithoutARecordSettleOntoTheirValues(_ kind: StoreKind) throws {
        let stack = try TestStack(
            kind, model: try RecordRowTests.model(), configuration: testStoreConfiguration(blobThreshold: 64))
        let context = stack.context()
        let parsed = ManagedObject(entity: stack.entity("Parsed"), insertInto: context)
        let link = URL(string: "https://example.org/a?b=c")!
        try parsed.setValue(link, forKey: "link")
        let kept = try Self.insertKept(owner: nil, in: context, stack: stack)
        let data = Data((0..<500).map { UInt8($0 % 251) })
        try kept.setValue(data, forKey: "data")
        try context.save()

        #expect(parsed.state?.record == nil && kept.state?.record == nil)
        #expect(try parsed.value(forKey: "link") as? URL == link)
        #expect(try kept.value(forKey: "data") as? Data == data)
        var expected = RecordRowTests.values
        expected[9] = .data(data)
        #expect(try Self.values(of: kept) == expected)
        let reader = stack.context()
        #expect(try Self.values(of: reader.object(with: kept.objectID)) == expected)
    }

    /// A store that throws after writing some inserts (the next one's value is too long for its index) writes
    /// nothing, and every inserted object keeps its values, unsaved: the ones that took their rows give them back.
    @Test func aSaveThatThrowsAfterSomeInsertsWereWrittenLeavesEveryObjectAsItWas() throws {
        let model = try ManagedObjectModel {
            Entity("Note") {
                Attribute("title", .string).indexed()
                Attribute("rank", .integer64)
                Attribute("draft", .string).transient()
            }
        }
        let stack = try TestStack(.strata, model: model)
        let context = stack.context()
        let notes = try (0..<3).map { index in
            let note = ManagedObject(entity: stack.entity("Note"), insertInto: context)
            try note.setValue("note \(index)", forKey: "title")
            try note.setValue(Int64(index), forKey: "rank")
            try note.setValue("draft \(index)", forKey: "draft")
            return note
        }
        try notes[2].setValue(String(repeating: "x", count: 5_000), forKey: "title")
        #expect(throws: ObjectGraphError.self) { try context.save() }
        #expect(try stack.storedRows("Note").isEmpty)
        for (index, note) in notes.enumerated() {
            #expect(note.isInserted && note.hasChanges && note.objectID.isTemporaryID)
            #expect(note.state?.record == nil)
            #expect(note.state?.undecoded.isEmpty == true)
            #expect(try note.value(forKey: "rank") as? Int64 == Int64(index))
            #expect(try note.value(forKey: "draft") as? String == "draft \(index)")
            if index < 2 { #expect(try note.value(forKey: "title") as? String == "note \(index)") }
        }

        try notes[2].setValue("note 2", forKey: "title")
        try context.save()
        #expect(try stack.storedRows("Note").count == 3)
        let reader = stack.context()
        for (index, note) in notes.enumerated() {
            #expect(note.state?.record?.version == 1)
            #expect(try note.value(forKey: "title") as? String == "note \(index)")
            #expect(try note.value(forKey: "draft") as? String == "draft \(index)")
            let fetched = reader.object(with: note.objectID)
            #expect(try fetched.value(forKey: "title") as? String == "note \(index)")
            #expect(try fetched.value(forKey: "rank") as? Int64 == Int64(index))
        }
    }
}
