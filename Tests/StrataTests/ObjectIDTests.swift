import Foundation
import Strata
import Testing

/// Object IDs and their URI form: COREDATA.md §1.7 (ObjectID) and §5 #7.
@Suite struct ObjectIDTests {
    @Test(arguments: StoreKind.allCases)
    func permanentIDRoundTripsThroughItsURI(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let uri = id.uriRepresentation()
        #expect(uri.scheme == "x-strata")
        #expect(uri.absoluteString == "x-strata://\(stack.store.identifier.uuidString)/GraphEmployee/p\(id.rowID!)")
        let again = try stack.coordinator.managedObjectID(forURIRepresentation: uri)
        #expect(again == id)
        #expect(again.hashValue == id.hashValue)
        #expect(Set([id, again]).count == 1)
        #expect(again.entity === id.entity)
        #expect(!again.isTemporaryID)
        // The ID from the URI finds the registered object.
        let context = stack.context()
        let ada = try employee(id, in: context)
        #expect(context.object(with: again) === ada)
        #expect(context.registeredObject(for: again) === ada)
    }

    @Test(arguments: StoreKind.allCases)
    func temporaryURIDiffersFromThePermanentOneAndDoesNotResolve(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.context()
        let grace = GraphEmployee(context: context)
        grace.firstName = "Grace"
        let temporaryURI = grace.objectID.uriRepresentation()
        #expect(temporaryURI.absoluteString.hasPrefix("x-strata:///GraphEmployee/t"))
        #expect(grace.objectID.uriRepresentation() == temporaryURI)  // stable while temporary
        let error = objectGraphError { _ = try stack.coordinator.managedObjectID(forURIRepresentation: temporaryURI) }
        #expect(error?.isInvalidURI == true)

        try context.save()
        let permanentURI = grace.objectID.uriRepresentation()
        #expect(permanentURI != temporaryURI)
        #expect(try stack.coordinator.managedObjectID(forURIRepresentation: permanentURI) == grace.objectID)
    }

    @Test(arguments: StoreKind.allCases)
    func temporaryIDsAreDistinctPerObject(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.context()
        let a = GraphEmployee(context: context)
        let b = GraphEmployee(context: context)
        #expect(a.objectID != b.objectID)
        #expect(a.objectID.uriRepresentation() != b.objectID.uriRepresentation())
        #expect(a.objectID == a.objectID)
    }

    @Test(arguments: StoreKind.allCases)
    func invalidURIsThrowInvalidURI(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let store = stack.store.identifier.uuidString
        let candidates = [
            "https://\(store)/GraphEmployee/p\(id.rowID!)",  // another scheme
            "x-coredata://\(store)/GraphEmployee/p\(id.rowID!)",  // Core Data's scheme
            "x-strata://\(UUID().uuidString)/GraphEmployee/p1",  // a store the coordinator does not have
            "x-strata://not-a-uuid/GraphEmployee/p1",
            "x-strata://\(store)/NoSuchEntity/p1",
            "x-strata://\(store)/GraphEmployee/q1",
            "x-strata://\(store)/GraphEmployee/p",
            "x-strata://\(store)/GraphEmployee/p-1",
            "x-strata://\(store)/GraphEmployee/p1x",
            "x-strata://\(store)/GraphEmployee",
            "x-strata://\(store)/GraphEmployee/p1/extra",
            "x-strata:///GraphEmployee/p1",
        ]
        for candidate in candidates {
            let uri = try #require(URL(string: candidate))
            let error = objectGraphError { _ = try stack.coordinator.managedObjectID(forURIRepresentation: uri) }
            #expect(error?.isInvalidURI == true, "\(candidate)")
        }
    }

    @Test func uriOfAStoreOnAnotherCoordinatorDoesNotResolve() throws {
        let first = try TestStack(.inMemory)
        let second = try TestStack(.inMemory)
        let id = try seedAda(first)
        let error = objectGraphError {
            _ = try second.coordinator.managedObjectID(forURIRepresentation: id.uriRepresentation())
        }
        #expect(error?.isInvalidURI == true)
    }

    @Test(arguments: StoreKind.allCases)
    func temporaryIDOfAnotherContextsInsertIsInaccessible(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let inserting = stack.context()
        let grace = GraphEmployee(context: inserting)
        grace.firstName = "Grace"
        let other = stack.context()
        #expect(other.registeredObject(for: grace.objectID) == nil)
        let error = objectGraphError { _ = try other.existingObject(with: grace.objectID) }
        #expect(error?.isObjectInaccessible == true)
        #expect(other.registeredObject(for: grace.objectID) == nil)
    }

    @Test(arguments: StoreKind.allCases)
    func idsOfTheSameRowAreEqualAcrossContexts(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let a = try employee(id, in: stack.context())
        let b = try fetchEmployees(stack.context())[0]
        #expect(a.objectID == b.objectID)
        #expect(a.objectID.hashValue == b.objectID.hashValue)
        #expect(a.objectID.description == id.uriRepresentation().absoluteString)
    }

    /// An object hashes as its identity, whether a set hashes it in one step or a `Hasher` is fed it: the same
    /// value both ways, and a set of objects holds each instance once and finds it.
    @Test(arguments: StoreKind.allCases)
    func anObjectHashesAsItsIdentityInOneStepOrThroughAHasher(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.context()
        let objects = (0..<200).map { _ in GraphEmployee(context: context) }
        for object in objects {
            #expect(object.hashValue == ObjectIdentifier(object).hashValue)
            var fed = Hasher()
            fed.combine(object)
            var identity = Hasher()
            identity.combine(ObjectIdentifier(object))
            #expect(fed.finalize() == identity.finalize())
        }
        let set = Set(objects + objects)
        #expect(set.count == objects.count)
        #expect(objects.allSatisfy { set.contains($0) })
        #expect(!set.contains(GraphEmployee(context: context)))
        #expect(Set<ManagedObject>(objects).count == objects.count)
    }

    /// IDs are values: a copy taken before the save keeps naming the temporary ID, and the object's ID changes alone.
    @Test(arguments: StoreKind.allCases)
    func anIDTakenBeforeTheSaveStaysTemporary(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.context()
        let grace = GraphEmployee(context: context)
        grace.firstName = "Grace"
        let temporary = grace.objectID
        var ids: Set = [temporary]
        try context.save()
        #expect(temporary.isTemporaryID && temporary.rowID == nil && temporary.entity === grace.entity)
        #expect(!grace.objectID.isTemporaryID && grace.objectID != temporary)
        #expect(ids.contains(temporary) && !ids.contains(grace.objectID))
        ids.insert(grace.objectID)
        #expect(ids.count == 2)
        #expect(context.object(with: grace.objectID) === grace)
        #expect(context.registeredObject(for: temporary) == nil)
    }

    /// A row is one object whichever entity of its hierarchy an ID names: equal IDs, one hash, one registered object.
    @Test(arguments: StoreKind.allCases)
    func idsOfOneRowThroughItsRootAndItsSubentityAreEqual(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.context()
        let manager = GraphManager(context: context)
        manager.name = "Boss"
        try context.save()
        let id = manager.objectID
        let root = try #require(stack.coordinator.model.entity(named: "GraphPerson"))
        let throughRoot = ManagedObjectID(entity: root, storeIdentifier: id.storeIdentifier!, rowID: id.rowID!)
        #expect(throughRoot == id && throughRoot.hashValue == id.hashValue)
        #expect(Set([id, throughRoot]).count == 1)
        #expect(context.object(with: throughRoot) === manager)
        let other = ManagedObjectID(entity: root, storeIdentifier: id.storeIdentifier!, rowID: id.rowID! + 1)
        #expect(other != id)
    }

    @Test(arguments: StoreKind.allCases)
    func subentityIDsNameTheConcreteEntity(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.context()
        let manager = GraphManager(context: context)
        manager.name = "Boss"
        try context.save()
        #expect(manager.objectID.entity.name == "GraphManager")
        #expect(manager.objectID.uriRepresentation().path.hasPrefix("/GraphManager/p"))
        let again = try stack.coordinator.managedObjectID(forURIRepresentation: manager.objectID.uriRepresentation())
        let fetched = try #require(try stack.context().existingObject(with: again) as? GraphManager)
        #expect(fetched.name == "Boss")
    }
}
