import Testing
import Foundation
import Breeze
import BreezeTestSupport
@preconcurrency import Glibc

/// Issue 30, "the main thread waits": the async API reads on a pool of read connections and writes on a
/// queue of its own, so an awaited call never holds the caller's thread and a read never waits for a write.
struct AsyncAPITests {
    /// While a synchronous call holds the replica (as each batch of an import does, and any write), an awaited
    /// read runs: it does not take the replica's lock, it reads on a connection of its own. The holder lets go
    /// only once the read has run (or after a minute), and the read notes whether the holder still held the
    /// replica when it ran: a read that waited for the lock would find it released. (What is asserted is where
    /// the read ran, not when the awaiting task resumed: in a busy test run that may be much later.)
    @Test(.timeLimit(.minutes(5)))
    func anAwaitedReadDoesNotWaitForACallHoldingTheReplica() async throws {
        let dir = TempDir()
        let r = try Replica(path: dir.file("a.db"))
        defer { r.close() }
        _ = try await r.importData(CanonicalSensorTests.troy, name: "troy.csv", format: "sensors-csv")
        _ = try await r.addFavourite("149970")
        let holding = Flag(), readRan = Flag(), released = Flag(), ranWhileHeld = Flag()
        let holder = Thread {
            try? r.read { _ in
                holding.set()
                _ = waitUntil(seconds: 60, pollMillis: 1) { readRan.isSet }
            }
            released.set()
        }
        holder.start()
        #expect(await eventually { holding.isSet })
        let p = r.parameters(sensor: "149970")
        let (state, sheet) = try await r.read { s in
            if !released.isSet { ranWhileHeld.set() }
            readRan.set()
            return (try s.state(user: "me"), try s.screen(SheetScreen.self, p))
        }
        #expect(ranWhileHeld.isSet, "the awaited read waited for the call holding the replica")
        #expect(state.favourites.contains("purpleair:149970") && sheet.isFavourite)
        let screen = try await r.screen(SheetScreen.self, p)
        #expect(screen == sheet)
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
                let opened = waitUntil(seconds: 240, pollMillis: 1) { gate.isSet }   // a hang guard: a busy test run may hold the main actor for long
                try r.addFavourite("87173")
                return opened
            }
        }
        let deadline = now() + 240
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
