import Foundation
import Strata
import Testing

/// Key-value coding on plain `ManagedObject`s (no subclass), primitive access and observation:
/// COREDATA.md §1.2.
@Suite struct KeyValueCodingTests {
    private func thing(_ context: ManagedObjectContext, _ stack: TestStack) -> ManagedObject {
        ManagedObject(entity: stack.entity("GraphThing"), insertInto: context)
    }

    @Test(arguments: StoreKind.allCases)
    func plainManagedObjectsReadAndWriteThroughKeyValueCoding(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.context()
        let object = thing(context, stack)
        #expect(type(of: object) == ManagedObject.self)
        #expect(try object.value(forKey: "count") as? Int64 == 0)  // the default
        #expect(try object.value(forKey: "name") == nil)
        try object.setValue("widget", forKey: "name")
        try object.setValue(7, forKey: "count")
        try object.setValue(Int16(-3), forKey: "small")
        #expect(try object.value(forKey: "name") as? String == "widget")
        #expect(try object.value(forKeyPath: "name") as? String == "widget")
        #expect(try object.value(forKey: "count") as? Int64 == 7)
        try context.save()

        // Fetched elsewhere, the row's objects are plain ManagedObjects too.
        let other = stack.context()
        let request = FetchRequest<ManagedObject>(entityName: "GraphThing")
        let fetched = try other.fetch(request)
        #expect(fetched.count == 1)
        #expect(type(of: fetched[0]) == ManagedObject.self)
        #expect(try fetched[0].value(forKey: "name") as? String == "widget")
        #expect(try fetched[0].value(forKey: "count") as? Int64 == 7)
        #expect(try fetched[0].value(forKey: "small") as? Int64 == -3)
        try fetched[0].setValue(nil, forKey: "name")
        #expect(fetched[0].isUpdated)
        try other.save()
        #expect(try stack.storedValues("GraphThing", "name") == [nil])
    }

    @Test(arguments: StoreKind.allCases)
    func unknownKeyThrowsUnknownKey(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.context()
        let object = thing(context, stack)
        func isUnknownKey(_ error: ObjectGraphError?, _ key: String) -> Bool {
            if case .unknownKey(let entity, let name) = error { return entity == "GraphThing" && name == key }
            return false
        }
        #expect(isUnknownKey(objectGraphError { _ = try object.value(forKey: "colour") }, "colour"))
        #expect(isUnknownKey(objectGraphError { try object.setValue(1, forKey: "colour") }, "colour"))
        #expect(isUnknownKey(objectGraphError { _ = try object.primitiveValue(forKey: "colour") }, "colour"))
        #expect(isUnknownKey(objectGraphError { try object.setPrimitiveValue(1, forKey: "colour") }, "colour"))
        #expect(isUnknownKey(objectGraphError { _ = try object.observe("colour") { _ in } }, "colour"))
        #expect(isUnknownKey(objectGraphError { _ = try object.value(forKeyPath: "name.count") }, "name.count"))
        // Only the default applied at insert (an inserted object's defaults count as changes, as in Core Data).
        #expect(Set(object.changedValues().keys) == ["count"])
    }

    @Test(arguments: StoreKind.allCases)
    func valueOfTheWrongTypeThrowsWrongValueTypeAndChangesNothing(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        _ = try seedThing(stack)
        let context = stack.context()
        let object = try context.fetch(FetchRequest<ManagedObject>(entityName: "GraphThing"))[0]
        func isWrongType(_ error: ObjectGraphError?, _ key: String, _ type: AttributeType) -> Bool {
            if case .wrongValueType(let entity, let name, let expected, _) = error {
                return entity == "GraphThing" && name == key && expected == type
            }
            return false
        }
        #expect(isWrongType(objectGraphError { try object.setValue("seven", forKey: "count") }, "count", .integer32))
        #expect(isWrongType(objectGraphError { try object.setValue(3.5, forKey: "name") }, "name", .string))
        // Out of the attribute's integer width.
        #expect(isWrongType(objectGraphError { try object.setValue(70_000, forKey: "small") }, "small", .integer16))
        #expect(
            isWrongType(objectGraphError { try object.setValue(Int64(1) << 40, forKey: "count") }, "count", .integer32))
        #expect(
            isWrongType(
                objectGraphError { try object.setValue(AttributeValue.string("x"), forKey: "count") }, "count",
                .integer32))
        #expect(!object.hasChanges)
        #expect(!context.hasChanges)
        #expect(try object.value(forKey: "count") as? Int64 == 5)
    }

    @Test(arguments: StoreKind.allCases)
    func primitiveValueDoesNotRecordChanges(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedThing(stack)
        let context = stack.context()
        let object = context.object(with: id)
        #expect(object.isFault)
        #expect(try object.primitiveValue(forKey: "name") as? String == "seed")  // fires the fault
        #expect(!object.isFault)
        try object.setPrimitiveValue("quiet", forKey: "name")
        #expect(try object.value(forKey: "name") as? String == "quiet")
        #expect(!object.hasChanges)
        #expect(!object.isUpdated)
        #expect(object.changedValues().isEmpty)
        #expect(!context.hasChanges)
        #expect(context.updatedObjects.isEmpty)
        // Wrong types are still refused.
        #expect(objectGraphError { try object.setPrimitiveValue(1, forKey: "name") } != nil)
    }

    @Test(arguments: StoreKind.allCases)
    func observersAreCalledOnEveryChangeUntilRemoved(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.context()
        let object = thing(context, stack)
        var seen: [String?] = []
        let token = try object.observe("name") { changed in
            seen.append((try? changed.value(forKey: "name")) as? String)
        }
        var countChanges = 0
        try object.observe("count") { _ in countChanges += 1 }
        try object.setValue("one", forKey: "name")
        try object.setValue("two", forKey: "name")
        try object.setValue(nil, forKey: "name")
        #expect(seen == ["one", "two", nil])
        #expect(countChanges == 0)
        try object.setValue(3, forKey: "count")
        #expect(countChanges == 1)

        object.removeObserver(token)
        try object.setValue("three", forKey: "name")
        #expect(seen.count == 3)
        // Primitive writes do not notify.
        try object.setPrimitiveValue(4, forKey: "count")
        #expect(countChanges == 1)
    }

    @Test(arguments: StoreKind.allCases)
    func observersOfATypedPropertyAreCalled(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.context()
        let grace = GraphEmployee(context: context)
        var salaries: [Int64] = []
        try grace.observe("salary") { salaries.append(($0 as! GraphEmployee).salary) }
        grace.salary = 10
        grace.salary = 20
        #expect(salaries == [10, 20])
    }

    /// `observe(_:_:)` is documented as calling the handler "after every change of `key` (through setValue,
    /// typed properties, refresh or merge)". A refresh with merge that takes another context's new value
    /// for the key changes it.
    @Test(arguments: StoreKind.allCases)
    func observersAreCalledWhenARefreshMergesAnotherContextsChange(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let context = stack.context()
        let ada = try employee(id, in: context)
        ada.firstName = "Augusta"  // a local change: refresh goes through the merge path
        var salaries: [Int64] = []
        try ada.observe("salary") { salaries.append(($0 as! GraphEmployee).salary) }

        let other = stack.context()
        try employee(id, in: other).salary = 300
        try other.save()

        try context.refresh(ada, mergeChanges: true)
        #expect(ada.salary == 300)
        #expect(salaries.last == 300, "the salary observer was not told that the refresh changed salary")
    }

    @Test(arguments: StoreKind.allCases)
    func typedAndKeyValueAccessAgree(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.context()
        let grace = GraphEmployee(context: context)
        try grace.setValue("Grace", forKey: "firstName")
        #expect(grace.firstName == "Grace")
        grace.salary = 12
        #expect(try grace.value(forKey: "salary") as? Int64 == 12)
        grace.photo = Data([1, 2, 3])
        #expect(try grace.value(forKey: "photo") as? Data == Data([1, 2, 3]))
        try grace.setValue([UInt8]([4, 5]), forKey: "photo")
        #expect(grace.photo == Data([4, 5]))
    }

    @Test(arguments: StoreKind.allCases)
    func transformableValueRoundTripsThroughKeyValueCoding(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let address = GraphAddress(street: "1 Infinite Loop", city: "Cupertino", zip: 95014)
        let id = try seedThing(stack, address: address)
        let context = stack.context()
        let object = try context.existingObject(with: id)
        #expect(try object.value(forKey: "address") as? GraphAddress == address)
    }

    /// Writing a transformable attribute's saved value back is no persistent change: the value read from
    /// the store and the value set through key-value coding must compare equal.
    @Test(arguments: StoreKind.allCases)
    func writingATransformablesSavedValueBackIsNoPersistentChange(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let address = GraphAddress(street: "Main St", city: "Springfield", zip: 12345)
        let id = try seedThing(stack, address: address)
        let context = stack.context()
        let object = try context.existingObject(with: id)
        try object.setValue(address, forKey: "address")
        #expect(object.hasChanges)
        #expect(!object.hasPersistentChangedValues, "an equal transformable value counts as a persistent change")
        try object.setValue(GraphAddress(street: "Elm St", city: "Springfield", zip: 12345), forKey: "address")
        #expect(object.hasPersistentChangedValues)
    }

    @Test(arguments: StoreKind.allCases)
    func transientAttributeOfAPlainObjectIsKeptInMemoryOnly(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.context()
        let object = thing(context, stack)
        try object.setValue("scratch pad", forKey: "scratch")
        try object.setValue("kept", forKey: "name")
        try context.save()
        #expect(try object.value(forKey: "scratch") as? String == "scratch pad")
        let elsewhere = try stack.context().existingObject(with: object.objectID)
        #expect(try elsewhere.value(forKey: "scratch") == nil)
        #expect(try elsewhere.value(forKey: "name") as? String == "kept")
        #expect(stack.entity("GraphThing").persistentAttributes.map(\.name).contains("scratch") == false)
    }

    // MARK: - Helpers

    @inline(never)
    private func seedThing(_ stack: TestStack, address: GraphAddress? = nil) throws -> ManagedObjectID {
        let context = stack.context()
        let object = thing(context, stack)
        try object.setValue("seed", forKey: "name")
        try object.setValue(5, forKey: "count")
        if let address { try object.setValue(address, forKey: "address") }
        try context.save()
        return object.objectID
    }
}
