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

    @Test func eventsUnderThisReplicasOwnOriginThatItNeverWroteAreRefused() throws {
        let dir = TempDir()
        let log = try EventLog.create(at: dir.file("a.db"), options: testOptions())
        let mine = try log.append(.favouriteAdd(sensor: "real"), to: .user("ana"))
        // Its own next counter, this incarnation and a later one: forged.
        let next = Self.event(log.replica, epoch: log.epoch, mine.id.counter + 1, "forged")
        let later = Self.event(log.replica, epoch: log.epoch + 1, 1, "forged")
        let r = try log.ingest([next, later, mine], source: "peer")
        #expect(r.forged == 2 && r.inserted == 0 && r.duplicates == 1 && r.refusedHostile)
        #expect(try log.count() == 1)
        // Its real next write takes the counter the forger tried.
        let real = try log.append(.favouriteAdd(sensor: "mine"), to: .user("ana"))
        #expect(real.id == next.id)
        // An older incarnation's events come back (a replica restored from a backup recovers them).
        let older = Self.event(log.replica, epoch: log.epoch - 1, 1, "from before the restore")
        if log.epoch > 1 {
            #expect(try log.ingest([older]).inserted == 1)
        }
    }

    @Test func aReplicaMayHaveAtMostABoundedNumberOfOriginsInAStream() throws {
        let dir = TempDir()
        let log = try EventLog.create(at: dir.file("a.db"), options: testOptions())
        let other = ReplicaID(rawValue: 0xABCDEF)
        let limit = EventLog.maxOriginsPerReplica
        // One event each from limit + 10 made-up incarnations, in two transactions (the bound counts both
        // what is stored and what this transaction started).
        let first = try log.ingest((1...UInt32(limit - 5)).map { Self.event(other, epoch: $0, 1) })
        #expect(first.inserted == limit - 5 && !first.refusedHostile)
        let second = try log.ingest((UInt32(limit - 4)...UInt32(limit + 10)).map { Self.event(other, epoch: $0, 1) } + [Self.event(other, epoch: 1, 2)])
        #expect(second.inserted == 5 + 1 && second.overOriginLimit == 10 && second.refusedHostile)
        #expect(try log.count() == limit + 1)
        // Another replica has its own allowance.
        #expect(try log.ingest([Self.event(ReplicaID(rawValue: 0x1234), epoch: 7, 1)]).inserted == 1)
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
