import Breeze
import BreezeCore
import BreezeStore
import BreezeSync

/// `breeze status`: what the node using this database knows of its peers, read from the database (so it
/// works while the node runs, and after).
enum StatusCommand {
    static let usage = "usage: breeze status [--db PATH] [--json]"

    static func run(_ args: [String], _ ctx: Context) throws(CLIError) {
        _ = try Arguments(args, usage: usage).expect([])
        let (local, peers, node, replica, now, interests, held, horizon, streams) = try ctx.withLog { log in
            let p = try log.peerStatuses()
            return (try log.versionVectors(), p.peers, p.node, log.replica, SystemClock.nowMillis(),
                    try log.interests(), try log.heldFactStreams(), try log.effectiveHorizonDays(),
                    try InterestResolver().subscription(log, user: ctx.user))
        }
        // The certificate the node last used (`meta.certificate`), and a renewal asked for.
        let (certText, renewal) = try ctx.withLog { log in (try log.certificateText(), try log.renewalRequested()) }
        let certificate = certText.flatMap { try? CertificateChain.parse(text: $0).first }
        let running = node?.isRunning(now: now) ?? false
        if ctx.json {
            ctx.console.out(JSONValue.object([
                ("replica", .string(replica.description)),
                ("node", node.map { n in .object([("running", .bool(running)), ("pid", .int(Int64(n.pid))),
                                                  ("listen", .string(n.listen)),
                                                  ("heartbeat", .string(ISOTime.format(millis: Int64(n.heartbeatMillis))))]) } ?? .null),
                ("certificate", certificate.map { c in .object([
                    ("subject", .string(c.subject)), ("notAfter", .string(ISOTime.format(millis: Int64(clamping: c.notAfter)))),
                    ("renewalRequested", renewal.map { .string(ISOTime.format(millis: Int64(clamping: $0.atMillis))) } ?? .null)]) } ?? .null),
                ("vectors", vectorsJSON(local)),
                ("interests", .array(interests.map { .string($0.description) })),
                ("subscribedStreams", streams.map { .int(Int64($0.count)) } ?? .null),
                ("heldFactStreams", .int(Int64(held.count))),
                ("horizonDays", horizon.map { .int(Int64($0)) } ?? .null),
                ("peers", .array(peers.map { p in
                    .object([("address", .string(p.address)), ("direction", .string(p.direction)),
                             ("connected", .bool(p.connected && running)), ("replica", .string(p.replica)),
                             ("scope", .string(p.scope)),
                             ("lastContact", p.lastContactMillis.map { .string(ISOTime.format(millis: Int64($0))) } ?? .null),
                             ("peerLacks", .int(Int64(lacking(p.vectors, local)))),
                             ("peerHasMore", .int(Int64(lacking(local, p.vectors)))),
                             ("sent", .int(Int64(p.sent))), ("received", .int(Int64(p.received))),
                             ("vectors", vectorsJSON(p.vectors)), ("note", .string(p.note))])
                })),
            ]).text)
            return
        }
        let c = ctx.console
        c.out("replica \(replica)   database \(ctx.dbPath)")
        if let n = node {
            c.out(running ? "node    running (pid \(n.pid), listening on \(n.listen.isEmpty ? "-" : n.listen))"
                          : n.stoppedMillis != nil ? "node    not running (stopped cleanly at \(ISOTime.format(millis: Int64(n.stoppedMillis!))))"
                          : "node    not running (last heartbeat \(ISOTime.format(millis: Int64(n.heartbeatMillis))))")
        } else {
            c.out("node    never ran on this database")
        }
        if let cert = certificate {
            let left = cert.notAfter > now ? "\((cert.notAfter - now) / 86_400_000) days left" : "EXPIRED"
            var line = "cert    \(cert.subject) valid until \(ISOTime.format(millis: Int64(clamping: cert.notAfter))) (\(left))"
            if let r = renewal, r.notAfter == cert.notAfter { line += "; a new one asked for \(ISOTime.format(millis: Int64(clamping: r.atMillis)))" }
            c.out(line)
        }
        for line in vectorLines(local) { c.out("local   " + line) }
        c.out(InterestCommand.summary(interests: interests, streams: streams, held: held))
        for i in interests { c.out("        interest \(i)") }
        c.out(HorizonCommand.describe(horizon))
        if peers.isEmpty { c.out("peers   (none)") }
        // A server's devices (inbound, user scope) are summed up when there are many; `--json` lists each.
        let isDevice = { (p: PeerStatus) in p.direction == "inbound" && (p.scope ?? "").hasPrefix("user:") }
        let devices = peers.filter(isDevice)
        let listed = devices.count > Self.devicesListed ? peers.filter { !isDevice($0) } : peers
        if devices.count > Self.devicesListed {
            let connected = devices.filter { $0.connected && running }
            let lags = connected.map { lacking($0.vectors, local, wantedBy: $0) }
            let behind = lags.filter { $0 > 0 }.count
            c.out("devices \(connected.count) connected (dialled in, user scope), \(behind) behind by \(lags.reduce(0, +)) events in all "
                  + "(as last written: a device's row is rewritten every minute); sent \(devices.reduce(0) { $0 + $1.sent }), "
                  + "received \(devices.reduce(0) { $0 + $1.received }); `breeze status --json` lists each")
        }
        for p in listed {
            let state = p.connected && running ? "connected" : "disconnected"
            let contact = p.lastContactMillis.map { "last contact \(ago(now, $0))" } ?? "never contacted"
            c.out("peer    \(p.address) (\(p.direction)) \(state), \(contact), replica \(p.replica ?? "?"), scope \(p.scope ?? "?")")
            let behind = lacking(p.vectors, local), ahead = lacking(local, p.vectors)
            c.out("        peer lacks \(behind) of our events; has \(ahead) we lack (as last known); sent \(p.sent), received \(p.received)")
            for line in vectorLines(p.vectors) { c.out("        " + line) }
            if let note = p.note { c.out("        note: \(note)") }
        }
    }

    /// One line per stream, except the fact streams (thousands in a city), which are summed up per kind.
    static func vectorLines(_ v: [StreamID: VersionVector]) -> [String] {
        var out: [String] = []
        var kinds: [String: (streams: Int, events: UInt64)] = [:]
        for s in v.keys.sorted() {
            if s.isFactPartition {
                let kind = String(s.description.prefix { $0 != ":" })
                kinds[kind, default: (0, 0)].streams += 1
                kinds[kind]!.events += v[s]!.total
            } else {
                out.append("\(pad(s.description, 14)) \(v[s]!.total) events  \(v[s]!)")
            }
        }
        for k in kinds.keys.sorted() {
            out.append("\(pad(k + ":*", 14)) \(kinds[k]!.events) events in \(kinds[k]!.streams) streams")
        }
        return out
    }

    /// Events in `have` that `peer` lacks, over all streams.
    static func lacking(_ peer: [StreamID: VersionVector], _ have: [StreamID: VersionVector]) -> UInt64 {
        have.reduce(0) { $0 + (peer[$1.key] ?? VersionVector()).missing(from: $1.value) }
    }

    /// Events in `have` that a device lacks of the streams it holds or must hold (`public` and its user's).
    static func lacking(_ peer: [StreamID: VersionVector], _ have: [StreamID: VersionVector], wantedBy p: PeerStatus) -> UInt64 {
        let user = (p.scope ?? "").hasPrefix("user:") ? String((p.scope ?? "").dropFirst(5)) : nil
        return have.reduce(0) { n, s in
            let wanted = peer[s.key] != nil || s.key == .public || (user != nil && s.key.userID == user)
            return wanted ? n + (peer[s.key] ?? VersionVector()).missing(from: s.value) : n
        }
    }

    /// Devices are listed one by one up to this many; beyond, summed up.
    static let devicesListed = 20

    static func ago(_ now: UInt64, _ t: UInt64) -> String {
        let s = now > t ? (now - t) / 1000 : 0
        return s < 120 ? "\(s) s ago" : s < 7200 ? "\(s / 60) min ago" : "\(s / 3600) h ago"
    }

    static func vectorsJSON(_ v: [StreamID: VersionVector]) -> JSONValue {
        .object(v.keys.sorted().map { s in
            (s.description, .object(v[s]!.sorted.map { ($0.origin.description, .int(Int64($0.counter))) }))
        })
    }
}
