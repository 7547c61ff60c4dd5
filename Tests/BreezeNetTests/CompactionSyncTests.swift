import Testing
import BreezeCore
import BreezeStore
import BreezeTestSupport
import Foundation
@preconcurrency import Glibc

/// Compaction across real processes and sockets (issue 28): a server compacts the small events of its live
/// feed while a peer that holds them is connected, and a peer that joins later gets the compactions and is told
/// the counters they replaced are retired (`Protocol/sync.md` 6.10). Every replica ends with the same events,
/// the same facts, and a clean `breeze verify`.
@Suite(.serialized)
struct CompactionSyncTests {
    /// A live feed's events in `path`: `steps` polls of three sensors, each poll one small event per sensor.
    static func feed(_ path: String, steps: Int, from start: Int64) throws {
        let log = try EventLog.open(at: path)
        defer { log.close() }
        _ = try log.appendFacts(["1", "2", "3"].map { (.public, .sensorRegistered(SensorRegistration(
            sensor: $0, name: "sensor \($0)", source: "purpleair", kind: "purpleair", latitude: 47.6, longitude: -122.3, timeZone: "UTC"))) })
        for k in 0..<steps {
            let t = start + Int64(k) * 120
            _ = try log.appendFacts(["1", "2", "3"].enumerated().map { i, s in
                (.public, .reading(Reading(source: "purpleair", sensor: s, time: t, values: [
                    Measurement("pm25_cf1_a", Double((k * 7 + i * 13) % 60)), Measurement("pm25_cf1_b", Double((k * 5 + i) % 60) + 0.5),
                    Measurement("humidity", 40)])))
            })
        }
    }

    static func digest(_ path: String) throws -> String {
        let log = try EventLog.open(at: path)
        defer { log.close() }
        try log.catchUpProjection()
        return try log.projectionDigest()
    }

    @Test func aPeerOnlineAndAPeerJoiningLaterConvergeOnTheCompactedLog() throws {
        let c = Cluster()
        #expect(c.cli("a", ["init"]).code == 0)
        let start = Int64(SystemClock.nowMillis() / 1000) - 3 * 3600
        try Self.feed(c.db("a"), steps: 40, from: start)
        let before = c.count("a")
        let a = c.start("a")
        c.start("b", peers: [a])
        #expect(waitUntil(seconds: 20) { c.count("b") == before && c.fingerprint("b") == c.fingerprint("a") }, "b holds a's live events")
        // The operator compacts now (the node would on its own once a stream has a day of them).
        let compacted = c.cli("a", ["compact", "--target-events", "10"])
        #expect(compacted.code == 0 && compacted.out.contains("120 small reading events of 3 streams merged into 3 reading.compact events"), "\(compacted.out)")
        let after = c.count("a")
        #expect(after == before - 120 + 3)
        #expect(waitUntil(seconds: 20) { c.count("b") == after && c.fingerprint("b") == c.fingerprint("a") },
                "b took the compactions and dropped what they replace: \(c.count("b")) events, a \(after)")
        // A replica that joins now lacks the replaced counters: it is told they are retired.
        c.start("d", peers: [a])
        #expect(waitUntil(seconds: 20) { c.count("d") == after && c.fingerprint("d") == c.fingerprint("a") },
                "d: \(c.count("d")) events, a \(after)\n\(c.logText("d"))")
        // More live events after the compaction reach both as before.
        c.stop("a")
        try Self.feed(c.db("a"), steps: 2, from: start + 40 * 120)
        c.start("a", listen: a)
        let more = c.count("a")
        #expect(waitUntil(seconds: 20) { c.count("b") == more && c.count("d") == more && c.fingerprint("d") == c.fingerprint("a") })
        c.stopAll()
        let da = try Self.digest(c.db("a"))
        #expect(try Self.digest(c.db("b")) == da && Self.digest(c.db("d")) == da, "the same facts everywhere")
        for n in ["a", "b", "d"] {
            let v = c.verify(n)
            #expect(v.code == 0 && v.out.contains("replaced by reading.compact or reading.rollup"), "\(n): \(v.out)")
        }
        let diff = c.cli("a", ["diff", c.db("a"), c.db("d")])
        #expect(diff.code == 0, "\(diff.out)")
    }

    /// The cluster's retention policy, signed by its authority, reaches a server that was stopped; started again,
    /// that server rolls up its readings older than the policy's days by itself. A peer that held them drops them
    /// when the rollups reach it, a peer that joins later is told they are retired, and the screens' hours agree.
    @Test func aServerFollowsTheClustersRetentionPolicyAndItsPeersConverge() throws {
        let c = Cluster()
        #expect(c.cli("a", ["init"]).code == 0)
        let start = Int64(SystemClock.nowMillis() / 1000) - 3 * 86_400
        try Self.feed(c.db("a"), steps: 40, from: start)
        let before = c.count("a")
        var a = c.start("a")
        c.start("b", peers: [a])
        #expect(waitUntil(seconds: 20) { c.count("b") == before && c.fingerprint("b") == c.fingerprint("a") })
        let hourly = try Self.hourly(c.db("a"), from: start)
        #expect(hourly.count >= 6)
        c.stop("a")
        // A policy signed by another key is stored, relayed and followed by nobody.
        #expect(c.cli("a", ["authority", "new", "--out", c.dir.file("rogue.key")]).code == 0)
        #expect(c.cli("a", ["authority", "retention", "--signer", c.dir.file("rogue.key"), "--days", "1"]).code == 0)
        a = c.start("a", listen: a)
        #expect(waitUntil(seconds: 20) { c.count("b") == before + 1 })
        #expect(c.count("a") == before + 1, "nothing rolled up under a policy the cluster authority did not sign")
        c.stop("a")
        let set = c.cli("a", ["authority", "retention", "--signer", c.authority.cli.keyFile, "--days", "1"])
        #expect(set.code == 0 && set.out.contains("raw readings kept 1 days"), "\(set.out)")
        a = c.start("a", listen: a, extra: ["--metrics", "127.0.0.1:0"])
        let metricsPort = c.metricsPort("a")
        // 120 reading events of 3 sensors become 3 rollups.
        let after = before + 2 - 120 + 3
        #expect(waitUntil(seconds: 30) { c.count("a") == after }, "a: \(c.count("a")) events\n\(c.logText("a"))")
        #expect(c.logText("a").contains("retention (1 days of raw readings): 120 reading events of 3 streams replaced by 3 reading.rollup events"))
        let metrics = httpGet(port: metricsPort, "/metrics")
        #expect(metrics.status == 200 && metrics.body.contains("breeze_node_events_retired_total{by=\"rollup\"} 120")
                && metrics.body.contains("breeze_node_events_written_total{by=\"rollup\"} 3"), "\(metrics.body.suffix(800))")
        #expect(waitUntil(seconds: 20) { c.count("b") == after && c.fingerprint("b") == c.fingerprint("a") }, "b: \(c.count("b"))")
        c.start("d", peers: [a])
        #expect(waitUntil(seconds: 20) { c.count("d") == after && c.fingerprint("d") == c.fingerprint("a") }, "d: \(c.count("d"))")
        c.stopAll()
        let da = try Self.digest(c.db("a"))
        #expect(try Self.digest(c.db("b")) == da && Self.digest(c.db("d")) == da)
        for n in ["a", "b", "d"] {
            #expect(try Self.hourly(c.db(n), from: start) == hourly, "\(n): the hours the screens read, from the rollups")
            let v = c.verify(n)
            #expect(v.code == 0 && v.out.contains("replaced by reading.compact or reading.rollup"), "\(n): \(v.out)")
        }
    }

    /// Each sensor's hours from `from` for a day, as the screens read them.
    static func hourly(_ path: String, from: Int64) throws -> [String] {
        let log = try EventLog.open(at: path)
        defer { log.close() }
        try log.catchUpProjection()
        return try ["1", "2", "3"].flatMap { s in
            try log.projectedHourly(source: "purpleair", sensor: s, from: from - from % 3600, to: from - from % 3600 + 86_400).map { "\(s) \($0)" }
        }
    }
}
