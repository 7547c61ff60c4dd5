import BreezeCore
import BreezeStore

/// What a session asks of the node's log while it runs: a stream's ahead floor (`EventLog.aheadOfClock(in:)`)
/// for `SyncSession.Config.aheadFloor`, which lets a device's write that supersedes a far-ahead value through
/// the 24-hour bound (`Protocol/sync.md` 6.6), and an event's stored origin signature
/// (`EventLog.signature(of:)`) for `SyncSession.Config.storedSignature`, sent with it (6.9).
///
/// `@unchecked Sendable`: it holds the node's `EventLog`, which is not thread-safe. The closures are called
/// only from `SyncSession`'s inputs (`receive`, `offer`), which the node runs on its loop thread, the only thread that uses the log.
final class SessionLookups: @unchecked Sendable {
    private let log: EventLog

    init(log: EventLog) { self.log = log }

    /// The floor of `stream`, or `.zero` when it holds no flagged event or cannot be read (the bound then
    /// applies as is).
    var aheadFloor: @Sendable (StreamID) -> HLC {
        { [self] stream in (try? log.aheadOfClock(in: stream)) ?? .zero }
    }

    /// The signature held for an event, or nil when there is none or it cannot be read (the event then
    /// goes unsigned from the cluster, and a device does not relay it).
    var signature: @Sendable (Event) -> OriginSignature? {
        { [self] e in (try? log.signature(of: e)) ?? nil }
    }
}
