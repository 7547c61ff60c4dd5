import Testing
import Foundation
import Breeze
import BreezeTestSupport
@preconcurrency import Glibc

/// Issue 28, backups: `breeze backup` while a node syncs, `breeze restore`, and the restored server rejoining
/// its cluster, with real `breeze node` processes on 127.0.0.1.
struct BackupRestoreTests {
    /// Server s syncs with server p while edits arrive at p; s is backed up in the middle of them (its node
    /// running and committing). Later edits reach s; then s is lost. Restored from the backup under a new
    /// epoch, its node dials p and takes back everything it had after the backup: nothing is lost.
    @Test(.timeLimit(.minutes(10)))
    func aBackupTakenWhileANodeSyncsIsRestoredAndRejoinsWithNothingLost() throws {
        let dir = TempDir()
        let cluster = authority(in: dir)
        for n in ["s", "p"] { #expect(runBreeze(["--db", dir.file("\(n).db"), "init"]).code == 0) }
        let (s, sAddress) = startNode(db: dir.file("s.db"), authority: cluster, log: dir.file("s.log"))
        let (p, pAddress) = startNode(db: dir.file("p.db"), authority: cluster, peers: [sAddress], log: dir.file("p.log"))
        defer { p.signal(SIGTERM); _ = p.wait() }
        #expect(!sAddress.isEmpty && !pAddress.isEmpty)
        func favourites(_ db: String) -> Int {
            let out = runBreeze(["--db", db, "--user", "ana", "state", "--json"]).out
            guard let start = out.range(of: #""favourites":["#) else { return 0 }
            let rest = out[start.upperBound...]
            return rest[..<(rest.firstIndex(of: "]") ?? rest.endIndex)].split(separator: ",").count
        }
        let phone = dir.file("p.db")
        @Sendable func add(_ range: Range<Int>) {
            for i in range { _ = runBreeze(["--db", phone, "--user", "ana", "favourite", "add", "s\(i)"]) }
        }
        add(0..<10)
        #expect(waitUntil(seconds: 60, pollMillis: 20) { favourites(dir.file("s.db")) == 10 }, "the first edits did not reach s")
        // The backup, while p keeps writing and s's node commits what arrives.
        let written = Flag()
        let writer = Thread { add(10..<30); written.set() }
        writer.start()
        let backup = runProgramWithErrors(breeze, ["--db", dir.file("s.db"), "backup", "--out", dir.file("s.backup"), "--json"])
        #expect(waitUntil(seconds: 120, pollMillis: 10) { written.isSet })
        #expect(backup.code == 0, "\(backup.err)")
        var st = stat()
        #expect(stat(dir.file("s.backup"), &st) == 0 && st.st_mode & 0o777 == 0o600)
        #expect(stat(dir.file("s.backup.key"), &st) == 0 && st.st_mode & 0o777 == 0o600)
        let inBackup = favourites(dir.file("s.backup"))
        #expect(inBackup >= 10 && inBackup <= 30)
        #expect(runBreeze(["--db", dir.file("s.backup"), "verify"]).code == 0, "the backup does not verify")
        add(30..<40)
        #expect(waitUntil(seconds: 60, pollMillis: 20) { favourites(dir.file("s.db")) == 40 }, "the later edits did not reach s")

        // s is lost; restored from the backup, it rejoins through p.
        s.signal(SIGKILL)
        _ = s.wait()
        let restored = runProgramWithErrors(breeze, ["--db", dir.file("s2.db"), "restore", "--from", dir.file("s.backup"), "--json"])
        #expect(restored.code == 0, "\(restored.err)")
        #expect(favourites(dir.file("s2.db")) == inBackup)
        let (s2, _) = startNode(db: dir.file("s2.db"), authority: cluster, peers: [pAddress], log: dir.file("s2.log"))
        defer { s2.signal(SIGTERM); _ = s2.wait() }
        #expect(waitUntil(seconds: 60, pollMillis: 20) { favourites(dir.file("s2.db")) == 40 },
                "the restored server did not take back what it missed: \(favourites(dir.file("s2.db"))) of 40")
        // Its own new events get ids nobody holds (a new epoch), and the two servers agree.
        #expect(runBreeze(["--db", dir.file("p.db"), "--user", "ana", "favourite", "add", "s40"]).code == 0)
        #expect(waitUntil(seconds: 60, pollMillis: 20) { favourites(dir.file("s2.db")) == 41 })
        let a = runBreeze(["--db", dir.file("s2.db"), "--user", "ana", "state", "--json"]).out
        let b = runBreeze(["--db", dir.file("p.db"), "--user", "ana", "state", "--json"]).out
        #expect(a == b)
    }

    /// A backup never overwrites: an existing output is refused naming it; a restore into a path that holds a
    /// database is refused; a backup of a path that is not a database says so.
    @Test func backupAndRestoreRefuseToOverwrite() throws {
        let dir = TempDir()
        #expect(runBreeze(["--db", dir.file("a.db"), "init"]).code == 0)
        #expect(runBreeze(["--db", dir.file("a.db"), "backup", "--out", dir.file("b.db")]).code == 0)
        let again = runProgramWithErrors(breeze, ["--db", dir.file("a.db"), "backup", "--out", dir.file("b.db")])
        #expect(again.code != 0 && again.err.contains("b.db") && again.err.contains("exists"), "\(again.err)")
        let onto = runProgramWithErrors(breeze, ["--db", dir.file("a.db"), "restore", "--from", dir.file("b.db")])
        #expect(onto.code != 0 && onto.err.contains("already here"), "\(onto.err)")
        let missing = runProgramWithErrors(breeze, ["--db", dir.file("nothing.db"), "backup", "--out", dir.file("c.db")])
        #expect(missing.code != 0 && access(dir.file("c.db"), F_OK) != 0, "\(missing.err)")
    }
}
