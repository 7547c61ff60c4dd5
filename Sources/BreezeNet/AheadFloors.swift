import BreezeCore
import BreezeStore

/// Reads a stream's ahead floor (`EventLog.aheadOfClock(in:)`) for `SyncSession.Config.aheadFloor`, which
/// lets a device's write that supersedes a far-ahead value through the 24-hour bound (`Protocol/sync.md` 6.6).
///
/// `@unchecked Sendable`: it holds the node's `EventLog`, which is not thread-safe. The closure is called
/// only from `SyncSession.receive`, which the node runs on its loop thread, the only thread that uses the log.
final class AheadFloors: @unchecked Sendable {
    private let log: EventLog

    init(log: EventLog) { self.log = log }

    /// The floor of `stream`, or `.zero` when it holds no flagged event or cannot be read (the bound then
    /// applies as is).
    var lookup: @Sendable (StreamID) -> HLC {
        { [self] stream in (try? log.aheadOfClock(in: stream)) ?? .zero }
    }
}
