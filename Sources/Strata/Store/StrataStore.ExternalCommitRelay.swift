import StrataLock
import StrataStorage

extension StrataStore {
    /// Hands the engine's reports of other processes' commits (``StrataStore/takeIn(_:)``) to a store while the store
    /// is alive, without a weak reference to it.
    ///
    /// The engine keeps its handlers as long as it is open, which may be longer than the store (other coordinators'
    /// stores share it), so the handler must not keep the store alive. A `[weak self]` closure did that, but a weak
    /// reference gives its object a side table, and every retain and release of the store then took the runtime's slow
    /// path (75 and 95 instructions instead of about 20): the coordinator retains the store on every fault it fires
    /// from it (W3.graph). The relay holds the store unretained instead, and the store's `deinit` detaches it: a report
    /// handed on holds the relay's lock, so a store whose last reference goes meanwhile waits in its `deinit` until the
    /// report is taken in, and a report that comes after finds no store.
    ///
    /// What runs under the lock (``StrataStore/takeIn(_:)``) must never read through the engine (which may report
    /// again, and this lock is not reentrant) nor let go of the store.
    final class ExternalCommitRelay: Sendable {
        /// The store, unretained (see above); nil until it is attached and once its `deinit` began.
        private let store = Lock<Unmanaged<StrataStore>?>(nil)

        /// Attaches the store, at the end of its initializer (which makes the relay before the store is whole).
        func attach(_ store: StrataStore) { self.store.withLock { $0 = Unmanaged.passUnretained(store) } }

        /// Hands `commits` to the store, if it is still alive.
        func relay(_ commits: ExternalCommits) {
            store.withLock { store in
                // Lent, not retained: the store cannot finish its deinit while the lock is held.
                store?._withUnsafeGuaranteedRef { $0.takeIn(commits) }
            }
        }

        /// Called from the store's `deinit`: reports after this find no store; one being handed on is waited for.
        func detach() { store.withLock { $0 = nil } }
    }
}
