#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a POSIX mutex: `withLock` gives one thread at a time
/// `inout` access to it.
///
/// It exists for ThreadSanitizer. On Linux `Synchronization.Mutex` is a bare
/// futex that TSan cannot see, so accesses ordered by it are reported as races
/// and real races hide among the false ones. TSan intercepts `pthread_mutex_t`
/// and knows what it orders.
///
/// The API follows `Mutex`: values go in and out as `sending`, so the lock is
/// `Sendable` whatever `Value` is. It is a reference: copies share one mutex
/// and one value. The mutex lives at a stable heap address (in the same
/// allocation as the value), is initialised once and destroyed with the
/// allocation. It is not recursive: calling `withLock` on the same lock from
/// inside its body deadlocks.
///
/// `@unchecked Sendable`: its one field, `storage`, holds the value and the mutex; the value
/// is read or written only inside `withLock`, with the mutex held, and goes in and out as `sending`.
public struct LockedValue<Value>: @unchecked Sendable {
    private let storage: LockStorage<Value>

    /// Creates a lock around `initialValue`.
    public init(_ initialValue: sending Value) {
        storage = LockStorage.make(initialValue)
    }

    /// Runs `body` with exclusive access to the value and returns what it returns.
    ///
    /// Blocks while another thread holds the lock. The lock is released however
    /// `body` exits; an error it throws is rethrown.
    public func withLock<Result, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        let mutex = storage.mutex
        let error = pthread_mutex_lock(mutex)
        precondition(error == 0, "pthread_mutex_lock failed with error \(error)")
        defer {
            let error = pthread_mutex_unlock(mutex)
            precondition(error == 0, "pthread_mutex_unlock failed with error \(error)")
        }
        return try body(&storage.value.pointee)
    }
}

/// The value (the header) and the `pthread_mutex_t` (the one element) in one allocation.
private final class LockStorage<Value>: ManagedBuffer<Value, pthread_mutex_t> {
    static func make(_ value: sending Value) -> LockStorage<Value> {
        // `create` allocates an instance of the class it is called on.
        let storage = unsafeDowncast(create(minimumCapacity: 1) { _ in value }, to: LockStorage<Value>.self)
        let error = pthread_mutex_init(storage.mutex, nil)
        precondition(error == 0, "pthread_mutex_init failed with error \(error)")
        return storage
    }

    /// The value; valid while the storage is alive.
    var value: UnsafeMutablePointer<Value> { withUnsafeMutablePointerToHeader { $0 } }

    /// The mutex; valid while the storage is alive.
    var mutex: UnsafeMutablePointer<pthread_mutex_t> { withUnsafeMutablePointerToElements { $0 } }

    deinit {
        let error = pthread_mutex_destroy(mutex)
        precondition(error == 0, "pthread_mutex_destroy failed with error \(error)")
    }
}
