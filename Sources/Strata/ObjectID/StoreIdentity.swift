import Foundation
import StrataLock

/// A store's UUID, one instance per UUID in the process, so that a ``ManagedObjectID`` names its store with a
/// pointer: eight bytes in every ID instead of sixteen, and IDs compare stores by identity.
///
/// Interned identities live as long as the process (a few dozen bytes per store ever named), which lets IDs hold
/// them without reference counting.
package final class StoreIdentity: Sendable {
    package let uuid: UUID
    /// Whether this is ``temporary``: what ``ManagedObjectID/isTemporaryID`` reads, several times a registry or row
    /// cache lookup. Comparing with ``temporary`` instead cost a call to the global's lazy initialization check
    /// each time.
    package let isTemporary: Bool

    private init(_ uuid: UUID, isTemporary: Bool = false) {
        self.uuid = uuid
        self.isTemporary = isTemporary
    }

    /// The identity of temporary IDs: no store. Never returned by ``interned(_:)``, even for the all-zero UUID.
    package static let temporary = StoreIdentity(
        UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)), isTemporary: true)

    /// A `Lock`, Strata's one lock, not a `Mutex`: ThreadSanitizer sees it taken and released (see `Lock`), and
    /// saves on several threads intern at once.
    private static let table = Lock<[UUID: StoreIdentity]>([:])

    /// The one identity of `uuid`.
    package static func interned(_ uuid: UUID) -> StoreIdentity {
        table.withLock { table in
            if let identity = table[uuid] { return identity }
            let identity = StoreIdentity(uuid)
            table[uuid] = identity
            return identity
        }
    }
}
