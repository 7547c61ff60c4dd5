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

/// Collects what an observation yields through its callback form (`ValueObservation.start`), on the observation
/// thread, so a test can wait for a value with a deadline by blocking: nothing here needs a thread of Swift's
/// cooperative pool, which the suite's many blocking tests can keep busy for seconds at a time.
final class Collected<Value: Equatable & Sendable>: @unchecked Sendable {
    // `@unchecked Sendable`: `values` and `error` are guarded by `lock`.
    private let lock = TestLock()
    private var values: [Value] = []
    private var error: BreezeError?
    private var token: ObservationToken?

    init(_ observation: ValueObservation<Value>) {
        token = observation.start(onChange: { v in self.lock.run { self.values.append(v) } },
                                  onError: { e in self.lock.run { self.error = e } })
    }

    /// Everything yielded so far.
    var all: [Value] { lock.run { values } }
    /// The error the observation ended with.
    var failure: BreezeError? { lock.run { error } }

    func cancel() { token?.cancel() }

    /// Waits until `count` values have arrived (or `seconds` pass); returns them.
    @discardableResult
    func wait(count: Int, seconds: Double = 30) -> [Value] {
        _ = waitUntil(seconds: seconds, pollMillis: 1) { all.count >= count || failure != nil }
        return all
    }

    /// Waits until a value matching `match` has arrived; returns whether one did.
    func wait(seconds: Double = 30, for match: (Value) -> Bool) -> Bool {
        waitUntil(seconds: seconds, pollMillis: 1) { all.contains(where: match) || failure != nil } && all.contains(where: match)
    }
}

/// Polls `condition` every `pollMillis` until it holds or `seconds` pass (blocking the calling thread).
func waitUntil(seconds: Double, pollMillis: UInt32, _ condition: () -> Bool) -> Bool {
    let deadline = now() + seconds
    while now() < deadline {
        if condition() { return true }
        usleep(pollMillis * 1000)
    }
    return condition()
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

/// A cluster authority for a test (its key files in `dir`), made and used through the CLI.
func authority(in dir: TempDir) -> CLIAuthority { CLIAuthority(breeze: breeze, keyFile: dir.file("cluster.key")) }

/// Sync options for the replica whose database is `db`, enrolled with `scope` by `authority`.
func syncOptions(db: String, authority: CLIAuthority, scope: String = "cluster", listen: String? = nil,
                 peers: [String] = []) throws -> SyncOptions {
    let args = authority.nodeArguments(db: db, scope: scope)
    return try SyncOptions(certificateFile: args[1], authorityFile: args[3], listen: listen, peers: peers)
}

/// A `breeze node` process on `db` (enrolled by `authority`), listening on 127.0.0.1 port 0; returns it and
/// its address.
func startNode(db: String, authority: CLIAuthority, peers: [String] = [], log: String) -> (Child, String) {
    let child = Child(breeze, ["node", "--db", db, "--listen", "127.0.0.1:0"] + authority.nodeArguments(db: db)
                      + peers.flatMap { ["--peer", $0] }, stderrPath: log)
    let line = child.readLine() ?? ""
    return (child, line.hasPrefix("listening on ") ? String(line.dropFirst("listening on ".count)) : "")
}
