import BreezeCore
import BreezeStore
@preconcurrency import Glibc

/// A fresh temporary directory per test, removed at the end.
final class TempDir {
    let path: String
    init() {
        var template = Array("/tmp/breeze-test-XXXXXX".utf8CString)
        path = String(cString: mkdtemp(&template)!)
    }
    deinit { _ = system("rm -rf '\(path)'") }
    func file(_ name: String) -> String { path + "/" + name }
}

/// Options whose boot id and wall clock the test controls.
func testOptions(boot: String? = "boot-1", wall: UInt64 = 1_700_000_000_000,
                 durability: EventLog.Durability = .full) -> EventLog.Options {
    var o = EventLog.Options()
    o.bootID = { boot }
    o.wallClock = { wall }
    o.durability = durability
    return o
}

/// The directory holding the built executables (`breeze`, `breeze-torture`): next to the test bundle.
func productsDirectory() -> String {
    var exe = [CChar](repeating: 0, count: 4096)
    let n = readlink("/proc/self/exe", &exe, 4095)
    var dir = n > 0 ? String(decoding: exe[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : CommandLine.arguments[0]
    while !dir.isEmpty {
        dir = String(dir[..<(dir.lastIndex(of: "/") ?? dir.startIndex)])
        if access(dir + "/breeze-torture", X_OK) == 0 { return dir }
    }
    return ".build/debug"
}

func readFileBytes(_ path: String) -> [UInt8] {
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

func writeFileBytes(_ path: String, _ bytes: [UInt8]) {
    let f = fopen(path, "wb")!
    _ = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, bytes.count, f) }
    fclose(f)
}

/// A child process with its standard output piped to us.
final class Child {
    let pid: pid_t
    private let fd: Int32
    private var buffer: [UInt8] = []

    init(_ path: String, _ args: [String]) {
        var fds: [Int32] = [0, 0]
        pipe(&fds)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_addclose(&actions, fds[0])
        let argv = ([path] + args).map { strdup($0) } + [nil]
        var p: pid_t = 0
        let rc = posix_spawn(&p, path, &actions, nil, argv, environ)
        precondition(rc == 0, "cannot spawn \(path): \(rc)")
        argv.forEach { free($0) }
        posix_spawn_file_actions_destroy(&actions)
        close(fds[1])
        pid = p
        fd = fds[0]
    }

    /// The next line of output, or nil at end of file.
    func readLine() -> String? {
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

    func kill9() { kill(pid, SIGKILL) }

    /// Waits and returns the exit status (or 128 + signal).
    @discardableResult
    func wait() -> Int32 {
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        close(fd)
        if status & 0x7f == 0 { return (status >> 8) & 0xff }
        return 128 + (status & 0x7f)
    }
}

import Testing

/// Expects `body` to throw a `StoreError` of the given kind.
func expectStoreError(_ kind: StoreError, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) {
    do {
        try body()
        Issue.record("expected a StoreError", sourceLocation: sourceLocation)
    } catch let e as StoreError {
        #expect(kind ~= e, "got: \(e)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
    }
}
