/// The class ``EntityClassRegistry`` resolved for one entity, with the registry's generation at the time: valid
/// until another class is registered.
final class EntityClassBinding: Sendable {
    /// Read without a lock for every fault made; bound once per entity and registry generation (``ReadMostly``).
    private let slot = ReadMostly<(generation: Int, type: ManagedObject.Type)?>(nil)

    /// The class bound at `generation`, nil when none is (or it was bound at another generation).
    func type(at generation: Int) -> ManagedObject.Type? {
        slot.read { slot in slot.flatMap { $0.generation == generation ? $0.type : nil } }
    }

    /// How many times a class was bound (each keeps a copy).
    var bindingCount: Int { slot.publishedCount - 1 }

    /// Binds `type`, resolved at `generation`.
    func bind(_ type: ManagedObject.Type, at generation: Int) {
        slot.update { $0 = (generation, type) }
    }
}
