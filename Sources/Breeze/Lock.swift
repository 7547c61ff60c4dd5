@preconcurrency import Glibc

/// A pthread mutex (ThreadSanitizer is clean with it, where it has flagged `Synchronization.Mutex`; see
/// `shared/docs/style.md`).
///
/// `@unchecked Sendable`: the mutex is the synchronisation; it lives in memory of its own (never moved)
/// from `init` to `deinit`.
final class Lock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// A mutex; a `recursive` one may be taken again by the thread that holds it; a `checked` one refuses
    /// that (its `withLock(reentry:_:)` calls `reentry` rather than wait for itself forever).
    init(recursive: Bool = false, checked: Bool = false) {
        mutex = .allocate(capacity: 1)
        if recursive || checked {
            var attr = pthread_mutexattr_t()
            pthread_mutexattr_init(&attr)
            pthread_mutexattr_settype(&attr, Int32(recursive ? PTHREAD_MUTEX_RECURSIVE : PTHREAD_MUTEX_ERRORCHECK))
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

    /// Runs `body` holding the mutex. A checked mutex taken again by its holder stops the process with the
    /// reason (rather than hang or run unlocked): callers that can throw use `withLock(reentry:_:)`.
    func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        try withLock(reentry: { () throws(E) -> Never in preconditionFailure("a lock taken again by the thread that holds it (a re-entrant call)") }, body)
    }

    /// `withLock`, except that when the calling thread already holds this (checked) mutex, `reentry` is
    /// called instead (it throws: the call is refused), not a wait for itself forever.
    func withLock<T, E: Error>(reentry: () throws(E) -> Never, _ body: () throws(E) -> T) throws(E) -> T {
        if pthread_mutex_lock(mutex) == EDEADLK { try reentry() }
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}
