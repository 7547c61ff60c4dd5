import BreezeCore
import BreezeStore
@_exported import BreezeTestSupport
@preconcurrency import Glibc

/// Options whose boot id and wall clock the test controls.
func testOptions(boot: String? = "boot-1", wall: UInt64 = 1_700_000_000_000,
                 durability: EventLog.Durability = .full) -> EventLog.Options {
    var o = EventLog.Options()
    o.bootID = { boot }
    o.wallClock = { wall }
    o.durability = durability
    return o
}

import Testing

/// Expects `body` to throw a `StoreError` of the given kind.
func expectStoreError(_ kind: StoreError, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) {
    do {
        try body()
        Issue.record("expected a StoreError", sourceLocation: sourceLocation)
    } catch let e as StoreError {
        #expect(kind ~= e, "got: \(e)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
    }
}
