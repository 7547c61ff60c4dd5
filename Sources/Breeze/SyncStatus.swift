import BreezeStore
import BreezeNet

/// What the in-process sync node knows: whether it runs, where it listens, and each peer with how far apart
/// the two replicas are, per stream (`Replica.currentSyncStatus`, `Replica.observeSyncStatus()`).
///
/// ```swift
/// let behind = replica.currentSyncStatus.peers.map { $0.lag[.user("ana")]?.weLack ?? 0 }.max() ?? 0
/// ```
public struct SyncStatus: Equatable, Codable, Sendable {
    /// True while the node runs.
    public var running: Bool
    /// The address it accepts peers on (with the real port when port 0 was asked), or nil.
    public var listenAddress: String?
    /// Every authenticated inbound peer and every configured outbound one, connected or not; on a server with
    /// more than 64 devices connected, the devices are only counted (`devicesConnected`).
    public var peers: [Peer]
    /// Devices (dialled in, `user:` scope) connected now.
    public var devicesConnected = 0
    /// When this replica's certificate expires (milliseconds since 1970), once the node runs: the node asks for
    /// a new one a month ahead (a third of its lifetime for a short one) and this moves when it installed it.
    public var certificateNotAfter: UInt64?

    /// A status of your own making (SwiftUI previews, tests); the node reports real ones.
    public init(running: Bool, listenAddress: String?, peers: [Peer], devicesConnected: Int = 0, certificateNotAfter: UInt64? = nil) {
        self.running = running
        self.listenAddress = listenAddress
        self.peers = peers
        self.devicesConnected = devicesConnected
        self.certificateNotAfter = certificateNotAfter
    }

    /// Not running, no peers.
    public static let stopped = SyncStatus(running: false, listenAddress: nil, peers: [])

    /// The peers with a session up now.
    public var connectedPeers: [Peer] { peers.filter(\.connected) }

    /// One peer.
    public struct Peer: Equatable, Codable, Identifiable, Sendable {
        /// The direction and address, e.g. `outbound 10.0.0.2:7070` (`Identifiable`: a dialled peer and one
        /// that dialled in may share an address).
        public var id: String { (isOutbound ? "outbound " : "inbound ") + address }
        /// `host:port` as configured, or as seen for an inbound peer.
        public var address: String
        /// True when this node dials it (a configured peer), false for one that dialled in.
        public var isOutbound: Bool
        /// Whether a session is up now.
        public var connected: Bool
        /// The peer's replica id, once authenticated.
        public var replica: String?
        /// The session's scope (`cluster` or `user:<id>`).
        public var scope: String?
        /// Last message from it, milliseconds since 1970.
        public var lastContactMillis: UInt64?
        /// Events sent to and received from it in the current session.
        public var sent: Int, received: Int
        /// The last error or state change, for a person.
        public var note: String?
        /// Per stream: how many events one side holds that the other lacks, as last known (the peer's
        /// vectors are those it sent, advanced by everything exchanged since).
        public var lag: [StreamID: Lag]

        /// A peer with nothing exchanged yet (for SwiftUI previews and tests; the node reports real ones).
        public init(address: String, isOutbound: Bool, connected: Bool, replica: String? = nil, scope: String? = nil,
                    lastContactMillis: UInt64? = nil, sent: Int = 0, received: Int = 0, note: String? = nil,
                    lag: [StreamID: Lag] = [:]) {
            self.address = address
            self.isOutbound = isOutbound
            self.connected = connected
            self.replica = replica
            self.scope = scope
            self.lastContactMillis = lastContactMillis
            self.sent = sent
            self.received = received
            self.note = note
            self.lag = lag
        }
    }

    /// How far apart two replicas are on one stream.
    public struct Lag: Equatable, Codable, Sendable {
        /// Events this replica holds that the peer lacks.
        public var peerLacks: UInt64
        /// Events the peer holds that this replica lacks.
        public var weLack: UInt64

        /// A lag of `peerLacks` and `weLack` events.
        public init(peerLacks: UInt64, weLack: UInt64) {
            self.peerLacks = peerLacks
            self.weLack = weLack
        }
    }

    init(_ s: NodeStatus) {
        running = s.running
        listenAddress = s.listenAddress
        devicesConnected = s.inboundDevices
        certificateNotAfter = s.certificateNotAfter
        peers = s.peers.map { p in
            var lag: [StreamID: Lag] = [:]
            for stream in Set(s.localVectors.keys).union(p.vectors.keys) {
                let mine = s.localVectors[stream] ?? VersionVector(), theirs = p.vectors[stream] ?? VersionVector()
                let l = Lag(peerLacks: theirs.missing(from: mine), weLack: mine.missing(from: theirs))
                if p.vectors[stream] != nil || l.peerLacks > 0 { lag[stream] = l }
            }
            return Peer(address: p.address, isOutbound: p.direction == "outbound", connected: p.connected,
                        replica: p.replica, scope: p.scope, lastContactMillis: p.lastContactMillis, sent: p.sent,
                        received: p.received, note: p.note, lag: lag)
        }.sorted { ($0.address, $0.isOutbound ? 0 : 1) < ($1.address, $1.isOutbound ? 0 : 1) }
    }
}

/// The latest `SyncStatus` and the sinks observing it (fed by the node's status callback).
///
/// `@unchecked Sendable`: `current` and `sinks` are guarded by `lock`. Values are handed to sinks under
/// `delivery` (recursive, so a callback may start another status observation), which orders every delivery:
/// a new observer's first value and the node's updates never arrive out of order.
final class StatusHub: @unchecked Sendable {
    private let lock = Lock()
    private let delivery = Lock(recursive: true)
    private var current = SyncStatus.stopped
    private var sinks: [UInt64: WeakSink] = [:]
    private var nextID: UInt64 = 1

    private struct WeakSink { weak var sink: (any ObservationSink<SyncStatus>)? }

    var status: SyncStatus { lock.withLock { current } }

    func update(_ status: SyncStatus) {
        delivery.withLock {
            let targets: [any ObservationSink<SyncStatus>] = lock.withLock {
                guard status != current else { return [] }
                current = status
                sinks = sinks.filter { $0.value.sink.map { !$0.isCancelled } ?? false }
                return sinks.values.compactMap(\.sink)
            }
            for t in targets { t.send(status) }
        }
    }

    func add(_ sink: any ObservationSink<SyncStatus>) -> UInt64 {
        delivery.withLock {
            let (id, now): (UInt64, SyncStatus) = lock.withLock {
                defer { nextID += 1 }
                sinks[nextID] = WeakSink(sink: sink)
                return (nextID, current)
            }
            sink.send(now)
            return id
        }
    }

    func remove(_ id: UInt64) { _ = lock.withLock { sinks.removeValue(forKey: id) } }
}
