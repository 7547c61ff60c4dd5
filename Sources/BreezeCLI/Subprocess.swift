@preconcurrency import Glibc

/// A child process of this same executable (for `bench sync`): standard output piped back line by line,
/// standard error to a file, a clean signal mask.
final class Subprocess {
    let pid: pid_t
    private let fd: Int32
    private var buffer: [UInt8] = []

    /// Starts `/proc/self/exe` with `args`.
    init(args: [String], stderrPath: String) throws(CLIError) {
        var exe = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &exe, 4095)
        guard n > 0 else { throw .failure("cannot find this executable (/proc/self/exe)") }
        let path = String(decoding: exe[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
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
        var p: pid_t = 0
        let rc = posix_spawn(&p, path, &actions, &attr, argv, environ)
        argv.forEach { free($0) }
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

    /// Asks the child to stop (SIGTERM) and waits for it.
    func stop() {
        kill(pid, SIGTERM)
        while readLine() != nil {}
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        close(fd)
    }
}
