import Testing
import BreezeTestSupport
import Foundation
@preconcurrency import Glibc

/// `breeze node --metrics`: two real node processes on 127.0.0.1; the metrics of each, scraped over HTTP and
/// parsed, count what really happened between them.
struct NodeMetricsTests {
    /// A `breeze node` with its sync and metrics addresses as it printed them.
    final class Node {
        let child: Child
        var sync = "", metricsPort = 0
        init(db: String, _ args: [String], log: String, metrics: String = "127.0.0.1:0") {
            child = Child(InspectFixture.breeze, ["--db", db, "node", "--metrics", metrics] + args, stderrPath: log)
            while let l = child.readLine() {
                if l.hasPrefix("listening on ") { sync = String(l.dropFirst(13)) }
                if l.hasPrefix("metrics on http://"), let colon = l.dropFirst(18).firstIndex(of: ":") {
                    metricsPort = Int(l[l.index(after: colon)...].prefix { $0.isNumber }) ?? 0
                }
                if l.hasPrefix("node running") { break }
            }
        }
        func scrape() throws -> PrometheusExposition {
            let r = httpGet(port: metricsPort, "/metrics")
            #expect(r.status == 200 && r.headers.contains("text/plain; version=0.0.4"))
            return try PrometheusExposition(r.body)
        }
        deinit {
            child.signal(SIGTERM)
            child.wait()
        }
    }

    @Test func aRunningNodeServesPrometheusMetricsThatCountPeersEventsLagCommitsAndRefusals() throws {
        let dir = TempDir()
        let authority = CLIAuthority(keyFile: dir.file("cluster.key"))
        let a = dir.file("a.db"), b = dir.file("b.db")
        for db in [a, b] { InspectFixture.cli(["--db", db, "init"]) }
        let f = InspectFixture.fixtures
        InspectFixture.cli(["--db", a, "import", "google-pollen", f + "/pollen/google_pollen_forecast_DE_2025-08-03_teamjaf.json", "--at", "51.1657,10.4515"])
        _ = runProgram(InspectFixture.breeze, ["--db", a, "import", "airnow-tech-csv", f + "/monitors/airnowtech_burdens_creek_370630099_2019-08.csv", "--at", "35.8894,-78.8747"])
        // The PurpleAir registry, so the favourites name registered sensors (unknown ids are refused).
        InspectFixture.cli(["--db", a, "import", "sensors-csv", f + "/purpleair/ajl_sensors.csv"])
        for s in ["149970", "87173", "166653"] { InspectFixture.cli(["--db", a, "--user", "ana", "favourite", "add", s]) }
        func count(_ db: String, _ stream: String) -> Double {
            Double(InspectFixture.cli(["--db", db, "log", "--stream", stream, "--json"]).split(separator: "\n").count)
        }
        let publicEvents = count(a, "public"), anaEvents = count(a, "user:ana")
        #expect(publicEvents > 5 && anaEvents == 3)      // pollen days, the monitor and its readings (in blocks)

        let nodeA = Node(db: a, ["--listen", "127.0.0.1:0"] + authority.nodeArguments(db: a), log: dir.file("a.log"))
        #expect(!nodeA.sync.isEmpty && nodeA.metricsPort > 0)
        // A names no user in its labels (the default: user streams fold into `user:*`); B is asked to.
        let nodeB = Node(db: b, ["--peer", nodeA.sync, "--metrics-user-labels"] + authority.nodeArguments(db: b), log: dir.file("b.log"))
        #expect(nodeB.metricsPort > 0)
        // Caught up: B stored every event, and both know it (the lag is recomputed every second).
        var mb = try nodeB.scrape(), ma = try nodeA.scrape()
        let caughtUp = try waitUntil(seconds: 30) {
            mb = try nodeB.scrape()
            ma = try nodeA.scrape()
            return mb.value("breeze_node_events_stored_total", ["stream": "public"]) == publicEvents
                && ma.value("breeze_node_peer_lag_events") == 0 && mb.value("breeze_node_peers_connected") == 1
        }
        #expect(caughtUp, "\(String(decoding: readFileBytes(dir.file("b.log")), as: UTF8.self).suffix(600))")
        #expect(ma.value("breeze_node_peers_connected") == 1 && mb.value("breeze_node_peers_connected") == 1)
        #expect(ma.value("breeze_node_events_sent_total", ["stream": "public"]) == publicEvents)
        #expect(ma.value("breeze_node_events_sent_total", ["stream": "user:*"]) == anaEvents)
        #expect(ma.value("breeze_node_events_sent_total", ["stream": "user:ana"]) == nil, "no user id in A's labels")
        #expect(!ma.samples.contains { $0.labels.values.contains { $0.contains("ana") } }, "no user id in any of A's labels")
        #expect(mb.value("breeze_node_events_received_total", ["stream": "public"]) == publicEvents)
        #expect(mb.value("breeze_node_events_stored_total", ["stream": "user:ana"]) == anaEvents)
        #expect(ma.value("breeze_node_events_stored_total") == nil, "A received nothing to store")
        #expect(ma.value("breeze_node_peer_lag_events", ["direction": "inbound"]) == 0)
        let commits = mb.value("breeze_node_commit_seconds_count") ?? 0
        #expect(commits >= 1 && (mb.value("breeze_node_commit_seconds_sum") ?? -1) > 0)
        #expect(mb.types["breeze_node_commit_seconds"] == "histogram" && mb.types["breeze_node_events_stored_total"] == "counter")

        // A live edit on A reaches B: one more sent and stored, in its stream.
        InspectFixture.cli(["--db", a, "--user", "ana", "unit", "set", "fahrenheit"])
        #expect(try waitUntil(seconds: 10) { try nodeB.scrape().value("breeze_node_events_stored_total", ["stream": "user:ana"]) == anaEvents + 1 })

        // Refused: a connection that sends garbage instead of a handshake, and one that says nothing.
        #expect(ma.value("breeze_node_connections_refused_total", ["reason": "handshake"]) == 0)
        let port = Int(nodeA.sync.split(separator: ":").last ?? "") ?? 0
        let garbage = try #require(TCPConnection(port: port))
        garbage.send(Array(repeating: 0x41, count: 64))
        _ = garbage.readToEnd()
        #expect(try waitUntil(seconds: 10) { try nodeA.scrape().value("breeze_node_connections_refused_total", ["reason": "handshake"]) == 1 })
        let metricsOnly = httpGet(port: nodeA.metricsPort, "/")
        #expect(metricsOnly.status == 200 && httpGet(port: nodeA.metricsPort, "/other").status == 404)
    }

    @Test func theParserRefusesAMalformedExposition() throws {
        #expect(throws: PrometheusExposition.ParseError.self) { try PrometheusExposition("# HELP x a\n# TYPE x counter\nx{a=\"1\" 2\n") }
        #expect(throws: PrometheusExposition.ParseError.self) { try PrometheusExposition("y 1\n") }
        #expect(throws: PrometheusExposition.ParseError.self) {
            try PrometheusExposition("# HELP h a\n# TYPE h histogram\nh_bucket{le=\"1\"} 3\nh_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 2\n")
        }
        let ok = try PrometheusExposition("# HELP g a\n# TYPE g gauge\ng{p=\"a\\\"b\"} 2.5\n")
        #expect(ok.value("g", ["p": "a\"b"]) == 2.5)
    }

    @Test func aMetricsPortInUseIsOneLineAndExitOne() throws {
        let dir = TempDir()
        let authority = CLIAuthority(keyFile: dir.file("cluster.key"))
        let a = dir.file("a.db")
        InspectFixture.cli(["--db", a, "init"])
        let first = Node(db: a, ["--listen", "127.0.0.1:0"] + authority.nodeArguments(db: a), log: dir.file("a.log"))
        let b = dir.file("b.db")
        InspectFixture.cli(["--db", b, "init"])
        let c = Child(InspectFixture.breeze, ["--db", b, "node", "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:\(first.metricsPort)"]
                      + authority.nodeArguments(db: b), stderrPath: dir.file("err"))
        #expect(c.wait() == 1)
        let err = String(decoding: readFileBytes(dir.file("err")), as: UTF8.self)
        #expect(err.split(separator: "\n").count == 1 && err.contains("--metrics 127.0.0.1:\(first.metricsPort): address already in use"), "\(err)")
    }

    @Test func metricsOffLoopbackNeedAnExplicitFlag() throws {
        let dir = TempDir()
        let authority = CLIAuthority(keyFile: dir.file("cluster.key"))
        let a = dir.file("a.db")
        InspectFixture.cli(["--db", a, "init"])
        let c = Child(InspectFixture.breeze, ["--db", a, "node", "--listen", "127.0.0.1:0", "--metrics", "0.0.0.0:0"] + authority.nodeArguments(db: a),
                      stderrPath: dir.file("err"))
        #expect(c.wait() == 2)
        let err = String(decoding: readFileBytes(dir.file("err")), as: UTF8.self)
        #expect(err.contains("--metrics 0.0.0.0:0: not a loopback address") && err.contains("--metrics-allow-remote"), "\(err)")
        // With the flag it serves there.
        let node = Node(db: a, ["--listen", "127.0.0.1:0", "--metrics-allow-remote"] + authority.nodeArguments(db: a), log: dir.file("a.log"),
                        metrics: "0.0.0.0:0")
        #expect(node.metricsPort > 0)
        #expect(try node.scrape().value("breeze_node_peers_connected") == 0)
    }
}
