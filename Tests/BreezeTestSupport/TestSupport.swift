// Helpers shared by the test targets: temporary directories, child processes, file bytes, the
// built executables' location. Not shipped.
@preconcurrency public import Glibc

/// A fresh temporary directory per test, removed at the end.
public final class TempDir {
    public let path: String
    public init() {
        var template = Array("/tmp/breeze-test-XXXXXX".utf8CString)
        path = String(cString: mkdtemp(&template)!)
    }
    /// Removed with everything in it, unless `BREEZE_KEEP_TEST_DIRS` is set (to read a failed test's logs).
    deinit { if getenv("BREEZE_KEEP_TEST_DIRS") == nil { _ = system("rm -rf '\(path)'") } }
    public func file(_ name: String) -> String { path + "/" + name }
}

/// The directory holding the built executables (`breeze`, `breeze-torture`): next to the test bundle.
public func productsDirectory() -> String {
    var exe = [CChar](repeating: 0, count: 4096)
    let n = readlink("/proc/self/exe", &exe, 4095)
    var dir = n > 0 ? String(decoding: exe[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : CommandLine.arguments[0]
    while !dir.isEmpty {
        dir = String(dir[..<(dir.lastIndex(of: "/") ?? dir.startIndex)])
        if access(dir + "/breeze-torture", X_OK) == 0 { return dir }
    }
    return ".build/debug"
}

public func readFileBytes(_ path: String) -> [UInt8] {
    guard let f = fopen(path, "rb") else { return [] }
    defer { fclose(f) }
    var out: [UInt8] = []
    var buf = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&buf, 1, buf.count, f)
        if n <= 0 { break }
        out += buf[0..<n]
    }
    return out
}

public func writeFileBytes(_ path: String, _ bytes: [UInt8]) {
    let f = fopen(path, "wb")!
    _ = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, bytes.count, f) }
    fclose(f)
}

/// A child process with its standard output piped to us.
public final class Child {
    public let pid: pid_t
    private let fd: Int32
    private var buffer: [UInt8] = []

    public init(_ path: String, _ args: [String], stderrPath: String? = nil) {
        var fds: [Int32] = [0, 0]
        // A socket pair rather than a pipe: it is close-on-exec from the start (atomically, which `pipe` then
        // `fcntl` is not), so children that other tests spawn in parallel do not inherit it and hold it open
        // (this child still gets its end as stdout: dup2 clears the flag).
        socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_addclose(&actions, fds[0])
        if let stderrPath { posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_APPEND, 0o644) }
        // The test runner may block or ignore signals; a child starts with an empty mask and default handlers.
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attr, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for s in [SIGTERM, SIGINT, SIGPIPE, SIGHUP] { sigaddset(&defaults, s) }
        posix_spawnattr_setsigdefault(&attr, &defaults)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = ([path] + args).map { strdup($0) } + [nil]
        var p: pid_t = 0
        let rc = posix_spawn(&p, path, &actions, &attr, argv, environ)
        posix_spawnattr_destroy(&attr)
        precondition(rc == 0, "cannot spawn \(path): \(rc)")
        argv.forEach { free($0) }
        posix_spawn_file_actions_destroy(&actions)
        close(fds[1])
        pid = p
        fd = fds[0]
    }

    /// The next line of output, or nil at end of file.
    public func readLine() -> String? {
        while true {
            if let nl = buffer.firstIndex(of: 10) {
                let line = String(decoding: buffer[..<nl], as: UTF8.self)
                buffer.removeSubrange(...nl)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let n = read(fd, &chunk, 4096)
            if n <= 0 { return nil }
            buffer += chunk[0..<n]
        }
    }

    public func kill9() { kill(pid, SIGKILL) }

    /// Waits and returns the exit status (or 128 + signal).
    @discardableResult
    public func wait() -> Int32 {
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        close(fd)
        if status & 0x7f == 0 { return (status >> 8) & 0xff }
        return 128 + (status & 0x7f)
    }
}


extension Child {
    /// Sends a signal.
    public func signal(_ s: Int32) { kill(pid, s) }
}

/// Polls `condition` every 50 ms until it holds or `seconds` pass; returns whether it held.
public func waitUntil(seconds: Double, _ condition: () throws -> Bool) rethrows -> Bool {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    let deadline = Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9 + seconds
    while true {
        if try condition() { return true }
        clock_gettime(CLOCK_MONOTONIC, &ts)
        if Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9 > deadline { return false }
        usleep(50_000)
    }
}

/// Runs a program to completion; returns its exit status and standard output.
public func runProgram(_ path: String, _ args: [String]) -> (code: Int32, out: String) {
    let c = Child(path, args, stderrPath: "/dev/null")
    var lines: [String] = []
    while let l = c.readLine() { lines.append(l) }
    return (c.wait(), lines.joined(separator: "\n"))
}

/// Runs a program to completion; returns its exit status, standard output and standard error.
public func runProgramWithErrors(_ path: String, _ args: [String]) -> (code: Int32, out: String, err: String) {
    var template = Array("/tmp/breeze-stderr-XXXXXX".utf8CString)
    let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
    let errPath = String(cString: template)
    if fd >= 0 { close(fd) }
    defer { unlink(errPath) }
    let c = Child(path, args, stderrPath: errPath)
    var lines: [String] = []
    while let l = c.readLine() { lines.append(l) }
    let code = c.wait()
    let err = String(decoding: readFileBytes(errPath), as: UTF8.self)
    return (code, lines.joined(separator: "\n"), err)
}

/// A seeded generator (SplitMix64) so property tests are repeatable; failures print the seed.
public struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The permission bits of a file (0 when there is none).
public func fileMode(_ path: String) -> mode_t {
    var st = stat()
    return stat(path, &st) == 0 ? st.st_mode & 0o777 : 0
}

/// A cluster authority made with the built `breeze authority new`, which enrols databases the way an operator
/// does (`breeze key show --json`, then `breeze enrol`), so tests that start `breeze node` processes can give
/// each its `--cert` and `--authority`.
public struct CLIAuthority: Sendable {
    public let breeze: String
    /// The private key file (mode 0600); the public key is `publicKeyFile`.
    public let keyFile: String
    public var publicKeyFile: String { keyFile + ".pub" }

    /// A new authority whose key is written to `keyFile`.
    public init(breeze: String = productsDirectory() + "/breeze", keyFile: String) {
        self.breeze = breeze
        self.keyFile = keyFile
        let made = runProgram(breeze, ["authority", "new", "--out", keyFile])
        precondition(made.code == 0, "breeze authority new failed: \(made.out)")
    }

    /// The replica id and device key that `breeze key show --json` prints for the database `db`.
    public func deviceKey(db: String) -> (replica: String, key: String) {
        let out = runProgram(breeze, ["--db", db, "key", "show", "--json"]).out
        func field(_ f: String) -> String {
            let parts = out.split(separator: "\"", omittingEmptySubsequences: false)
            guard let i = parts.firstIndex(where: { $0 == f }), i + 2 < parts.count else { return "" }
            return String(parts[i + 2])             // "f" : "value"
        }
        return (field("replica"), field("deviceKey"))
    }

    /// Enrols `db` with `scope` (once: an existing `cert` is kept) and returns `--cert CERT --authority PUB`.
    public func nodeArguments(db: String, cert: String? = nil, scope: String = "cluster") -> [String] {
        let certFile = cert ?? db + ".cert"
        if access(certFile, F_OK) != 0 {
            let (replica, key) = deviceKey(db: db)
            let r = runProgram(breeze, ["enrol", "--signer", keyFile, "--device-key", key, "--replica", replica, "--scope", scope,
                                        "--out", certFile])
            precondition(r.code == 0, "breeze enrol \(db) failed: \(r.out)")
        }
        return ["--cert", certFile, "--authority", publicKeyFile]
    }
}
