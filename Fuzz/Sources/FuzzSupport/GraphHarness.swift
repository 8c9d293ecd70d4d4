import Foundation
import Strata
import StrataStorage

/// The object-graph part of FuzzEngineOperations: saves and fetches through a `ManagedObjectContext` on a
/// `StrataStore`, checked against a name → value map.
///
/// `StrataStore` opens its engine with `Store.open(at:configuration:)` and the default `PosixFileSystem`: the
/// object graph cannot be given a `FileSystem`, so this part runs on a real temporary directory (under
/// /dev/shm when it exists), created on the first `graph` step of an input and removed at its end, and at
/// most ``maximumSteps`` graph steps run per input.
struct GraphHarness {
    static let maximumSteps = 3
    static let model: ManagedObjectModel = {
        do {
            return try ManagedObjectModel(entities: [
                Entity("Item") {
                    Attribute("name", .string, optional: false)
                    Attribute("value", .integer64, default: .integer(0))
                    Attribute("photo", .binaryData).allowsExternalStorage()
                }
            ])
        } catch { fatalError("the fuzz object model does not build: \(error)") }
    }()
    static let entity = model.entity(named: "Item")!

    var directory: String?
    var coordinator: PersistentStoreCoordinator?
    var expected: [String: (value: Int64, photoLength: Int)] = [:]
    var steps = 0
    var nextName = 0

    var configuration: StrataStoreConfiguration {
        StrataStoreConfiguration(storage: StoreConfiguration(durability: .off, logger: quietLogger))
    }

    mutating func perform(_ input: inout FuzzInput, step: Int) {
        let kind = input.byte()
        let operand = input.byte()
        guard steps < Self.maximumSteps else { return }
        steps += 1
        do {
            if coordinator == nil {
                let directory = self.directory ?? ScratchDirectory.path("graph")
                self.directory = directory
                let coordinator = PersistentStoreCoordinator(model: Self.model)
                try coordinator.addPersistentStore(.strata(directory: directory, configuration: configuration))
                self.coordinator = coordinator
            }
            let context = ManagedObjectContext(coordinator: coordinator!)
            switch kind % 4 {
            case 0:  // insert one or two objects and save
                for _ in 0..<(Int(operand % 2) + 1) {
                    let name = "item\(nextName)"
                    nextName += 1
                    let value = Int64(operand) * 1_000 + Int64(step)
                    // Now and then a photo over the blob threshold (16 KiB): it goes to a blob segment.
                    let photoLength = operand & 0x40 != 0 ? 20_000 : Int(operand % 8) * 10
                    let object = ManagedObject(entity: Self.entity, insertInto: context)
                    try object.setValue(name, forKey: "name")
                    try object.setValue(value, forKey: "value")
                    try object.setValue(Data(repeating: operand, count: photoLength), forKey: "photo")
                    expected[name] = (value, photoLength)
                }
                try context.save()
            case 1:  // change one object's value and save
                let objects = try context.fetch(FetchRequest<ManagedObject>(entityName: "Item"))
                guard !objects.isEmpty else { break }
                let object = objects[Int(operand) % objects.count]
                let name = try object.value(forKey: "name") as! String
                let value = Int64(operand) - 100
                try object.setValue(value, forKey: "value")
                try context.save()
                expected[name]!.value = value
            case 2:  // delete one object and save
                let objects = try context.fetch(FetchRequest<ManagedObject>(entityName: "Item"))
                guard !objects.isEmpty else { break }
                let object = objects[Int(operand) % objects.count]
                let name = try object.value(forKey: "name") as! String
                context.delete(object)
                try context.save()
                expected[name] = nil
            default:  // close the store and open it again in a new coordinator
                for store in coordinator!.persistentStores { try coordinator!.removePersistentStore(store) }
                let coordinator = PersistentStoreCoordinator(model: Self.model)
                try coordinator.addPersistentStore(.strata(directory: directory!, configuration: configuration))
                self.coordinator = coordinator
            }
            try compare(step: step)
        } catch {
            fuzzFail("object graph step \(kind % 4) failed at step \(step): \(error)")
        }
    }

    /// Fetches every object in a new context and compares with ``expected``.
    func compare(step: Int) throws {
        let context = ManagedObjectContext(coordinator: coordinator!)
        var found: [String: (value: Int64, photoLength: Int)] = [:]
        for object in try context.fetch(FetchRequest<ManagedObject>(entityName: "Item")) {
            let name = try object.value(forKey: "name") as! String
            let value = try object.value(forKey: "value") as! Int64
            let photo = try object.value(forKey: "photo") as? Data
            fuzzCheck(found[name] == nil, "object \(name) fetched twice at step \(step)")
            found[name] = (value, photo?.count ?? 0)
        }
        fuzzCheck(
            found.keys.sorted() == expected.keys.sorted()
                && found.allSatisfy {
                    expected[$0.key]!.value == $0.value.value && expected[$0.key]!.photoLength == $0.value.photoLength
                },
            "object graph fetch differs from the model at step \(step): \(found) vs \(expected)")
    }

    /// Closes the store and removes its directory.
    mutating func tearDown() {
        if let coordinator {
            for store in coordinator.persistentStores {
                do { try coordinator.removePersistentStore(store) } catch {
                    fuzzFail("closing the object graph store: \(error)")
                }
            }
        }
        coordinator = nil
        if let directory { ScratchDirectory.remove(directory) }
        directory = nil
    }
}
