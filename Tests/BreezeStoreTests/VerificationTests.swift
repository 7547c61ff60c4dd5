import Testing
import BreezeCore
@testable import BreezeStore

/// `EventLog.verify(at:)`: a sound database is clean, and each kind of damage, made by raw SQL on a copy, is
/// reported with what and where; the database verified is never written.
struct VerificationTests {
    /// A log with user edits, readings of two origins (one remote), and a projection checkpoint in the middle.
    static func makeLog(_ path: String) throws -> EventLog {
        let log = try EventLog.create(at: path, options: testOptions())
        try log.append(.favouriteAdd(sensor: "131075"), to: .user("me"))
        try log.append(.unitSet(.fahrenheit), to: .user("me"))
        try log.append(.sensorRegistered(SensorRegistration(sensor: "1", name: "Troy", source: "purpleair", kind: "purpleair",
                                                            latitude: 42.7, longitude: -73.7, timeZone: nil)), to: .public)
        for i in 0..<10 {
            try log.append(.reading(Reading(source: "purpleair", sensor: "1", time: Int64(1_698_000_000 + i * 600),
                                            values: [Measurement("pm25_cf1_a", Double(i))])), to: .public)
        }
        let remote = Origin(replica: ReplicaID(rawValue: 0xB2), epoch: 1)
        var theirs: [Event] = []
        for c in 1...5 {
            let reading = Reading(source: "purpleair", sensor: "1", time: Int64(1_698_000_000 + c * 600),
                                  values: [Measurement("humidity", Double(40 + c))])
            let hlc = HLC(physicalMillis: 1_600_000_000_000 + UInt64(c), logical: 0)
            theirs.append(Event(stream: .public, id: EventID(origin: remote, counter: UInt64(c)), hlc: hlc, body: .reading(reading)))
        }
        _ = try log.ingest(theirs)
        try log.catchUpProjection()
        try log.append(.favouriteAdd(sensor: "after-checkpoint"), to: .user("me"))   // the checkpoint lags the log
        return log
    }

    static func seq(of log: EventLog, where condition: String) throws -> Int64 {
        try log.db.scalarInt("SELECT seq FROM events WHERE \(condition) ORDER BY seq LIMIT 1")!
    }

    @Test func aSoundDatabaseIsCleanAndIsNotWrittenByVerifying() throws {
        let dir = TempDir()
        let path = dir.file("a.db")
        let log = try Self.makeLog(path)
        let before = readFileBytes(path)
        let r = try EventLog.verify(at: path)
        #expect(r.isClean, "\(r.problems)")
        #expect(r.events == 19 && r.lastSeq == 19 && r.streams == 2 && r.origins == 3)
        guard case .equal(let seq, let digest) = r.projection else { Issue.record("projection: \(r.projection)"); return }
        #expect(seq == 18)
        #expect(digest == (try log.projectionDigest()))
        #expect(readFileBytes(path) == before, "verify wrote to the database")
        #expect(try log.count() == 19)
        log.close()
    }

    @Test func corruptedBytesAndAChangedHashAreReportedWithTheirSeqAndID() throws {
        let dir = TempDir()
        let path = dir.file("a.db")
        let log = try Self.makeLog(path)
        let a = try Self.seq(of: log, where: "type = 'reading' AND counter = 4")
        let b = try Self.seq(of: log, where: "type = 'unit.set'")
        // One payload byte flipped; one hash overwritten.
        try log.db.execute("UPDATE events SET data = substr(data, 1, 30) || x'EE' || substr(data, 32) WHERE seq = \(a)")
        try log.db.execute("UPDATE events SET data = substr(data, 1, length(data) - 16) || zeroblob(16) WHERE seq = \(b)")
        let origin = log.origin
        log.close()
        let r = try EventLog.verify(at: path)
        #expect(!r.isClean)
        let hashes = r.problems.filter { $0.kind == .hash }
        #expect(hashes.map(\.seq) == [b, a], "\(r.problems)")
        #expect(hashes.first?.eventID == "\(origin):2" && hashes.first?.stream == "user:me")
        #expect(hashes.last?.eventID == "\(origin):4" && hashes.last?.stream == "public")
        #expect(hashes.first?.message.contains("stored 00000000000000000000000000000000") == true)
        #expect(r.problems.count == 2, "\(r.problems)")
        if case .skipped = r.projection {} else { Issue.record("a rebuild cannot read undecodable events: \(r.projection)") }
    }

    @Test func aDeletedMiddleEventIsAGapAndADeletedLastEventDisagreesWithTheVersionVector() throws {
        let dir = TempDir()
        let path = dir.file("a.db")
        let log = try Self.makeLog(path)
        let middle = try Self.seq(of: log, where: "type = 'reading' AND counter = 6")
        let next = try Self.seq(of: log, where: "type = 'reading' AND counter = 7")
        let last = try Self.seq(of: log, where: "origin = \(0xB2) AND counter = 5")
        try log.db.execute("DELETE FROM events WHERE seq IN (\(middle), \(last))")
        log.close()
        let r = try EventLog.verify(at: path)
        let gap = r.problems.first { $0.kind == .gap }
        #expect(gap?.seq == next && gap?.stream == "public" && gap?.message.contains("counter 6 is missing") == true, "\(r.problems)")
        #expect(gap?.message.contains("between seq \(middle - 1) and seq \(next)") == true, "\(gap?.message ?? "")")
        let head = r.problems.first { $0.kind == .head }
        #expect(head?.message.contains("claims counters up to 5 of origin 00000000000000b2.1, but the highest held is 4") == true, "\(r.problems)")
        #expect(r.problems.filter { $0.kind != .projection }.count == 2, "\(r.problems)")
        // Both events were projected before they were deleted: the checkpoint no longer matches the log.
        if case .different = r.projection {} else { Issue.record("projection: \(r.projection)") }
    }

    @Test func aTamperedProjectionRowIsLocatedByItsKey() throws {
        let dir = TempDir()
        let path = dir.file("a.db")
        let log = try Self.makeLog(path)
        try log.db.execute("UPDATE proj_sensors SET name = 'Tampered' WHERE sensor = '1'")
        try log.db.execute("DELETE FROM proj_readings WHERE hour = \((1_698_000_000 + 3 * 600) / 3600)")   // that reading's hour
        log.close()
        let r = try EventLog.verify(at: path)
        guard case .different(let seq, _, _) = r.projection else { Issue.record("\(r.projection)"); return }
        #expect(seq == 18)
        let rows = r.problems.filter { $0.kind == .projection }.map(\.message)
        #expect(rows.contains("proj_sensors (source=purpleair, sensor=1): the stored row differs from the rebuilt one"), "\(rows)")
        #expect(rows.contains("proj_readings (source=purpleair, sensor=1, hour=\((1_698_000_000 + 3 * 600) / 3600)): a row a rebuild produces is missing from the stored projection"), "\(rows)")
        #expect(r.problems.allSatisfy { $0.kind == .projection })
    }

    @Test func conflictsMisplacedEventsColumnsAndTheClockAreReported() throws {
        let dir = TempDir()
        let path = dir.file("a.db")
        let log = try Self.makeLog(path)
        // A peer offers our own event 1 of user:me with other content: a conflict, recorded by ingest.
        let mine = try log.event(EventID(origin: log.origin, counter: 1), in: .user("me"))!
        let forged = Event(stream: .user("me"), id: mine.id, hlc: mine.hlc, body: .favouriteAdd(sensor: "forged"))
        #expect(try log.ingest([forged], source: "10.0.0.9:7001").conflicts == 1)
        // A misplaced event stored flagged (as ingest does): a note, not a problem.
        let o = Origin(replica: ReplicaID(rawValue: 0xC3), epoch: 1)
        _ = try log.ingest([Event(stream: .public, id: EventID(origin: o, counter: 1), hlc: HLC(rawValue: 5), body: .favouriteAdd(sensor: "x"))])
        #expect(try EventLog.verify(at: path).problems.map(\.kind) == [.conflict])
        // Damage: the flag cleared, a column changed, the clock set back.
        let misplaced = try Self.seq(of: log, where: "origin = \(0xC3)")
        try log.db.execute("UPDATE events SET flags = 0 WHERE seq = \(misplaced)")
        let reading = try Self.seq(of: log, where: "type = 'reading'")
        try log.db.execute("UPDATE events SET hlc = 42 WHERE seq = \(reading)")
        try log.db.execute("UPDATE meta SET value = 1 WHERE key = 'hlc'")
        log.close()
        let r = try EventLog.verify(at: path)
        let byKind = Dictionary(grouping: r.problems, by: \.kind)
        #expect(byKind[.conflict]?.first?.eventID == mine.id.description && byKind[.conflict]?.first?.stream == "user:me")
        #expect(byKind[.conflict]?.first?.message.contains("offered with hash \(forged.hashHex) by 10.0.0.9:7001") == true)
        #expect(byKind[.stream]?.first?.seq == misplaced && byKind[.stream]?.first?.message.contains("not flagged") == true)
        #expect(byKind[.columns]?.first?.seq == reading && byKind[.columns]?.first?.message.contains("hlc column 0.42") == true)
        #expect(byKind[.clock]?.count == 1)
        #expect(r.problems.count == 4, "\(r.problems)")
    }

    @Test func whatIsNotABreezeDatabaseIsRefusedUntouched() throws {
        let dir = TempDir()
        expectStoreError(.missing) { _ = try EventLog.verify(at: dir.file("none.db")) }
        writeFileBytes(dir.file("text.db"), Array("hello, not sqlite at all, just some text to fill a page".utf8))
        expectStoreError(.notBreeze) { _ = try EventLog.verify(at: dir.file("text.db")) }
        #expect(readFileBytes(dir.file("text.db")) == Array("hello, not sqlite at all, just some text to fill a page".utf8))
    }
}
