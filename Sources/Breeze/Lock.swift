@preconcurrency import Glibc

/// A pthread mutex (ThreadSanitizer is clean with it, where it has flagged `Synchronization.Mutex`; see
/// `shared/docs/style.md`).
///
/// `@unchecked Sendable`: the mutex is the synchronisation; it lives in memory of its own (never moved)
/// from `init` to `deinit`.
final class Lock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// A mutex; a `recursive` one may be taken again by the thread that holds it.
    init(recursive: Bool = false) {
        mutex = .allocate(capacity: 1)
        if recursive {
            var attr = pthread_mutexattr_t()
            pthread_mutexattr_init(&attr)
            pthread_mutexattr_settype(&attr, Int32(PTHREAD_MUTEX_RECURSIVE))
            pthread_mutex_init(mutex, &attr)
            pthread_mutexattr_destroy(&attr)
        } else {
            pthread_mutex_init(mutex, nil)
        }
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}
