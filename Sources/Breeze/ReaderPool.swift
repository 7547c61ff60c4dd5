import BreezeStore
import Dispatch
@preconcurrency import Glibc

/// The connections the async API reads through (as GRDB's `DatabasePool` keeps readers beside its writer):
/// up to `capacity` read connections, opened when first needed, each with its own caches (`ReadCache`). In
/// WAL mode a reader sees the last commit and never waits for a writer, so an app's read never waits for an
/// import or a sync that is writing.
///
/// Work runs on Dispatch's global queue, never on the caller's thread: an `await` from the main actor frees
/// it while the read runs. When every reader is busy the work waits (on its Dispatch thread) for one.
///
/// `@unchecked Sendable`: `idle`, `opened` and `closed` are guarded by `mutex` (with `available` signalled
/// when a reader comes back); a reader (its connection and caches) is used by one work item at a time,
/// between `take` and `give`.
final class ReaderPool: @unchecked Sendable {
    /// One read connection and what it remembers between reads.
    final class Reader {
        let log: EventLog
        let cache = ReadCache()
        init(log: EventLog) { self.log = log }
    }

    private let path: String
    private let options: EventLog.Options
    let capacity: Int
    private let available = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var idle: [Reader] = []
    private var opened = 0
    private var closed = false

    init(path: String, logOptions options: EventLog.Options, capacity: Int) {
        self.path = path
        self.options = options
        self.capacity = max(1, capacity)
        pthread_cond_init(available, nil)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_cond_destroy(available)
        pthread_mutex_destroy(mutex)
        available.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` with a reader on a Dispatch thread; the caller's task is suspended meanwhile.
    func run<T: Sendable>(_ body: @escaping @Sendable (Reader) throws(BreezeError) -> T) async throws(BreezeError) -> T {
        let result: Result<T, BreezeError> = await withCheckedContinuation { c in
            DispatchQueue.global(qos: .userInitiated).async {
                c.resume(returning: Result { () throws(BreezeError) -> T in
                    let reader = try self.take()
                    defer { self.give(reader) }
                    return try body(reader)
                })
            }
        }
        return try result.get()
    }

    /// A reader: an idle one, a new one while fewer than `capacity` are open, else the next one given back.
    private func take() throws(BreezeError) -> Reader {
        pthread_mutex_lock(mutex)
        while true {
            if closed {
                pthread_mutex_unlock(mutex)
                throw BreezeError(.closed, "\(path): the replica is closed")
            }
            if let r = idle.popLast() {
                pthread_mutex_unlock(mutex)
                return r
            }
            if opened < capacity {
                // The slot is taken under the mutex, the connection opened outside it (an open may wait for
                // another process's lock): other reads meanwhile take and give back the readers already open.
                opened += 1
                pthread_mutex_unlock(mutex)
                do { return Reader(log: try EventLog.open(at: path, options: options)) } catch {
                    pthread_mutex_lock(mutex)
                    opened -= 1
                    pthread_cond_signal(available)
                    pthread_mutex_unlock(mutex)
                    throw BreezeError.from(error)
                }
            }
            pthread_cond_wait(available, mutex)
        }
    }

    private func give(_ r: Reader) {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        if closed {
            r.log.close()
            opened -= 1
        } else {
            idle.append(r)
        }
        pthread_cond_signal(available)
    }

    /// Closes the idle readers; those in use close when their work ends. Later work throws `.closed`.
    func close() {
        pthread_mutex_lock(mutex)
        closed = true
        let all = idle
        idle.removeAll()
        opened -= all.count
        pthread_cond_broadcast(available)
        pthread_mutex_unlock(mutex)
        for r in all { r.log.close() }
    }
}
