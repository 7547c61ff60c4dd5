import Breeze
import BreezeTestSupport
@preconcurrency import Glibc

/// Where the project's fixtures are (the real data files shipped with the tests).
enum Fixtures {
    static var root: String {
        let file = #filePath
        let dir = String(file[..<file.lastIndex(of: "/")!])
        return String(dir[..<dir.lastIndex(of: "/")!]) + "/BreezeImportTests/Fixtures"
    }
    /// The Troy NY PurpleAir registry: 87173, 149970, 156171, 166653.
    static var troySensors: String { root + "/purpleair/ajl_sensors.csv" }
}

/// Collects what an observation yields, from a task of its own, so a test can wait for a value with a
/// deadline (an `await` on `next()` alone would hang a failing test).
final class Collected<Value: Sendable>: @unchecked Sendable {
    // `@unchecked Sendable`: `values`, `error` and `finished` are guarded by `lock`.
    private let lock = TestLock()
    private var values: [Value] = []
    private var error: (any Error)?
    private var finished = false
    private var task: Task<Void, Never>?

    init<S: AsyncSequence & Sendable>(_ sequence: S) where S.Element == Value {
        task = Task.detached { [self] in
            do {
                for try await v in sequence { lock.run { values.append(v) } }
                lock.run { finished = true }
            } catch {
                lock.run { self.error = error; finished = true }
            }
        }
    }

    deinit { task?.cancel() }

    /// Everything yielded so far.
    var all: [Value] { lock.run { values } }
    /// True once the sequence ended (normally or with an error).
    var hasFinished: Bool { lock.run { finished } }
    /// The error the sequence ended with.
    var failure: (any Error)? { lock.run { error } }

    func cancel() { task?.cancel() }

    /// Waits until `count` values have arrived (or `seconds` pass); returns them.
    @discardableResult
    func wait(count: Int, seconds: Double = 10) async -> [Value] {
        await waitFor(seconds: seconds) { $0.count >= count }
        return all
    }

    /// Waits until a value matching `match` has arrived; returns whether one did.
    func wait(seconds: Double = 10, for match: (Value) -> Bool) async -> Bool {
        await waitFor(seconds: seconds) { $0.contains(where: match) }
    }

    @discardableResult
    private func waitFor(seconds: Double, _ done: ([Value]) -> Bool) async -> Bool {
        let deadline = now() + seconds
        while now() < deadline {
            if done(all) || hasFinished { return done(all) }
            try? await Task.sleep(nanoseconds: 1_000_000)
        }
        return done(all)
    }
}

/// A pthread mutex with a closure API (tests only).
final class TestLock: @unchecked Sendable {
    // `@unchecked Sendable`: the mutex is the synchronisation.
    private let m: UnsafeMutablePointer<pthread_mutex_t>
    init() { m = .allocate(capacity: 1); pthread_mutex_init(m, nil) }
    deinit { pthread_mutex_destroy(m); m.deallocate() }
    func run<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(m)
        defer { pthread_mutex_unlock(m) }
        return try body()
    }
}

/// Monotonic seconds.
func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// The `breeze` binary built beside the tests.
var breeze: String { productsDirectory() + "/breeze" }

/// Runs `breeze ARGS` to completion; returns exit code and standard output.
@discardableResult
func runBreeze(_ args: [String]) -> (code: Int32, out: String) { runProgram(breeze, args) }

/// A fresh cluster secret in a file of `dir`.
func secretFile(in dir: TempDir) -> String {
    let path = dir.file("cluster.key")
    let secret = runBreeze(["secret", "new"]).out
    writeFileBytes(path, Array((secret + "\n").utf8))
    return path
}

/// A `breeze node` process on `db`, listening on 127.0.0.1 port 0; returns it and its address.
func startNode(db: String, secret: String, peers: [String] = [], log: String) -> (Child, String) {
    let child = Child(breeze, ["node", "--db", db, "--listen", "127.0.0.1:0", "--secret-file", secret]
                      + peers.flatMap { ["--peer", $0] }, stderrPath: log)
    let line = child.readLine() ?? ""
    return (child, line.hasPrefix("listening on ") ? String(line.dropFirst("listening on ".count)) : "")
}
