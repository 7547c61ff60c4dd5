import BreezeCore
import CSQLite
@preconcurrency import Glibc

/// Backups (`breeze backup`, `breeze restore`): a consistent copy of a live database, and a database restored
/// from one that rejoins its cluster under a new epoch.
extension EventLog {
    /// What a backup wrote.
    public struct BackupReport: Sendable {
        /// Bytes of the copy, and its events.
        public var bytes: Int, events: Int
    }

    /// Copies this database to `path`, a new file made with mode 0600 (refused if it exists), with SQLite's
    /// online backup in one step: one read transaction, so the copy is the database as of one commit while
    /// other connections and processes (a running node) go on writing (WAL: a reader never blocks a writer).
    /// The copy is checked (`PRAGMA quick_check`) before this returns; a failed backup leaves no file.
    ///
    /// - Throws: `StoreError(.io)` naming `path` when it exists or cannot be made; `.corrupt` when the copy
    ///   fails its check.
    public func backup(to path: String) throws(StoreError) -> BackupReport {
        guard !FileChecks.exists(path) else { throw StoreError(.io, "\(path): cannot create the backup: File exists") }
        // Written under a temporary name beside it, then linked into place (which refuses an existing file):
        // a backup cut short (killed, disk full) never leaves a file under the name a restore would use.
        let temporary = path + ".partial-\(getpid())"
        let fd = Glibc.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let e = errno
            throw StoreError(e == ENOSPC ? .diskFull : .io, "\(path): cannot create the backup: \(String(cString: strerror(e)))")
        }
        Glibc.close(fd)
        defer { unlink(temporary); unlink(temporary + "-wal"); unlink(temporary + "-shm") }
        do {
            let dest = try Database(path: temporary, create: false)
            defer { dest.close() }
            guard let backup = sqlite3_backup_init(dest.handle, "main", db.handle, "main") else {
                throw StoreError(.io, "\(path): cannot start the backup: \(String(cString: sqlite3_errmsg(dest.handle)))")
            }
            let rc = sqlite3_backup_step(backup, -1)
            let finish = sqlite3_backup_finish(backup)
            guard rc == SQLITE_DONE, finish == SQLITE_OK else {
                throw StoreError(.io, "\(path): the backup failed: \(String(cString: sqlite3_errmsg(dest.handle))) (code \(rc))")
            }
            let check = try dest.prepare("PRAGMA quick_check")
            var problems: [String] = []
            while try check.step() { problems.append(check.text(0)) }
            guard problems == ["ok"] else {
                throw StoreError(.corrupt, "\(path): the backup fails its check: \(problems.prefix(3).joined(separator: "; "))")
            }
            let events = Int(try dest.scalarInt("SELECT count(*) FROM events") ?? 0)
            // Everything in the file itself (no WAL beside it), synced.
            _ = try? dest.scalarInt("PRAGMA wal_checkpoint(TRUNCATE)")
            dest.close()
            let sync = Glibc.open(temporary, O_RDONLY | O_CLOEXEC)
            if sync >= 0 { fsync(sync); Glibc.close(sync) }
            guard link(temporary, path) == 0 else {
                throw StoreError(.io, "\(path): cannot create the backup: \(String(cString: strerror(errno)))")
            }
            return BackupReport(bytes: Int(FileChecks.size(path)), events: events)
        } catch let e as StoreError { throw e } catch { throw StoreError.from(error, path: path) }
    }

    /// Makes the database `path` from the backup `from` (a new file, mode 0600; refused if `path` exists) and
    /// starts a new epoch in it at once, so the events it makes from now on have ids nobody holds, while what it
    /// had sent after the backup comes back from the cluster at its first sync (`Protocol/encoding.md` 6).
    /// Returns the restored log, open.
    public static func restore(from backupPath: String, to path: String, options: Options = Options()) throws(StoreError) -> EventLog {
        guard FileChecks.exists(backupPath) else { throw StoreError(.missing, "\(backupPath): no backup here") }
        let source = try EventLog.openReadOnly(at: backupPath, options: options)
        defer { source.close() }
        _ = try source.backup(to: path)
        // Nothing half-made stays: a copy that could not start its new epoch would reuse the backup's.
        func remove() { for f in [path, path + "-wal", path + "-shm"] { unlink(f) } }
        let log: EventLog
        do { log = try EventLog.open(at: path, options: options) } catch {
            remove()
            throw error
        }
        do { _ = try log.startNewEpoch() } catch {
            log.close()
            remove()
            throw error
        }
        return log
    }
}
