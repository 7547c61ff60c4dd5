import Testing
import BreezeCore
@preconcurrency import Glibc
@testable import BreezeStore
import BreezeTestSupport

/// `ingest` refuses what only a forger sends (`Protocol/sync.md` 6.6): events under this replica's own
/// origin that it never wrote, and more incarnations of one replica in a stream than any real one makes.
struct OriginGuardTests {
    static func event(_ replica: ReplicaID, epoch: UInt32, _ n: UInt64, _ sensor: String = "x") -> Event {
        Event(stream: .user("ana"), id: EventID(origin: Origin(replica: replica, epoch: epoch), counter: n),
              hlc: HLC(physicalMillis: 1_700_000_000_000, logical: UInt16(n)), body: .favouriteAdd(sensor: sensor))
    }

    @Test func eventsUnderThisReplicasCurrentOriginThatItNeverWroteAreRefused() throws {
        let dir = TempDir()
        let log = try EventLog.create(at: dir.file("a.db"), options: testOptions())
        let mine = try log.append(.favouriteAdd(sensor: "real"), to: .user("ana"))
        // Its own next counters in this incarnation: forged.
        let next = Self.event(log.replica, epoch: log.epoch, mine.id.counter + 1, "forged")
        let after = Self.event(log.replica, epoch: log.epoch, mine.id.counter + 2, "forged")
        let r = try log.ingest([next, after, mine], source: "peer")
        #expect(r.forged == 2 && r.inserted == 0 && r.duplicates == 1 && r.refusedHostile)
        #expect(try log.count() == 1)
        // Its real next write takes the counter the forger tried.
        let real = try log.append(.favouriteAdd(sensor: "mine"), to: .user("ana"))
        #expect(real.id == next.id)
        // Another incarnation's events come back (a replica restored from a backup recovers them).
        let other = log.epoch == UInt32.max ? log.epoch - 1 : log.epoch + 1
        let older = Self.event(log.replica, epoch: other, 1, "from before the restore")
        #expect(try log.ingest([older]).inserted == 1)
    }

    /// The restore the reviewer found: a backup made at epoch E, after which the replica ran as a later
    /// epoch and sent its events to the cluster. The restored copy, opened in a later boot, must not take
    /// that epoch again: the cluster's copies of those events then come back as another incarnation's,
    /// and its new writes get ids nobody holds.
    @Test func aReplicaRestoredFromABackupTakesBackWhatItSentAfterTheBackup() throws {
        let dir = TempDir()
        let path = dir.file("a.db"), backup = dir.file("backup.db")
        let log = try EventLog.create(at: path, options: testOptions(boot: "b1"))
        _ = try log.append(.favouriteAdd(sensor: "before"), to: .user("ana"))
        log.close()
        #expect(Glibc.system("cp '\(path)' '\(backup)'") == 0)
        let later = try EventLog.open(at: path, options: testOptions(boot: "b2"))
        let sent = try later.append(.favouriteAdd(sensor: "after the backup"), to: .user("ana"))
        later.close()
        let restored = try EventLog.open(at: backup, options: testOptions(boot: "b3"))
        #expect(restored.epoch != sent.id.origin.epoch)
        let back = try restored.ingest([sent], source: "cluster")
        #expect(back.inserted == 1 && !back.refusedHostile)
        let fresh = try restored.append(.favouriteAdd(sensor: "new"), to: .user("ana"))
        #expect(fresh.id != sent.id)
    }

    @Test func aReplicaMayHaveAtMostABoundedNumberOfOriginsInAStream() throws {
        let dir = TempDir()
        let log = try EventLog.create(at: dir.file("a.db"), options: testOptions())
        let other = ReplicaID(rawValue: 0xABCDEF)
        let limit = EventLog.maxOriginsPerReplica
        // One event each from limit + 10 made-up incarnations, in two transactions (the bound counts both
        // what is stored and what this transaction started).
        let first = try log.ingest(groups: [(1...UInt32(limit - 5)).map { Self.event(other, epoch: $0, 1) }], fromDevice: [true])[0]
        #expect(first.inserted == limit - 5 && !first.refusedHostile)
        let second = try log.ingest(groups: [(UInt32(limit - 4)...UInt32(limit + 10)).map { Self.event(other, epoch: $0, 1) } + [Self.event(other, epoch: 1, 2)]],
                                    fromDevice: [true])[0]
        #expect(second.inserted == 5 + 1 && second.overOriginLimit == 10 && second.refusedHostile)
        #expect(try log.count() == limit + 1)
        // Another replica has its own allowance.
        #expect(try log.ingest(groups: [[Self.event(ReplicaID(rawValue: 0x1234), epoch: 7, 1)]], fromDevice: [true])[0].inserted == 1)
        // The cluster (and a file) relays whatever exists: two servers that each took a different set from
        // a hostile device must still converge.
        let relayed = try log.ingest((UInt32(limit + 11)...UInt32(limit + 20)).map { Self.event(other, epoch: $0, 1) })
        #expect(relayed.inserted == 10 && !relayed.refusedHostile)
    }
}

/// A new database, and its WAL and shared-memory files, are readable by their owner only (issue 18: every
/// database was world-readable, favourites and glucose readings with it), whatever the umask.
struct DatabaseModeTests {
    @Test func aNewDatabaseAndItsWALAreModeSixHundred() throws {
        let dir = TempDir()
        let old = umask(0o022)
        defer { umask(old) }
        let log = try EventLog.create(at: dir.file("a.db"), options: testOptions())
        _ = try log.append(.favouriteAdd(sensor: "131075"), to: .user("ana"))
        #expect(fileMode(dir.file("a.db")) == 0o600)
        #expect(fileMode(dir.file("a.db-wal")) == 0o600)
        #expect(fileMode(dir.file("a.db-shm")) == 0o600)
        log.close()
    }
}
