import Testing
import BreezeCore
@testable import BreezeStore
import Glibc

struct EventLogTests {
    @Test func appendAssignsContiguousCountersPerStreamAndReadsBackInOrder() throws {
        let dir = TempDir()
        let log = try EventLog.create(at: dir.file("a.db"), options: testOptions())
        let batch: [(StreamID, EventBody)] = [
            (.user("ana"), .favouriteAdd(sensor: "1")), (.public, .reading(Reading(source: "aqs", sensor: "s", time: 1, values: []))),
            (.user("ana"), .unitSet(.fahrenheit)), (.user("bo"), .favouriteAdd(sensor: "2")),
        ]
        let events = try log.append(batch)
        #expect(events.map(\.id.counter) == [1, 1, 2, 1])
        #expect(Set(events.map(\.id.origin)) == [log.origin])
        #expect(zip(events, events.dropFirst()).allSatisfy { $0.hlc < $1.hlc })
        let more = try log.append(.favouriteAdd(sensor: "3"), to: .user("ana"))
        #expect(more.id.counter == 3 && more.hlc > events.last!.hlc)
        #expect(try log.versionVector(of: .user("ana")) == VersionVector([log.origin: 3]))
        #expect(try log.versionVector(of: .public) == VersionVector([log.origin: 1]))
        #expect(try log.versionVector(of: .health("ana")) == VersionVector())
        let read = try log.events(in: .user("ana")).events
        #expect(read == [events[0], events[2], more])
        #expect(try log.count() == 5)
        #expect(try log.streams() == [.public, .user("ana"), .user("bo")])
    }

    @Test func anEventInTheWrongKindOfStreamIsRefusedAndNothingIsStored() throws {
        let dir = TempDir()
        let log = try EventLog.create(at: dir.file("a.db"), options: testOptions())
        expectStoreError(.invalidAppend) {
            try log.append([(.user("ana"), .favouriteAdd(sensor: "1")), (.public, .favouriteAdd(sensor: "1"))])
        }
        #expect(try log.count() == 0)
    }

    @Test func ingestIsIdempotentAndRefusesConflictsAndGapsWithoutOverwriting() throws {
        let dir = TempDir()
        let a = try EventLog.create(at: dir.file("a.db"), options: testOptions())
        let b = try EventLog.create(at: dir.file("b.db"), options: testOptions())
        let sent = try (1...5).map { try a.append(.favouriteAdd(sensor: "s\($0)"), to: .user("ana")) }
        var r = try b.ingest(sent, source: "a")
        #expect(r.inserted == 5 && r.duplicates == 0)
        r = try b.ingest(sent + sent.reversed(), source: "a")
        #expect(r.inserted == 0 && r.duplicates == 10 && r.conflicts == 0)
        // Same id, different content: refused, recorded, original kept.
        let forged = Event(stream: .user("ana"), id: sent[2].id, hlc: sent[2].hlc, body: .favouriteAdd(sensor: "evil"))
        r = try b.ingest([forged], source: "mallory")
        #expect(r.conflicts == 1 && r.inserted == 0)
        let conflicts = try b.conflicts()
        #expect(conflicts.count == 1 && conflicts[0].eventID == sent[2].id.description && conflicts[0].source == "mallory")
        #expect(conflicts[0].offered == forged.encoded && conflicts[0].storedHash == sent[2].hash)
        #expect(try b.events(in: .user("ana")).events == sent)
        // A gap (counter 7 before 6) is refused; once 6 arrives, 7 is accepted.
        let e6 = try a.append(.favouriteAdd(sensor: "s6"), to: .user("ana"))
        let e7 = try a.append(.favouriteAdd(sensor: "s7"), to: .user("ana"))
        r = try b.ingest([e7])
        #expect(r.gaps == 1 && r.inserted == 0)
        r = try b.ingest([e6, e7])
        #expect(r.inserted == 2)
        #expect(try b.versionVector(of: .user("ana")) == a.versionVector(of: .user("ana")))
        #expect(try b.userState(user: "ana").canonicalBytes == a.userState(user: "ana").canonicalBytes)
    }

    @Test func misplacedRemoteEventsAreKeptFlaggedSoTheirOriginDoesNotStall() throws {
        let dir = TempDir()
        let b = try EventLog.create(at: dir.file("b.db"), options: testOptions())
        let o = Origin(replica: ReplicaID(rawValue: 77), epoch: 1)
        let bad = Event(stream: .public, id: EventID(origin: o, counter: 1), hlc: HLC(rawValue: 1), body: .favouriteAdd(sensor: "x"))
        let next = Event(stream: .public, id: EventID(origin: o, counter: 2), hlc: HLC(rawValue: 2),
                         body: .reading(Reading(source: "a", sensor: "b", time: 1, values: [])))
        let r = try b.ingest([bad, next])
        #expect(r.invalid == 1 && r.inserted == 2 && r.gaps == 0)
        #expect(try b.versionVector(of: .public) == VersionVector([o: 2]))
        let flags = try b.db.prepare("SELECT flags FROM events ORDER BY seq")
        var seen: [Int64] = []
        while try flags.step() { seen.append(flags.int(0)) }
        #expect(seen == [2, 0])
    }

    @Test func anEventTooLargeToDecodeIsNeverAppended() throws {
        let dir = TempDir()
        let log = try EventLog.create(at: dir.file("a.db"), options: testOptions())
        let huge = String(repeating: "x", count: Event.maxEncodedSize)
        expectStoreError(.invalidAppend) { try log.append(.sourceCorrect(source: "purpleair", correction: huge), to: .user("u")) }
        #expect(try log.count() == 0)
    }

    @Test func aSchemaTwoDatabaseIsMigratedToTheCurrentSchema() throws {
        let dir = TempDir()
        let path = dir.file("old.db")
        let db = try Database(path: path, create: true)
        try db.execute("PRAGMA journal_mode=WAL")
        try db.execute(Schema.migrations[0])
        try db.execute(Schema.migrations[1])
        try db.execute("INSERT INTO meta(key, value) VALUES ('replica', 5), ('epoch', 0), ('hlc', 0)")
        try db.execute("PRAGMA application_id=\(Schema.applicationID); PRAGMA user_version=2")
        db.close()
        let log = try EventLog.open(at: path, options: testOptions())
        #expect(try log.db.scalarInt("PRAGMA user_version") == Schema.current)
        #expect(try log.appendFacts([(.public, .reading(Reading(source: "a", sensor: "b", time: 1, values: [Measurement("pm25", 1)])))]).storedFacts == 1)
    }

    @Test func unknownEventTypesAreStoredAndRelayedUnchanged() throws {
        let dir = TempDir()
        let b = try EventLog.create(at: dir.file("b.db"), options: testOptions())
        let c = try EventLog.create(at: dir.file("c.db"), options: testOptions())
        let o = Origin(replica: ReplicaID(rawValue: 99), epoch: 4)
        let future = Event(stream: .user("ana"), id: EventID(origin: o, counter: 1), hlc: HLC(physicalMillis: 1, logical: 0),
                           type: "favourite.add", schemaVersion: 9, payload: [0xde, 0xad])
        let radon = Event(stream: .public, id: EventID(origin: o, counter: 1), hlc: HLC(physicalMillis: 2, logical: 0),
                          type: "radon.reading", schemaVersion: 1, payload: [1, 2, 3])
        #expect(try b.ingest([future, radon]).inserted == 2)
        var relayed: [Event] = []
        for s in try b.streams() { relayed += try b.events(in: s).events }
        #expect(try c.ingest(relayed).inserted == 2)
        var atC: [[UInt8]] = []
        for s in try c.streams() { atC += try c.events(in: s).events.map(\.encoded) }
        #expect(Set(atC) == [future.encoded, radon.encoded])
        #expect(try c.userState(user: "ana").skippedUnknown == 1)
    }

    @Test func readingAfterAVersionVectorPagesThroughOnlyWhatIsMissing() throws {
        let dir = TempDir()
        let a = try EventLog.create(at: dir.file("a.db"), options: testOptions())
        let mine = try a.append((1...250).map { (StreamID.public, EventBody.reading(Reading(source: "x", sensor: "s", time: Int64($0), values: []))) })
        let other = Origin(replica: ReplicaID(rawValue: 5), epoch: 1)
        let theirs = (1...40).map { Event(stream: .public, id: EventID(origin: other, counter: UInt64($0)),
                                          hlc: HLC(rawValue: UInt64($0)), body: .reading(Reading(source: "y", sensor: "t", time: Int64($0), values: []))) }
        _ = try a.ingest(theirs)
        let peerHas = VersionVector([a.origin: 100, other: 40])
        var got: [Event] = [], after: Int64 = 0, pages = 0
        while true {
            let page = try a.events(in: .public, notIn: peerHas, afterSeq: after, limit: 64)
            got += page.events
            pages += 1
            guard let next = page.nextSeq else { break }
            after = next
        }
        #expect(got == Array(mine[100...]))
        #expect(pages == 5)
    }

    @Test func farFutureRemoteTimestampsAreStoredFlaggedAndDoNotDragTheClockOfOtherStreams() throws {
        let dir = TempDir()
        let wall: UInt64 = 1_700_000_000_000
        var o = testOptions(wall: wall)
        o.maxSkewMillis = 60_000
        let log = try EventLog.create(at: dir.file("a.db"), options: o)
        let origin = Origin(replica: ReplicaID(rawValue: 3), epoch: 1)
        let future = Event(stream: .user("ana"), id: EventID(origin: origin, counter: 1),
                           hlc: HLC(physicalMillis: wall + 48 * 3_600_000, logical: 0), body: .unitSet(.fahrenheit))
        let r = try log.ingest([future])
        #expect(r.inserted == 1 && r.skewed == 1)
        #expect(try log.clock().physicalMillis <= wall + 60_000)
        var flagged: [Bool] = []
        try log.forEach { flagged.append($0.skewed); return true }
        #expect(flagged == [true])
        #expect(try log.aheadOfClock(in: .user("ana")) == future.hlc)
        // A stream that holds no flagged event is written at local time: the far future stays contained.
        let elsewhere = try log.append(.unitSet(.celsius), to: .user("bo"))
        #expect(elsewhere.hlc.physicalMillis <= wall + 60_000)
        // A write to the stream that does supersedes the value it replaces: it is stamped after it and wins.
        let local = try log.append(.unitSet(.celsius), to: .user("ana"))
        #expect(local.hlc > future.hlc && local.hlc > elsewhere.hlc)
        #expect(try log.userState(user: "ana").effectiveUnit == .celsius)
        #expect(try log.clock() == local.hlc)
    }

    /// A device's event let through past the 24-hour bound (one superseding a far-ahead value) lifts the
    /// stream's floor no further than that bound, so the next one cannot go further still.
    @Test func aDevicesEventRaisesTheAheadFloorOnlyToTheDeviceBound() throws {
        let dir = TempDir()
        let wall: UInt64 = 1_700_000_000_000
        let log = try EventLog.create(at: dir.file("a.db"), options: testOptions(wall: wall))
        func event(_ replica: UInt64, _ ahead: UInt64) -> Event {
            Event(stream: .user("ana"), id: EventID(origin: Origin(replica: ReplicaID(rawValue: replica), epoch: 1), counter: 1),
                  hlc: HLC(physicalMillis: wall + ahead, logical: 0), body: .unitSet(.fahrenheit))
        }
        let bound = HLC(physicalMillis: wall + HybridClock.deviceMaxAheadMillis, logical: .max)
        _ = try log.ingest(groups: [[event(3, 48 * 3_600_000)]], fromDevice: [true])
        #expect(try log.aheadOfClock(in: .user("ana")) == bound)
        _ = try log.ingest(groups: [[event(4, 2 * 3_600_000)]], fromDevice: [true])
        #expect(try log.aheadOfClock(in: .user("ana")) == bound)
        // From the cluster the floor follows the value, as before.
        let far = event(5, 72 * 3_600_000)
        _ = try log.ingest([far])
        #expect(try log.aheadOfClock(in: .user("ana")) == far.hlc)
    }

    @Test func theClockNeverRunsBackwardsAcrossReopensWithAWallClockSteppedBack() throws {
        let dir = TempDir()
        let wall: UInt64 = 1_700_000_000_000
        let hour: UInt64 = 3_600_000
        var stamps: [HLC] = []
        // The same database opened by processes whose clocks are +48 h, 0, -6 h, +48 h, -6 h off.
        for w in [wall + 48 * hour, wall, wall - 6 * hour, wall + 48 * hour, wall - 6 * hour] {
            let log = try EventLog.create(at: dir.file("a.db"), options: testOptions(wall: w))
            let reading = Reading(source: "s", sensor: "1", time: Int64(stamps.count), values: [])
            stamps += try log.append([(.user("ana"), .favouriteAdd(sensor: "x")), (.public, .reading(reading))]).map(\.hlc)
            log.close()
        }
        #expect(zip(stamps, stamps.dropFirst()).allSatisfy { $0 < $1 }, "\(stamps)")
        #expect(stamps.last!.physicalMillis == wall + 48 * hour)
    }

    @Test func aNewRandomEpochStartsOnlyWhenTheBootChangesOrIsUnknown() throws {
        let dir = TempDir()
        let path = dir.file("a.db")
        let first = try EventLog.create(at: path, options: testOptions(boot: "b1"))
        #expect(first.epoch >= 1)
        let e1 = try first.append(.favouriteAdd(sensor: "x"), to: .user("ana"))
        first.close()
        let same = try EventLog.open(at: path, options: testOptions(boot: "b1"))
        #expect(same.epoch == first.epoch && same.replica == first.replica)
        same.close()
        let rebooted = try EventLog.open(at: path, options: testOptions(boot: "b2"))
        #expect(rebooted.epoch != first.epoch && rebooted.replica == first.replica)
        let e2 = try rebooted.append(.favouriteAdd(sensor: "y"), to: .user("ana"))
        #expect(e2.id.counter == 1 && e2.id.origin.epoch == rebooted.epoch && e2.id != e1.id)
        rebooted.close()
        let unknown = try EventLog.open(at: path, options: testOptions(boot: nil))
        #expect(![first.epoch, rebooted.epoch].contains(unknown.epoch))
        #expect(try unknown.versionVector(of: .user("ana")).counters.count == 2)
    }

    @Test func aFileThatIsNotSQLiteIsRefusedAndLeftUntouched() throws {
        let dir = TempDir()
        let path = dir.file("notes.txt")
        let content = Array("these are my notes, not a database\n".utf8) + [UInt8](repeating: 7, count: 5000)
        writeFileBytes(path, content)
        for create in [false, true] {
            expectStoreError(.notBreeze) {
                _ = create ? try EventLog.create(at: path, options: testOptions()) : try EventLog.open(at: path, options: testOptions())
            }
        }
        #expect(readFileBytes(path) == content)
        #expect(access(path + "-wal", 0) != 0)
    }

    @Test func anotherApplicationsSQLiteDatabaseIsRefusedAndLeftUntouched() throws {
        let dir = TempDir()
        let path = dir.file("other.db")
        let db = try Database(path: path, create: true)
        try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
        db.close()
        let before = readFileBytes(path)
        expectStoreError(.notBreeze) { _ = try EventLog.create(at: path, options: testOptions()) }
        #expect(readFileBytes(path) == before)
    }

    @Test func aDatabaseFromANewerBreezeIsRefusedWithAClearMessage() throws {
        let dir = TempDir()
        let path = dir.file("new.db")
        try EventLog.create(at: path, options: testOptions()).close()
        let db = try Database(path: path, create: false)
        try db.execute("PRAGMA user_version=99")
        db.close()
        do {
            _ = try EventLog.open(at: path, options: testOptions())
            Issue.record("opened a newer schema")
        } catch {
            #expect(error ~= StoreError.newerSchema)
            #expect(error.description.contains("newer Breeze") && error.description.contains("99"))
        }
    }

    @Test func openingAMissingFileFailsWithoutCreatingIt() {
        let dir = TempDir()
        let path = dir.file("nope.db")
        expectStoreError(.missing) { _ = try EventLog.open(at: path, options: testOptions()) }
        #expect(access(path, 0) != 0)
    }

    @Test func theClockIsSharedByConnectionsToOneDatabase() throws {
        let dir = TempDir()
        let path = dir.file("a.db")
        let a = try EventLog.create(at: path, options: testOptions(wall: 5_000))
        let b = try EventLog.open(at: path, options: testOptions(wall: 1_000))   // its wall clock lags
        let e1 = try a.append(.unitSet(.celsius), to: .user("u"))
        let e2 = try b.append(.unitSet(.fahrenheit), to: .user("u"))
        #expect(e2.hlc > e1.hlc)
        #expect(e2.id.counter == 2)
        #expect(try a.userState(user: "u").effectiveUnit == .fahrenheit)
    }
}
