import Testing

@testable import Strata

/// A class registered for this suite's entity only.
private final class RegistryProbe: ManagedObject {}

/// The classes of entities' objects, resolved once per entity and again after a registration.
@Suite struct EntityClassRegistryTests {
    @Test func anEntityResolvedBeforeItsClassIsRegisteredGetsTheClassAfterwards() throws {
        let model = try ManagedObjectModel(entities: [
            Entity("RegistryProbeEntity", className: "RegistryProbeClass") { Attribute("name", .string) }
        ])
        let entity = try #require(model.entity(named: "RegistryProbeEntity"))
        #expect(EntityClassRegistry.type(for: entity) == ManagedObject.self)
        #expect(EntityClassRegistry.type(for: entity) == ManagedObject.self)  // from the binding
        RegistryProbe.register(forEntityName: "RegistryProbeClass")
        #expect(EntityClassRegistry.type(for: entity) == RegistryProbe.self)
        // A registration for another name does not change what the entity resolves to.
        RegistryProbe.register(forEntityName: "RegistryProbeOther")
        #expect(EntityClassRegistry.type(for: entity) == RegistryProbe.self)
    }
}
