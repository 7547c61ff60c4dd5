@preconcurrency import Glibc

/// inotify on a database's directory, reporting writes to its write-ahead log (`<name>-wal`) or the file
/// itself: how an observation notices commits by other processes without a fixed polling delay. The
/// directory is watched rather than the WAL file, so a WAL that is deleted and created again (when the last
/// connection closes) is still seen. Not available (`isWatching` false) when inotify cannot be set up.
final class WALWatch {
    /// The inotify descriptor (non-blocking), or -1.
    let fd: Int32
    private let names: Set<String>

    init(databasePath: String) {
        let slash = databasePath.lastIndex(of: "/")
        let dir = slash.map { String(databasePath[..<$0]) } ?? "."
        let base = slash.map { String(databasePath[databasePath.index(after: $0)...]) } ?? databasePath
        names = [base, base + "-wal"]
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        if fd >= 0, inotify_add_watch(fd, dir.isEmpty ? "/" : dir, UInt32(IN_MODIFY | IN_CREATE | IN_MOVED_TO)) < 0 {
            close(fd)
            self.fd = -1
        } else {
            self.fd = fd
        }
    }

    deinit { if fd >= 0 { close(fd) } }

    var isWatching: Bool { fd >= 0 }

    /// Reads every pending inotify event; true when one was about the database or its WAL.
    func drainSawWrite() -> Bool {
        var saw = false
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { return saw }
            var offset = 0
            let header = MemoryLayout<inotify_event>.size
            while offset + header <= n {
                let length = buffer.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)) }
                if length > 0, offset + header + length <= n {
                    let nameBytes = buffer[(offset + header)..<(offset + header + length)].prefix { $0 != 0 }
                    if names.contains(String(decoding: nameBytes, as: UTF8.self)) { saw = true }
                }
                offset += header + length
            }
        }
    }
}
