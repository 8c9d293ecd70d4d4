#if STRATA_TSAN_LOCKS
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
#else
import Synchronization
#endif

/// A mutual-exclusion lock that protects the value it holds: Strata's one lock, used wherever a
/// `Synchronization.Mutex` would be.
///
/// `Lock` has the shape of `Mutex` (a noncopyable value created with `init(_:)`, its state reached only
/// inside `withLock`) and in a normal build it is one. Under the `STRATA_TSAN_LOCKS` compile flag, which
/// `Scripts/tsan` sets for its ThreadSanitizer build, it is a `pthread_mutex_t` instead.
///
/// Why: on Linux, `Mutex.withLock` and the lock's uncontended fast path are inlined into our code and
/// instrumented, but a contended `Mutex` is handed over in the uninstrumented runtime (a futex with priority
/// inheritance, where the kernel passes the lock to the waiter), so ThreadSanitizer never sees that acquire.
/// Every such handover then shows as a data race between two critical sections: hundreds of false reports
/// per run of the concurrency suites, burying any real one. ThreadSanitizer intercepts `pthread_mutex_lock`
/// and `pthread_mutex_unlock`, so the pthread variant gives it every happens-before edge the lock makes.
/// Normal builds keep `Mutex` (inline storage, no allocation, no `deinit`).
///
/// For example:
///
/// ```swift
/// let counts = Lock<[String: Int]>([:])
/// counts.withLock { $0["saves", default: 0] += 1 }
/// let saves = counts.withLock { $0["saves", default: 0] }
/// ```
///
/// Like `Mutex`, a `Lock` is not reentrant: calling `withLock` again on the same lock from inside its
/// closure deadlocks (or traps).
///
/// ## Topics
///
/// ### Creating a Lock
///
/// - ``init(_:)``
///
/// ### Reaching the Value
///
/// - ``withLock(_:)``
/// - ``withLockIfAvailable(_:)``
public struct Lock<Value: ~Copyable>: ~Copyable {
    #if STRATA_TSAN_LOCKS
    @usableFromInline let storage: PthreadLockStorage<Value>
    #else
    @usableFromInline let mutex: Mutex<Value>
    #endif

    /// Creates a lock holding `initialValue`.
    ///
    /// - Parameter initialValue: The value the lock protects from now on.
    @inlinable
    public init(_ initialValue: consuming sending Value) {
        #if STRATA_TSAN_LOCKS
        storage = PthreadLockStorage(initialValue)
        #else
        mutex = Mutex(initialValue)
        #endif
    }

    /// Takes the lock, runs `body` with the protected value, and releases the lock when `body` returns or
    /// throws.
    ///
    /// Keep `body` short and let no reference to the value escape it. It must not call `withLock` on the
    /// same lock.
    ///
    /// - Parameter body: A closure given exclusive access to the value.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    // Public, not `package`: this toolchain does not serialize the body of a `package` function, `@inlinable`
    // or `@_transparent`, so callers in other modules called an unspecialized `withLock` that instantiated
    // generic metadata on every call (10% of W3.graph's samples in `_swift_getGenericMetadata`).
    @inlinable
    public borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        #if STRATA_TSAN_LOCKS
        return try storage.withLock(body)
        #else
        return try mutex.withLock(body)
        #endif
    }

    /// Runs `body` with the protected value if the lock can be taken at once, and returns `nil` without
    /// running it if another thread holds the lock.
    ///
    /// - Parameter body: A closure given exclusive access to the value.
    /// - Returns: What `body` returns, or `nil` when the lock was held.
    /// - Throws: What `body` throws.
    @inlinable
    public borrowing func withLockIfAvailable<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result? {
        #if STRATA_TSAN_LOCKS
        return try storage.withLockIfAvailable(body)
        #else
        return try mutex.withLockIfAvailable(body)
        #endif
    }
}

// Safety: as for `Mutex`, the value is reached only inside `withLock`, under the lock, and it enters and
// leaves as `sending`, so no reference to it is shared outside the lock.
extension Lock: @unchecked Sendable where Value: ~Copyable {}

#if STRATA_TSAN_LOCKS
/// The storage of a ``Lock`` in ThreadSanitizer builds: a heap-allocated `pthread_mutex_t` (its address
/// must never change while it is in use) next to the value it protects.
///
/// Safety of `@unchecked Sendable`: the value enters as `sending` and is reached only under the mutex, as in
/// `Mutex`. (Being `Sendable` is also what lets the region checker accept handing `value.pointee` to `body`
/// as `inout sending`: it cannot see the mutex, as it cannot see inside `Mutex`.)
@usableFromInline
final class PthreadLockStorage<Value: ~Copyable>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let value: UnsafeMutablePointer<Value>

    @usableFromInline
    init(_ initialValue: consuming Value) {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed with \(status)")
        value = .allocate(capacity: 1)
        value.initialize(to: initialValue)
    }

    deinit {
        let status = pthread_mutex_destroy(mutex)
        assert(status == 0, "pthread_mutex_destroy failed with \(status) (is the lock still held?)")
        mutex.deinitialize(count: 1)
        mutex.deallocate()
        value.deinitialize(count: 1)
        value.deallocate()
    }

    @usableFromInline
    func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        let status = pthread_mutex_lock(mutex)
        precondition(status == 0, "pthread_mutex_lock failed with \(status)")
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }

    @usableFromInline
    func withLockIfAvailable<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result? {
        guard pthread_mutex_trylock(mutex) == 0 else { return nil }
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }
}
#endif
