import StrataLock

/// The class ``EntityClassRegistry`` resolved for one entity, with the registry's generation at the time: valid
/// until a class is registered again.
final class EntityClassBinding: Sendable {
    private let slot = Lock<(generation: Int, type: ManagedObject.Type)?>(nil)

    /// The class bound at `generation`, nil when none is (or it was bound at another generation).
    func type(at generation: Int) -> ManagedObject.Type? {
        slot.withLock { slot in slot.flatMap { $0.generation == generation ? $0.type : nil } }
    }

    /// Binds `type`, resolved at `generation`.
    func bind(_ type: ManagedObject.Type, at generation: Int) {
        slot.withLock { $0 = (generation, type) }
    }
}
