import BreezeCLI
@preconcurrency import Glibc

/// A child process (of this same executable for `bench sync`, or a comparison script for `bench all`):
/// standard output piped back line by line, standard error to a file, a clean signal mask.
final class Subprocess {
    let pid: pid_t
    private let fd: Int32
    private var buffer: [UInt8] = []
    private var exitStatus: Int32?

    /// The path of this executable (`/proc/self/exe`).
    static func selfPath() throws(CLIError) -> String {
        var exe = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &exe, 4095)
        guard n > 0 else { throw .failure("cannot find this executable (/proc/self/exe)") }
        return String(decoding: exe[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The `breeze` tool beside this executable (the benchmarks run its `node` command as separate processes).
    static func breezePath() throws(CLIError) -> String {
        let me = try selfPath()
        let dir = me.lastIndex(of: "/").map { String(me[..<$0]) } ?? "."
        let path = dir + "/breeze"
        guard access(path, X_OK) == 0 else {
            throw .failure("cannot find the breeze tool at \(path) (build it: swift build -c release --product breeze)")
        }
        return path
    }

    /// Starts `executable` (an absolute path; this executable when nil) with `args`, in this process's
    /// environment plus `environment` (`NAME=value` entries, which win).
    init(executable: String? = nil, args: [String], stderrPath: String, environment extra: [String] = []) throws(CLIError) {
        let path: String
        if let executable { path = executable } else { path = try Subprocess.selfPath() }
        var fds: [Int32] = [0, 0]
        pipe(&fds)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_addclose(&actions, fds[0])
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attr, &empty)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK))
        let argv = ([path] + args).map { strdup($0) } + [nil]
        var env: [String] = []
        var e = environ
        while let entry = e.pointee {
            let s = String(cString: entry)
            let name = s.prefix { $0 != "=" }
            if !extra.contains(where: { $0.hasPrefix(name + "=") }) { env.append(s) }
            e += 1
        }
        let envp = (env + extra).map { strdup($0) } + [nil]
        var p: pid_t = 0
        let rc = posix_spawn(&p, path, &actions, &attr, argv, envp)
        argv.forEach { free($0) }
        envp.forEach { free($0) }
        posix_spawn_file_actions_destroy(&actions)
        posix_spawnattr_destroy(&attr)
        close(fds[1])
        guard rc == 0 else { close(fds[0]); throw .failure("cannot start \(path): \(String(cString: strerror(rc)))") }
        pid = p
        fd = fds[0]
    }

    /// The next line of standard output, nil at end of file.
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

    /// Peak resident memory (VmHWM from /proc/PID/status), in MiB.
    func peakResidentMiB() -> Double {
        guard let f = fopen("/proc/\(pid)/status", "r") else { return 0 }
        defer { fclose(f) }
        var line = [CChar](repeating: 0, count: 256)
        while fgets(&line, 256, f) != nil {
            let s = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if s.hasPrefix("VmHWM:") {
                let kb = s.split(separator: " ").compactMap { Double($0) }.first ?? 0
                return kb / 1024
            }
        }
        return 0
    }

    /// Asks the child to stop (SIGTERM) and waits for it; does nothing once it has been waited for.
    func stop() {
        guard exitStatus == nil else { return }
        kill(pid, SIGTERM)
        _ = wait()
    }

    /// Reads standard output to its end, waits for the child and returns the rest of its output (the lines
    /// not read yet) and its exit status (128 + the signal number if a signal ended it).
    @discardableResult
    func wait() -> (output: [String], status: Int32) {
        if let s = exitStatus { return ([], s) }
        var lines: [String] = []
        while let line = readLine() { lines.append(line) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        close(fd)
        let code = status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        exitStatus = code
        return (lines, code)
    }
}
