public import BreezeCore

/// What a node knows of one peer, persisted so `breeze status` can show it from another process.
public struct PeerStatus: Sendable, Equatable {
    /// `host:port` as configured (`--peer`) or as seen (an inbound connection).
    public var address: String
    /// `outbound` (this node dials it) or `inbound`.
    public var direction: String
    /// The peer's replica id, once authenticated.
    public var replica: String?
    /// The session scope (`cluster` or `user:<id>`).
    public var scope: String?
    /// Whether a session is up now.
    public var connected: Bool
    /// Last message received, milliseconds since the epoch.
    public var lastContactMillis: UInt64?
    /// What the peer holds, as this node knows it.
    public var vectors: [StreamID: VersionVector]
    /// Events sent to and received from the peer in the current session.
    public var sent: Int
    public var received: Int
    /// The last error or state change, for a person.
    public var note: String?

    public init(address: String, direction: String, replica: String? = nil, scope: String? = nil, connected: Bool,
                lastContactMillis: UInt64? = nil, vectors: [StreamID: VersionVector] = [:], sent: Int = 0,
                received: Int = 0, note: String? = nil) {
        self.address = address; self.direction = direction; self.replica = replica; self.scope = scope
        self.connected = connected; self.lastContactMillis = lastContactMillis; self.vectors = vectors
        self.sent = sent; self.received = received; self.note = note
    }
}

/// The running node's heartbeat.
public struct NodeHeartbeat: Sendable, Equatable {
    public var pid: Int32
    public var listen: String
    public var startedMillis: UInt64
    public var heartbeatMillis: UInt64
    /// Set when the node shut down cleanly.
    public var stoppedMillis: UInt64?
    public init(pid: Int32, listen: String, startedMillis: UInt64, heartbeatMillis: UInt64, stoppedMillis: UInt64? = nil) {
        self.pid = pid; self.listen = listen; self.startedMillis = startedMillis; self.heartbeatMillis = heartbeatMillis
        self.stoppedMillis = stoppedMillis
    }

    /// True when the node is running now: it has not stopped and its heartbeat (every second) is fresh.
    public func isRunning(now: UInt64) -> Bool {
        stoppedMillis == nil && now >= heartbeatMillis && now - heartbeatMillis < 3000
    }
}

extension EventLog {
    /// Writes what changed in the peer table and the heartbeat, in one transaction committed without an fsync
    /// of its own (`synchronous=NORMAL` for this one commit): the status is written every second and losing
    /// the last one to a power cut is harmless, while an fsync here would hold up the node's loop, and with it
    /// every event in flight, for a millisecond or more each second. The next durable commit syncs it anyway.
    ///
    /// `peers` are inserted or replaced (by address), `removing` deleted; with `replacingAll` every other
    /// row goes (a node's first write, and its last). A node with thousands of devices writes only the rows
    /// that changed, not the table every second.
    public func updatePeers(_ peers: [PeerStatus], removing: [String] = [], heartbeat: NodeHeartbeat,
                            replacingAll: Bool = false) throws(StoreError) {
        do {
            if options.durability == .full { try db.execute("PRAGMA synchronous=NORMAL") }
            defer { if options.durability == .full { try? db.execute("PRAGMA synchronous=FULL") } }
            try db.writeTransaction {
                if replacingAll { try db.execute("DELETE FROM peers") }
                let d = try db.cached("DELETE FROM peers WHERE address = ?")
                for address in removing {
                    d.reset()
                    try d.bind(1, address)
                    try d.run()
                }
                let s = try db.cached("""
                    INSERT OR REPLACE INTO peers(address, direction, replica, scope, connected, last_contact_ms, vectors, sent, received, note)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """)
                for p in peers {
                    s.reset()
                    try s.bind(1, p.address)
                    try s.bind(2, p.direction)
                    if let v = p.replica { try s.bind(3, v) } else { try s.bindNull(3) }
                    if let v = p.scope { try s.bind(4, v) } else { try s.bindNull(4) }
                    try s.bind(5, Int64(p.connected ? 1 : 0))
                    if let v = p.lastContactMillis { try s.bind(6, Int64(v)) } else { try s.bindNull(6) }
                    try s.bind(7, StreamVectors.encode(p.vectors))
                    try s.bind(8, Int64(p.sent))
                    try s.bind(9, Int64(p.received))
                    if let v = p.note { try s.bind(10, v) } else { try s.bindNull(10) }
                    try s.run()
                }
                let h = try db.cached("INSERT OR REPLACE INTO node(id, pid, listen, started_ms, heartbeat_ms, stopped_ms) VALUES (1, ?, ?, ?, ?, ?)")
                try h.bind(1, Int64(heartbeat.pid))
                try h.bind(2, heartbeat.listen)
                try h.bind(3, Int64(heartbeat.startedMillis))
                try h.bind(4, Int64(heartbeat.heartbeatMillis))
                if let v = heartbeat.stoppedMillis { try h.bind(5, Int64(v)) } else { try h.bindNull(5) }
                try h.run()
            }
        } catch { throw StoreError.from(error, path: path) }
    }

    /// Replaces the whole peer table and the heartbeat (`updatePeers(_:heartbeat:replacingAll: true)`).
    public func recordPeers(_ peers: [PeerStatus], heartbeat: NodeHeartbeat) throws(StoreError) {
        try updatePeers(peers, heartbeat: heartbeat, replacingAll: true)
    }

    /// The peer table as the node last wrote it, and its heartbeat (nil if no node ever ran here).
    public func peerStatuses() throws(StoreError) -> (peers: [PeerStatus], node: NodeHeartbeat?) {
        do {
            let q = try db.prepare("SELECT address, direction, replica, scope, connected, last_contact_ms, vectors, sent, received, note FROM peers ORDER BY address")
            var peers: [PeerStatus] = []
            while try q.step() {
                peers.append(PeerStatus(
                    address: q.text(0), direction: q.text(1), replica: q.isNull(2) ? nil : q.text(2),
                    scope: q.isNull(3) ? nil : q.text(3), connected: q.int(4) != 0,
                    lastContactMillis: q.isNull(5) ? nil : UInt64(q.int(5)),
                    vectors: (try? StreamVectors.decode(q.blob(6))) ?? [:], sent: Int(q.int(7)), received: Int(q.int(8)),
                    note: q.isNull(9) ? nil : q.text(9)))
            }
            let h = try db.prepare("SELECT pid, listen, started_ms, heartbeat_ms, stopped_ms FROM node WHERE id = 1")
            let node = try h.first { NodeHeartbeat(pid: Int32($0.int(0)), listen: $0.text(1),
                                                   startedMillis: UInt64($0.int(2)), heartbeatMillis: UInt64($0.int(3)),
                                                   stoppedMillis: $0.isNull(4) ? nil : UInt64($0.int(4))) }
            return (peers, node)
        } catch { throw StoreError.from(error, path: path) }
    }

}
