import Testing
import BreezeCore
@testable import BreezeStore

/// `ingest` and `append` write rows several per statement (`EventInserter`); these check that a large batch
/// mixing origins, duplicates (also of rows not yet written), a conflict and a gap gives exactly what one
/// event at a time gives, in the same order.
struct BatchedIngestTests {
    @Test func aLargeBatchWithDuplicatesConflictsAndGapsIngestsLikeOneEventAtATime() throws {
        let dir = TempDir()
        let a = try EventLog.create(at: dir.file("a.db"), options: testOptions())
        let b = try EventLog.create(at: dir.file("b.db"), options: testOptions())
        let fromA = try a.append((0..<100).map { (StreamID.user("ana"), EventBody.favouriteAdd(sensor: "a\($0)")) })
        let fromB = try b.append((0..<100).map { (StreamID.user("ana"), EventBody.unitSet($0 % 2 == 0 ? .celsius : .fahrenheit)) })
        let forged = Event(stream: .user("ana"), id: fromA[20].id, hlc: fromA[20].hlc, body: .favouriteAdd(sensor: "evil"))
        var batch: [Event] = []
        for i in 0..<100 {
            batch.append(fromA[i])
            if i != 60 { batch.append(fromB[i]) }          // B's 61st event is missing: the 39 after it are gaps
            if i == 10 { batch.append(fromA[10]) }         // a duplicate of a row still queued, not yet written
            if i == 40 { batch.append(fromA[5]) }          // a duplicate of a row already written
            if i == 30 { batch.append(forged) }            // same id as A's 21st, other content
        }
        let whole = try EventLog.create(at: dir.file("whole.db"), options: testOptions())
        let r = try whole.ingest(batch, source: "peer")
        #expect(r.inserted == 160 && r.duplicates == 2 && r.conflicts == 1 && r.gaps == 39)
        #expect(r.stored == batch.enumerated().filter { i, e in
            !(e == fromA[10] && batch[..<i].contains(e)) && !(e == fromA[5] && batch[..<i].contains(e))
                && e != forged && !fromB[60...].contains(e)
        }.map(\.1))

        let single = try EventLog.create(at: dir.file("single.db"), options: testOptions())
        var sum = EventLog.IngestReport()
        for e in batch {
            let one = try single.ingest([e], source: "peer")
            sum.inserted += one.inserted; sum.duplicates += one.duplicates; sum.conflicts += one.conflicts; sum.gaps += one.gaps
        }
        #expect([sum.inserted, sum.duplicates, sum.conflicts, sum.gaps] == [r.inserted, r.duplicates, r.conflicts, r.gaps])
        func rows(_ log: EventLog) throws -> [Event] {
            var out: [Event] = []
            try log.forEach { out.append($0.event); return true }
            return out
        }
        #expect(try rows(whole) == rows(single))
        #expect(try rows(whole) == r.stored)
        #expect(try whole.conflicts().map(\.offered) == [forged.encoded])
        #expect(try whole.conflicts().map(\.storedHash) == [fromA[20].hash])
        #expect(try whole.versionVector(of: .user("ana")) == VersionVector([a.origin: 100, b.origin: 60]))

        // The rest of B's events fill the gap.
        #expect(try whole.ingest(Array(fromB[60...])).inserted == 40)
        #expect(try whole.versionVector(of: .user("ana")) == VersionVector([a.origin: 100, b.origin: 100]))
        #expect(try whole.count() == 200)
        #expect(try single.ingest(Array(fromB[60...])).inserted == 40)
        #expect(try whole.userState(user: "ana").canonicalBytes == single.userState(user: "ana").canonicalBytes)
        #expect(try rows(whole) == rows(single))
    }

    @Test func groupsOfOneTransactionReportSeparatelyAndKeepArrivalOrder() throws {
        let dir = TempDir()
        let a = try EventLog.create(at: dir.file("a.db"), options: testOptions())
        let events = try a.append((0..<75).map { (StreamID.user("ana"), EventBody.favouriteAdd(sensor: "s\($0)")) })
        let target = try EventLog.create(at: dir.file("t.db"), options: testOptions())
        // Three peers' batches in one commit: the second repeats part of the first, the third goes on.
        let reports = try target.ingest(groups: [Array(events[0..<40]), Array(events[30..<50]), Array(events[50...])])
        #expect(reports.map(\.inserted) == [40, 10, 25])
        #expect(reports.map(\.duplicates) == [0, 10, 0])
        var seqs: [Int64] = [], stored: [Event] = []
        try target.forEach { seqs.append($0.seq); stored.append($0.event); return true }
        #expect(stored == events && seqs == Array(1...75))
    }

    @Test func appendWritesEveryRowOfBatchesAroundTheStatementSize() throws {
        let dir = TempDir()
        let log = try EventLog.create(at: dir.file("a.db"), options: testOptions())
        var appended: [Event] = []
        for n in [1, EventInserter.chunk - 1, EventInserter.chunk, EventInserter.chunk + 1, 3 * EventInserter.chunk + 5] {
            appended += try log.append((0..<n).map { (StreamID.user("ana"), EventBody.favouriteAdd(sensor: "n\(n)-\($0)")) })
        }
        var stored: [Event] = []
        try log.forEach { stored.append($0.event); return true }
        #expect(stored == appended)
        #expect(stored.map(\.id.counter) == Array(1...UInt64(appended.count)))
        #expect(try log.versionVector(of: .user("ana")) == VersionVector([log.origin: UInt64(appended.count)]))
    }

    /// Each group reports the sequence numbers its stored events took (duplicates, gaps and conflicts take
    /// none), so a node can step its scan over what one peer sent (`SyncSession.storedFromPeer`).
    @Test func eachGroupReportsTheSequenceNumbersItsStoredEventsTook() throws {
        let dir = TempDir()
        let a = try EventLog.create(at: dir.file("a.db"), options: testOptions())
        let b = try EventLog.create(at: dir.file("b.db"), options: testOptions())
        let fromA = try a.append((0..<10).map { (StreamID.user("ana"), EventBody.favouriteAdd(sensor: "a\($0)")) })
        let fromB = try b.append((0..<10).map { (StreamID.user("cy"), EventBody.favouriteAdd(sensor: "b\($0)")) })
        let log = try EventLog.create(at: dir.file("c.db"), options: testOptions())
        _ = try log.append([(StreamID.user("bo"), EventBody.favouriteAdd(sensor: "mine"))])
        let before = try log.lastSeq()
        // Group 0: 5 of A's and a duplicate; group 1: nothing new; group 2: B's first 3, then a gap.
        let reports = try log.ingest(groups: [Array(fromA[0..<5]) + [fromA[2]], [fromA[0]], Array(fromB[0..<3]) + [fromB[7]]],
                                     syncLater: false)
        #expect(reports.map(\.inserted) == [5, 0, 3])
        #expect(reports[0].seqs == (before + 1)...(before + 5))
        #expect(reports[1].seqs == nil)
        #expect(reports[2].seqs == (before + 6)...(before + 8))
        var seqOf: [EventID: Int64] = [:]
        try log.forEach { seqOf[$0.event.id] = $0.seq; return true }
        #expect(reports[0].stored.map { seqOf[$0.id]! } == Array((before + 1)...(before + 5)))
        #expect(reports[2].stored.map { seqOf[$0.id]! } == Array((before + 6)...(before + 8)))
    }
}
