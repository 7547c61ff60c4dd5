import BreezeCore
import BreezeStore
@preconcurrency import Glibc

/// A running node's counters for operators (`breeze node --metrics`, Prometheus): connected peers, events
/// received, sent and stored per stream, how far behind each peer is, how long group commits take, and the
/// connections refused. The node's loop thread updates it where it stores, sends and refuses (`Node`); any
/// thread reads a consistent copy with `snapshot()`.
///
/// ```swift
/// let metrics = NodeMetrics()
/// var config = NodeConfig(dbPath: db, listen: "127.0.0.1:0", credentials: credentials)
/// config.metrics = metrics
/// let node = try NodeHandle.start(config)
/// print(metrics.snapshot().peersConnected)
/// ```
///
/// `@unchecked Sendable`: `state` is read and written only under `mutex`.
public final class NodeMetrics: @unchecked Sendable {
    /// The upper bounds (seconds) of the commit-latency histogram's buckets; the last bucket is +Inf.
    public static let commitBuckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

    /// One peer as the metrics see it.
    public struct Peer: Sendable, Equatable {
        /// `host:port` (as dialled, or as seen for an inbound peer).
        public var address: String
        /// `inbound` or `outbound`.
        public var direction: String
        /// The peer's replica id once authenticated.
        public var replica: String?
        /// Events this replica holds, in streams the peer may read, that the peer lacks (by its vectors).
        public var lagEvents: UInt64
    }

    /// The devices connected to a node (inbound sessions of `user:` scope), summed up: a server has thousands.
    public struct Devices: Sendable, Equatable {
        /// Device sessions authenticated now.
        public var connected = 0
        /// Of those, how many lack events they want (catching up).
        public var behind = 0
        /// Events the devices lack in all, of the streams they want.
        public var lagEvents: UInt64 = 0
        public init() {}
    }

    /// What the counters held at one moment.
    public struct Snapshot: Sendable, Equatable {
        /// Authenticated sessions now (devices included).
        public var peersConnected = 0
        /// Every authenticated peer that is not a device of the node (cluster peers, peers it dials), by address.
        public var peers: [Peer] = []
        /// The devices, summed up.
        public var devices = Devices()
        /// Events in batches received from peers (duplicates included), per stream.
        public var received: [String: UInt64] = [:]
        /// Events sent to peers, per stream.
        public var sent: [String: UInt64] = [:]
        /// Events received and newly stored, per stream.
        public var stored: [String: UInt64] = [:]
        /// Received events already held (no-ops), conflicting ids refused, and gaps refused.
        public var duplicates: UInt64 = 0, conflicts: UInt64 = 0, gaps: UInt64 = 0
        /// Group commits: per bucket of `NodeMetrics.commitBuckets` (then +Inf), how many took at most that long
        /// (not cumulative), their total time in seconds and their count.
        public var commitBucketCounts: [UInt64] = Array(repeating: 0, count: NodeMetrics.commitBuckets.count + 1)
        public var commitSeconds: Double = 0
        public var commits: UInt64 = 0
        /// Connections closed before they authenticated, by reason: `handshake` (failed or timed out) or
        /// `evicted` (too many at once authenticating); and `reconnects`: a device's sessions beyond its budget.
        public var refused: [String: UInt64] = [:]
        /// Received events skipped (their origin signature did not hold when they were made, stamped too far
        /// ahead, or after such an event of their origin), the rest of their batch stored.
        public var skipped: UInt64 = 0
        /// When the node started, milliseconds since 1970.
        public var startedMillis: UInt64 = 0
        /// This replica's own reading events replaced, by what replaced them: `compact` (`reading.compact`) or
        /// `rollup` (`reading.rollup`, under the retention policy); and the events written for them.
        public var retired: [String: UInt64] = [:]
        public var written: [String: UInt64] = [:]
    }

    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var state = Snapshot()

    /// Counters at zero.
    public init() {
        pthread_mutex_init(mutex, nil)
        state.startedMillis = SystemClock.nowMillis()
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    private func update(_ body: (inout Snapshot) -> Void) {
        pthread_mutex_lock(mutex)
        body(&state)
        pthread_mutex_unlock(mutex)
    }

    /// A copy of every counter.
    public func snapshot() -> Snapshot {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return state
    }

    // MARK: Updated by the node's loop thread

    /// One group commit of `batches` received, with what `ingest` made of each, taking `seconds` (the
    /// transaction and the WAL sync).
    func recordCommit(_ batches: [[Event]], _ reports: [EventLog.IngestReport], seconds: Double) {
        var received: [StreamID: UInt64] = [:], stored: [StreamID: UInt64] = [:]
        for b in batches { for e in b { received[e.stream, default: 0] += 1 } }
        for r in reports { for e in r.stored { stored[e.stream, default: 0] += 1 } }
        let bucket = NodeMetrics.commitBuckets.firstIndex { seconds <= $0 } ?? NodeMetrics.commitBuckets.count
        update { s in
            for (k, n) in received { s.received[k.description, default: 0] += n }
            for (k, n) in stored { s.stored[k.description, default: 0] += n }
            for r in reports {
                s.duplicates += UInt64(r.duplicates)
                s.conflicts += UInt64(r.conflicts)
                s.gaps += UInt64(r.gaps)
            }
            s.commitBucketCounts[bucket] += 1
            s.commitSeconds += seconds
            s.commits += 1
        }
    }

    /// Events sent to one peer, per stream (`SyncSession.takeSentCounts`).
    func recordSent(_ counts: [StreamID: Int]) {
        guard !counts.isEmpty else { return }
        update { s in for (k, n) in counts { s.sent[k.description, default: 0] += UInt64(n) } }
    }

    /// Received events skipped (`SyncSession.Action.skipped`).
    func recordSkipped(_ n: Int) {
        update { $0.skipped += UInt64(n) }
    }

    /// A compaction (`kind` `compact`) or rollup (`rollup`) replaced `retired` events by `written` ones.
    func recordRetired(kind: String, retired: Int, written: Int) {
        update { s in
            s.retired[kind, default: 0] += UInt64(retired)
            s.written[kind, default: 0] += UInt64(written)
        }
    }

    /// A connection closed before it authenticated.
    func recordRefused(reason: String) {
        update { $0.refused[reason, default: 0] += 1 }
    }

    /// The authenticated peers now, with their lag: the cluster and dialled ones each, the devices summed up.
    func recordPeers(_ peers: [Peer], devices: Devices = Devices()) {
        update { s in
            s.peers = peers.sorted { ($0.address, $0.direction) < ($1.address, $1.direction) }
            s.devices = devices
            s.peersConnected = peers.count + devices.connected
        }
    }
}
