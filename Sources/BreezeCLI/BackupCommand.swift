import BreezeCore
import BreezeStore
@preconcurrency import Glibc

/// `breeze backup --db DB --out FILE`: a consistent copy of a database while its node runs (SQLite's online
/// backup in one read transaction), mode 0600, checked, with the device key beside it (`FILE.key`, 0600).
/// `breeze restore --from FILE --db NEW`: a database made from a backup, under a new epoch, ready for its node
/// to take back from the cluster what it had after the backup.
enum BackupCommand {
    static let usage = """
        usage: breeze backup --db DB --out FILE [--json]
          copies DB as of one commit while a node keeps writing to it (online), to FILE (a new file, mode 0600),
          checks the copy, and copies the device key DB.key to FILE.key (0600): both are secrets
          (restore with `breeze restore --from FILE --db NEW`)
        """
    static let restoreUsage = """
        usage: breeze restore --from FILE --db NEW [--json]
          makes NEW (a new file) from a backup (`breeze backup`) and its key, under a new epoch: start its node with
          the cluster's peers and it takes back what it had sent after the backup (Protocol/encoding.md 6)
        """

    static func backup(_ args: [String], _ ctx: Context) throws(CLIError) {
        let a = try Arguments(args, valued: ["out"], usage: usage)
        _ = try a.expect([])
        guard let out = a.options["out"], !out.isEmpty else { throw .usage("missing --out FILE (the backup to write)", usage) }
        let started = SystemClock.monotonicSeconds()
        let report = try ctx.withReadOnlyLog { log in try log.backup(to: out) }
        let key = KeyFile.devicePath(forDatabase: ctx.dbPath)
        let keyCopied = try copyKey(from: key, to: KeyFile.devicePath(forDatabase: out), cleanup: out)
        let seconds = SystemClock.monotonicSeconds() - started
        if ctx.json {
            ctx.console.out(JSONValue.object([("backup", .string(out)), ("bytes", .int(Int64(report.bytes))), ("events", .int(Int64(report.events))),
                                              ("key", keyCopied ? .string(KeyFile.devicePath(forDatabase: out)) : .null),
                                              ("seconds", .double((seconds * 1000).rounded() / 1000))]).text)
        } else {
            ctx.console.out("backed up \(ctx.dbPath) to \(out): \(report.events) events, \(report.bytes) bytes, checked, mode 0600, in \(String(format2: seconds)) s"
                            + (keyCopied ? "; device key in \(KeyFile.devicePath(forDatabase: out))" : "; no device key beside \(ctx.dbPath)"))
        }
    }

    static func restore(_ args: [String], _ ctx: Context) throws(CLIError) {
        let a = try Arguments(args, valued: ["from"], usage: restoreUsage)
        _ = try a.expect([])
        guard let from = a.options["from"], !from.isEmpty else { throw .usage("missing --from FILE (the backup to restore)", restoreUsage) }
        guard access(ctx.dbPath, F_OK) != 0 else {
            throw .failure("\(ctx.dbPath): a database is already here; restore into a new path (nothing was changed)")
        }
        guard access(KeyFile.devicePath(forDatabase: ctx.dbPath), F_OK) != 0 else {
            throw .failure("\(KeyFile.devicePath(forDatabase: ctx.dbPath)): a key file is already there; restore into a new path (nothing was changed)")
        }
        // The key first: a database restored without its key would make a new, uncertified one at its next open.
        let keyPath = KeyFile.devicePath(forDatabase: ctx.dbPath)
        let keyCopied = try copyKey(from: KeyFile.devicePath(forDatabase: from), to: keyPath, cleanup: nil)
        let log: EventLog
        do { log = try EventLog.restore(from: from, to: ctx.dbPath, options: ctx.logOptions()) } catch {
            if keyCopied { unlink(keyPath) }
            throw .failure(error.description)
        }
        let (replica, epoch) = (log.replica, log.epoch)
        log.close()
        if ctx.json {
            ctx.console.out(JSONValue.object([("restored", .string(ctx.dbPath)), ("from", .string(from)), ("replica", .string(replica.description)),
                                              ("epoch", .int(Int64(epoch))), ("key", .bool(keyCopied))]).text)
        } else {
            ctx.console.out("restored \(ctx.dbPath) from \(from): replica \(replica), new epoch \(epoch)"
                            + (keyCopied ? "" : " (the backup had no device key beside it: one is made at the next open)")
                            + "; next: start its node with the cluster's peers (breeze node --db \(ctx.dbPath) --peer HOST:PORT ...)")
        }
    }

    /// Copies a device key file (mode 0600, a new file); false when there is none to copy. On failure, removes
    /// `cleanup` (the backup just written) so nothing half-made is left.
    private static func copyKey(from: String, to: String, cleanup: String?) throws(CLIError) -> Bool {
        guard access(from, F_OK) == 0 else { return false }
        let created: Bool
        do {
            created = try KeyFile.create(to, try KeyFile.read(from), comment: "device key of the replica backed up or restored here")
        } catch {
            if let cleanup { unlink(cleanup) }
            throw .failure("\(from): the device key could not be copied: \(error.description)")
        }
        guard created else {
            if let cleanup { unlink(cleanup) }
            throw .failure("\(to): a key file is already there (nothing was written)")
        }
        return true
    }
}

extension String {
    /// `v` with two decimals.
    init(format2 v: Double) { self = String((v * 100).rounded() / 100) }
}
