import Testing
import Foundation
import Breeze
import BreezeTestSupport
@preconcurrency import Glibc

/// Issue 30, "the main thread waits": the async API reads on a pool of read connections and writes on a
/// queue of its own, so an awaited call never holds the caller's thread and a read never waits for a write.
struct AsyncAPITests {
    /// While a synchronous call holds the replica (as each batch of an import does, and any write), an awaited
    /// read completes: it does not take the replica's lock, it reads on a connection of its own. The holder
    /// lets go only after the read has returned, so a read that waited would hang (and fail at the guard).
    @Test(.timeLimit(.minutes(5)))
    func anAwaitedReadDoesNotWaitForACallHoldingTheReplica() async throws {
        let dir = TempDir()
        let r = try Replica(path: dir.file("a.db"))
        defer { r.close() }
        _ = try await r.importData(CanonicalSensorTests.troy, name: "troy.csv", format: "sensors-csv")
        _ = try await r.addFavourite("149970")
        let holding = Flag(), readDone = Flag(), released = Flag()
        let holder = Thread {
            try? r.read { _ in
                holding.set()
                _ = waitUntil(seconds: 60, pollMillis: 1) { readDone.isSet }
            }
            released.set()
        }
        holder.start()
        #expect(await eventually { holding.isSet })
        let state = try await r.state()
        let sheet = try await r.screen(SheetScreen.self, r.parameters(sensor: "149970"))
        let releasedBeforeTheReads = released.isSet
        readDone.set()
        #expect(!releasedBeforeTheReads, "the awaited reads waited for the call holding the replica")
        #expect(state.favourites.contains("purpleair:149970") && sheet.isFavourite)
        #expect(await eventually { released.isSet })
    }

    /// Awaited writes run on the write queue, not the caller's thread, and are seen by the next awaited read;
    /// many reads at once share the pool (2 connections here) and all complete.
    @Test(.timeLimit(.minutes(5))) @MainActor
    func awaitedWritesRunOffTheMainThreadAndReadsShareThePool() async throws {
        let dir = TempDir()
        var o = Replica.Options()
        o.readers = 2
        let r = try Replica(path: dir.file("a.db"), options: o)
        defer { r.close() }
        _ = try await r.importData(CanonicalSensorTests.troy, name: "troy.csv", format: "sensors-csv")
        // A write that waits for the main actor: it completes only if the main actor is free while it runs.
        let started = Flag(), gate = Flag()
        let write = Task { @MainActor in
            try await r.write { r -> Bool in
                started.set()
                let opened = waitUntil(seconds: 60, pollMillis: 1) { gate.isSet }
                try r.addFavourite("87173")
                return opened
            }
        }
        let deadline = now() + 60
        while !started.isSet && now() < deadline { try await Task.sleep(nanoseconds: 1_000_000) }
        gate.set()        // runs on the main actor, while the write is in progress
        #expect(try await write.value, "the write held the main actor")
        try await r.addFavourite("149970")
        try await r.setUnit(.fahrenheit)
        let counts = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<16 { group.addTask { try await r.state().favourites.elements.count } }
            var all: [Int] = []
            for try await n in group { all.append(n) }
            return all
        }
        #expect(counts == Array(repeating: 2, count: 16))
        #expect(try await r.state().effectiveUnit == .fahrenheit)
    }

    /// After `close()`, awaited calls fail with `.closed` (none hangs).
    @Test(.timeLimit(.minutes(5)))
    func awaitedCallsAfterCloseFailClearly() async throws {
        let dir = TempDir()
        let r = try Replica(path: dir.file("a.db"))
        _ = try await r.state()
        r.close()
        do {
            _ = try await r.state()
            Issue.record("read after close")
        } catch BreezeError.closed {}
        do {
            try await r.addFavourite("x")
            Issue.record("write after close")
        } catch BreezeError.closed {}
    }
}

/// A thread-safe flag.
final class Flag: @unchecked Sendable {
    // `@unchecked Sendable`: `value` is guarded by `lock`.
    private let lock = TestLock()
    private var value = false
    func set() { lock.run { value = true } }
    var isSet: Bool { lock.run { value } }
}
