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
    /// The node's fan-out, for what the log holds of a stream (its router's heads, in memory).
    weak var fanout: Fanout<Node.Peer>?
    /// Keys revoked by revocations the node enforces (`Node.refreshRevocations`): a replica whose bound key was
    /// revoked may be enrolled again with another.
    var revokedKeys = Set<[UInt8]>()

    init(log: EventLog) { self.log = log }

    /// The key `replica` is bound to here (the first seen, unless revoked since), for
    /// `SyncSession.Config.knownKey`.
    var knownKey: @Sendable (ReplicaID) -> [UInt8]? {
        { [self] replica in
            guard let key = boundKey(replica), !revokedKeys.contains(key) else { return nil }
            return key
        }
    }

    /// The key the log binds `replica` to. A binding never changes once made (`recordReplicaKey` keeps the
    /// first), so the ones found are kept in memory: a session asks for every signed event it receives, and a
    /// batch must not cost a query per event. Not found is asked again (the binding may be made meanwhile).
    func boundKey(_ replica: ReplicaID) -> [UInt8]? {
        if let k = boundKeys[replica] { return k }
        guard let key = (try? log.replicaKey(replica)) ?? nil else { return nil }
        if boundKeys.count >= 65_536 { boundKeys = [:] }
        boundKeys[replica] = key
        return key
    }
    private var boundKeys: [ReplicaID: [UInt8]] = [:]

    /// The vector this node holds of a stream, for `SyncSession.Config.heldVector`.
    var heldVector: @Sendable (StreamID) -> VersionVector? {
        { [self] stream in fanout?.router.head(of: stream) }
    }

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

    /// The retired range holding a counter (`EventLog.retiredRange`), for `SyncSession.Config.retiredRange`:
    /// asked only when a peer lacks an event's predecessor, so a point query each.
    var retiredRange: @Sendable (StreamID, Origin, UInt64) -> ClosedRange<UInt64>? {
        { [self] stream, origin, counter in (try? log.retiredRange(stream: stream, origin: origin, containing: counter)) ?? nil }
    }
}
