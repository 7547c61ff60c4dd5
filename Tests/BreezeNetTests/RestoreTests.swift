import Testing
import BreezeCore
import BreezeStore
import BreezeSync
import BreezeTestSupport
@preconcurrency import Glibc

/// A database restored from a backup within the same boot (so no new epoch at open) while the cluster holds
/// what the replica wrote after the backup: real `breeze node` processes on 127.0.0.1.
@Suite(.serialized)
struct RestoreTests {
    static func favourites(_ c: Cluster, _ name: String) -> String {
        c.cli(name, ["--user", "ana", "state", "--json"]).out
    }

    /// Copies a stopped replica's database files (`db`, and its WAL and shared memory if any) from `from` to `to`.
    static func copyDatabase(_ from: String, _ to: String) {
        for suffix in ["", "-wal", "-shm"] {
            unlink(to + suffix)
            if access(from + suffix, F_OK) == 0 { writeFileBytes(to + suffix, readFileBytes(from + suffix)) }
        }
        chmod(to, 0o600)
    }

    @Test func aReplicaRestoredInTheSameBootStartsANewEpochAndTakesBackWhatItHadSent() throws {
        let c = Cluster()
        for n in ["server", "phone"] { _ = c.cli(n, ["init"]) }
        let server = c.start("server")
        c.start("phone", peers: [server], scope: .user("ana"))
        #expect(c.cli("phone", ["--user", "ana", "favourite", "add", "before-backup"]).code == 0)
        #expect(waitUntil(seconds: 10) { Self.favourites(c, "server").contains("before-backup") })
        c.stop("phone")
        let backup = c.dir.file("phone-backup.db")
        Self.copyDatabase(c.db("phone"), backup)
        let epochBefore = DeviceAttackTests.origin(c, "phone").epoch
        // After the backup: two more edits reach the server.
        c.start("phone", peers: [server], scope: .user("ana"))
        for f in ["after-backup-1", "after-backup-2"] { #expect(c.cli("phone", ["--user", "ana", "favourite", "add", f]).code == 0) }
        #expect(waitUntil(seconds: 10) { Self.favourites(c, "server").contains("after-backup-2") })
        c.stop("phone")
        // The backup comes back, in the same boot: it opens in the epoch it had.
        Self.copyDatabase(backup, c.db("phone"))
        #expect(DeviceAttackTests.origin(c, "phone").epoch == epochBefore)
        c.start("phone", peers: [server], scope: .user("ana"))
        let restored = waitUntil(seconds: 10) {
            c.logText("phone").contains("restored from a backup") && Self.favourites(c, "phone").contains("after-backup-2")
        }
        #expect(restored, "phone log: \(c.logText("phone"))")
        let epochAfter = DeviceAttackTests.origin(c, "phone").epoch
        #expect(epochAfter != epochBefore)
        // A new edit gets an id nobody holds: both sides converge, with no conflict anywhere.
        #expect(c.cli("phone", ["--user", "ana", "favourite", "add", "after-restore"]).code == 0)
        let converged = waitUntil(seconds: 10) {
            Self.favourites(c, "server").contains("after-restore") && Self.favourites(c, "server") == Self.favourites(c, "phone")
        }
        #expect(converged, "server \(Self.favourites(c, "server")), phone \(Self.favourites(c, "phone"))")
        for n in ["server", "phone"] {
            let v = c.verify(n)
            #expect(v.code == 0 && v.out.contains("clean"), "\(n): \(v.out)")
            let log = try EventLog.open(at: c.db(n))
            #expect(try log.conflicts().isEmpty, "\(n): conflicts recorded")
            log.close()
        }
        print("RESTORE same_boot epoch_before=\(epochBefore) epoch_after=\(epochAfter) taken_back=\(restored) converged=\(converged)")
    }
}
