import BreezeNet
import BreezeInspect
import BreezeFeeds

/// `breeze node --metrics HOST:PORT`: the node's counters (`NodeMetrics`) in the Prometheus text format at
/// `/metrics`, for the operators' monitoring to scrape. No token (scrapers do not carry one): loopback unless
/// `--metrics-allow-remote` (an address only the monitoring reaches). Labels name streams, users' streams summed
/// as `user:*` and `health:*` unless `--metrics-user-labels` (a label naming a user tells who uses the app),
/// and the cluster and dialled peers. The provider feeds the node runs (`--feeds`), or `breeze feed --metrics`
/// runs alone, are counted per feed (`breeze_feed_*`).
enum NodeMetricsEndpoint {
    /// Serves `metrics` (a node's, if any) and the counters of `feeds` on `listen` until the server is stopped.
    static func serve(_ metrics: NodeMetrics?, feeds: [FeedRunner] = [], listen: String, userLabels: Bool = false) throws(CLIError) -> HTTPServer {
        do {
            return try HTTPServer(listen: listen, token: nil) { request in
                switch request.path {
                case "/metrics":
                    let text = exposition(metrics?.snapshot(), feeds: feeds.map { ($0.feed.name, $0.counters) }, userLabels: userLabels)
                    return .text(text, contentType: PrometheusText.contentType)
                case "/": return .text("breeze node metrics: see /metrics\n")
                default: return .text("404 not found: the metrics are at /metrics\n", status: 404)
                }
            }
        } catch { throw .failure("--metrics \(error.description)") }
    }

    /// The snapshot and the feeds' counters as Prometheus text.
    static func exposition(_ node: NodeMetrics.Snapshot?, feeds: [(name: String, counters: FeedRunner.Counters)] = [],
                           userLabels: Bool = false) -> String {
        var p = PrometheusText()
        if let node { nodeFamilies(&p, node, userLabels: userLabels) }
        if !feeds.isEmpty { feedFamilies(&p, feeds) }
        return p.text
    }

    /// A feed's polls by outcome, the rows its answers brought (stored or already held), when it last
    /// imported, and whether it still polls (a refused key stops it: an alert should fire on 0).
    static func feedFamilies(_ p: inout PrometheusText, _ feeds: [(name: String, counters: FeedRunner.Counters)]) {
        p.family("breeze_feed_polls_total", .counter, help: "Requests a feed made, by outcome: imported, failed (timeout, 5xx, an answer that does not parse), throttled (429), refused (401/403).",
                 feeds.flatMap { f in
                     [("imported", f.counters.imported), ("failed", f.counters.failed), ("throttled", f.counters.throttled), ("refused", f.counters.refused)]
                         .map { ([("feed", f.name), ("outcome", $0.0)], Double($0.1)) }
                 })
        p.family("breeze_feed_rows_total", .counter, help: "Rows of a feed's answers: stored (new or changed) or already held (a poll that brings nothing new stores nothing).",
                 feeds.flatMap { f in
                     [([("feed", f.name), ("result", "stored")], Double(f.counters.storedRows)), ([("feed", f.name), ("result", "held")], Double(f.counters.duplicateRows))]
                 })
        p.family("breeze_feed_last_success_time_seconds", .gauge, help: "When the feed's last poll that imported started, seconds since 1970 (0: none yet).",
                 feeds.map { ([("feed", $0.name)], Double($0.counters.lastSuccessMillis / 1000)) })
        p.family("breeze_feed_up", .gauge, help: "1 while the feed polls, 0 once it stopped (its key was refused: fix the key, then restart).",
                 feeds.map { ([("feed", $0.name)], $0.counters.stopped ? 0 : 1) })
    }

    static func nodeFamilies(_ p: inout PrometheusText, _ s: NodeMetrics.Snapshot, userLabels: Bool) {
        /// A stream's label: a user's streams summed up as `user:*` / `health:*` unless asked.
        func folded(_ values: [String: UInt64]) -> [String: UInt64] {
            guard !userLabels else { return values }
            var out: [String: UInt64] = [:]
            for (k, n) in values {
                let key = k.hasPrefix("user:") ? "user:*" : k.hasPrefix("health:") ? "health:*" : k
                out[key, default: 0] += n
            }
            return out
        }
        p.family("breeze_node_peers_connected", .gauge, help: "Peer sessions authenticated now.", [([], Double(s.peersConnected))])
        p.family("breeze_node_peer_lag_events", .gauge,
                 help: "Events this replica holds, in streams the peer wants, that the peer lacks: each cluster peer and each peer this node dials (devices are summed up below).",
                 s.peers.map { ([("peer", $0.address), ("direction", $0.direction), ("replica", $0.replica ?? "")], Double($0.lagEvents)) })
        p.family("breeze_node_devices_connected", .gauge, help: "Device sessions (user scope, dialled in) authenticated now.",
                 [([], Double(s.devices.connected))])
        p.family("breeze_node_devices_behind", .gauge, help: "Device sessions that lack events of the streams they want (catching up).",
                 [([], Double(s.devices.behind))])
        p.family("breeze_node_devices_lag_events", .gauge, help: "Events the connected devices lack of the streams they want, in all.",
                 [([], Double(s.devices.lagEvents))])
        for (name, values, help) in [
            ("breeze_node_events_received_total", folded(s.received), "Events received from peers, duplicates included, per stream."),
            ("breeze_node_events_sent_total", folded(s.sent), "Events sent to peers, per stream."),
            ("breeze_node_events_stored_total", folded(s.stored), "Events received from peers and newly stored, per stream."),
        ] {
            p.family(name, .counter, help: help, values.keys.sorted().map { ([("stream", $0)], Double(values[$0]!)) })
        }
        p.family("breeze_node_events_refused_total", .counter, help: "Received events not stored: already held, conflicting ids, gaps, skipped (a signature that did not hold when the event was made, a stamp too far ahead, or after such an event of its origin).",
                 [([("reason", "duplicate")], Double(s.duplicates)), ([("reason", "conflict")], Double(s.conflicts)),
                  ([("reason", "gap")], Double(s.gaps)), ([("reason", "skipped")], Double(s.skipped))])
        p.histogram("breeze_node_commit_seconds", help: "Group commits of received events: the transaction and the WAL sync.",
                    bounds: NodeMetrics.commitBuckets, counts: s.commitBucketCounts, sum: s.commitSeconds)
        p.family("breeze_node_connections_refused_total", .counter,
                 help: "Connections closed before they authenticated (handshake failed or timed out, or evicted: too many at once), or right after (reconnects: a device beyond its budget of sessions a minute).",
                 ["handshake", "evicted", "reconnects"].map { ([("reason", $0)], Double(s.refused[$0] ?? 0)) })
        p.family("breeze_node_events_retired_total", .counter,
                 help: "This server's own reading events replaced: by compaction (its live feed's small events merged into reading.compact events) or by rollup (past the retention policy's raw window, into reading.rollup events).",
                 ["compact", "rollup"].map { ([("by", $0)], Double(s.retired[$0] ?? 0)) })
        p.family("breeze_node_events_written_total", .counter, help: "reading.compact and reading.rollup events this server wrote for them.",
                 ["compact", "rollup"].map { ([("by", $0)], Double(s.written[$0] ?? 0)) })
        p.family("breeze_node_start_time_seconds", .gauge, help: "When the node started, seconds since 1970.",
                 [([], Double(s.startedMillis / 1000))])
    }
}
