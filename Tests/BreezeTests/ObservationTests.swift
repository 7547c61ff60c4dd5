import Testing
@testable import Breeze
import BreezeTestSupport
@preconcurrency import Glibc

/// Live observation: the first value at once, a new value after every commit that changes it (from this
/// process, from another process, from a peer), no duplicates, the latest value for a slow consumer, and
/// subscriptions that end with their consumer.
struct ObservationTests {
    @Test func theFirstValueComesAtOnceThenOneAfterEachChangingCommit() throws {
        let dir = TempDir()
        let r = try Replica(path: dir.file("a.db"))
        let favourites = Collected(r.observe { try $0.state(user: "me").favourites.elements })
        #expect(favourites.wait(count: 1) == [[]])
        try r.addFavourite("131075")
        try r.addFavourite("149970")
        #expect(favourites.wait { $0 == ["131075", "149970"] })
        let seen = favourites.all
        #expect(seen.first == [] && seen.last == ["131075", "149970"] && seen.count <= 3)
        for (a, b) in zip(seen, seen.dropFirst()) { #expect(a != b, "no value twice in a row: \(seen)") }
    }

    @Test func aCommitThatLeavesTheValueEqualYieldsNothing() throws {
        let dir = TempDir()
        let r = try Replica(path: dir.file("a.db"))
        let unit = Collected(r.observe { try $0.state(user: "me").effectiveUnit })
        #expect(unit.wait(count: 1) == [.celsius])
        try r.setUnit(.celsius)               // a new event, the same value
        try r.addFavourite("131075")          // a new event that does not touch the unit
        usleep(200_000)
        #expect(unit.all == [.celsius], "equal values are not yielded")
        try r.setUnit(.fahrenheit)
        #expect(unit.wait { $0 == .fahrenheit })
        #expect(unit.all == [.celsius, .fahrenheit])
    }

    @Test func aScreenIsObservedAndItsStarFlips() throws {
        let dir = TempDir()
        let r = try Replica(path: dir.file("a.db"))
        _ = try r.importFile(Fixtures.troySensors, format: "sensors-csv")
        let sheet = Collected(r.observe(SheetScreen.self, r.parameters(now: 1_698_400_000, sensor: "149970")))
        #expect(sheet.wait(count: 1).map(\.isFavourite) == [false])
        try r.addFavourite("149970")
        #expect(sheet.wait { $0.isFavourite })
        try r.removeFavourite("149970")
        #expect(sheet.wait(count: 3).map(\.isFavourite) == [false, true, false])
    }

    @Test func aCommitByAnotherProcessIsNoticedWithoutPolling() throws {
        let dir = TempDir()
        let db = dir.file("a.db")
        let r = try Replica(path: db)
        r.observers.safetyMillis = 600_000      // no safety-net poll during the test: only inotify can tell
        let favourites = Collected(r.observeState())
        _ = favourites.wait(count: 1)
        // Wait for each edit of another process before making the next, and time how long it takes to show.
        var delays: [Double] = []
        for i in 0..<5 {
            #expect(runBreeze(["--db", db, "favourite", "add", "p\(i)"]).code == 0)
            let t1 = now()
            #expect(favourites.wait(seconds: 5) { $0.favourites.contains("p\(i)") }, "edit \(i) of another process")
            delays.append(now() - t1)
        }
        // Each edit showed within 5 s though nothing polled for 10 minutes: inotify on the WAL noticed it.
        #expect(delays.count == 5 && delays.allSatisfy { $0 < 5 }, "\(delays)")
    }

    @Test(.timeLimit(.minutes(5)))   // async: a suite of blocking tests can hold the cooperative pool for a while
    func aSlowConsumerGetsTheLatestValueNotABacklog() async throws {
        let dir = TempDir()
        let r = try Replica(path: dir.file("a.db"))
        let sequence = r.observe { try $0.state(user: "me").favourites.elements.count }
        var it = sequence.makeAsyncIterator()
        #expect(try await it.next() == 0)
        for i in 0..<20 { try await r.addFavourite("s\(i)") }
        // The observation thread has computed several values meanwhile; the consumer gets the newest.
        let deadline = now() + 30
        var last = 0
        while last < 20 && now() < deadline { last = try await it.next() ?? -1 }
        #expect(last == 20)
    }

    @Test(.timeLimit(.minutes(5)))   // async: a suite of blocking tests can hold the cooperative pool for a while
    func aSubscriptionEndsWithItsConsumerAndCloseFinishesTheRest() async throws {
        let dir = TempDir()
        let r = try Replica(path: dir.file("a.db"))
        do {
            var it = r.observeState().makeAsyncIterator()
            _ = try await it.next()
            #expect(r.observers.subscriberCount == 1)
        }
        // The iterator is gone: so is its subscriber.
        try await r.addFavourite("131075")
        #expect(await eventually { r.observers.subscriberCount == 0 })
        let tokenValues = TestLockedArray<Int>()
        let token = r.observe { try $0.state(user: "me").favourites.elements.count }.start { tokenValues.append($0) }
        #expect(await eventually { tokenValues.values == [1] })
        token.cancel()
        try await r.addFavourite("149970")
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(tokenValues.values == [1], "no callback after cancel")
        var open = r.observeState().makeAsyncIterator()
        _ = try await open.next()
        r.close()
        #expect(try await open.next() == nil, "close finishes the sequence")
        let late = Collected(r.observeState())
        #expect(waitUntil(seconds: 30, pollMillis: 1) { late.failure != nil })
        #expect(late.failure.map { BreezeError.closed ~= $0 } == true, "observing a closed replica fails")
    }

    @Test func anErrorEndsTheSequenceByThrowing() throws {
        let dir = TempDir()
        let r = try Replica(path: dir.file("a.db"))
        // A date the screen refuses (a sensor not held yet is waited for: SwiftUIIdiomsTests).
        let sheet = Collected(r.observe(BiomarkerScreen.self, r.parameters(date: "2025-13-01")))
        #expect(waitUntil(seconds: 30, pollMillis: 1) { sheet.failure != nil })
        #expect(sheet.failure.map { BreezeError.screen ~= $0 } == true, "\(String(describing: sheet.failure))")
        #expect(sheet.all.isEmpty)
    }

    @Test func theRetryScheduleLooksOftenAtFirstThenBacksOff() {
        let delays = (0..<30).map(ObservationCenter.retryDelayMicros)
        #expect(delays.prefix(20).allSatisfy { $0 == 100 } && delays[20] == 2000 && delays[27] == 256_000)
        #expect(delays.reduce(0, +) > 500_000, "keeps looking for over half a second in all")
    }
}

/// Polls `condition` every millisecond for up to `seconds` (suspending, not blocking).
func eventually(seconds: Double = 30, _ condition: () -> Bool) async -> Bool {
    let deadline = now() + seconds
    while now() < deadline {
        if condition() { return true }
        try? await Task.sleep(nanoseconds: 1_000_000)
    }
    return condition()
}

/// An array appended to from callbacks.
final class TestLockedArray<T: Sendable>: @unchecked Sendable {
    // `@unchecked Sendable`: `storage` is guarded by `lock`.
    private let lock = TestLock()
    private var storage: [T] = []
    func append(_ v: T) { lock.run { storage.append(v) } }
    var values: [T] { lock.run { storage } }
}
