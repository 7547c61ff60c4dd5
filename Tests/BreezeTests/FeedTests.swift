import Testing
import Foundation
import Breeze
import BreezeFeeds
import BreezeTestSupport
@preconcurrency import Glibc

/// Issue 28, provider feeds: `FeedRunner` against a local HTTP server (a plain socket server here, so a test
/// can answer with any status, header, delay or cut) that replays the real PurpleAir API v1 responses the
/// project ships (`Fixtures/purpleair/api_v1_responses_aiopurpleair`), with each fault the issue names.
struct FeedTests {
    static let responses = Fixtures.root + "/purpleair/api_v1_responses_aiopurpleair/"
    static var sensors: [UInt8] { readFileBytes(responses + "get_sensors_response.json") }

    /// A replica, a server with `replies` (the last repeats), and a runner polling it with short waits.
    func setUp(_ dir: TempDir, _ replies: [ScriptedHTTPServer.Reply], timeout: Double = 60) throws -> (Replica, ScriptedHTTPServer, FeedRunner) {
        let r = try Replica(path: dir.file("server.db"))
        let server = try ScriptedHTTPServer(replies)
        var feed = Feed(name: "purpleair", url: "http://127.0.0.1:\(server.port)/v1/sensors?fields=name,latitude,longitude&modified_since={since}",
                        format: "purpleair-json")
        feed.keyHeader = "X-API-Key"
        feed.intervalSeconds = 0.05
        feed.minSpacingSeconds = 0
        feed.timeoutSeconds = timeout
        let runner = FeedRunner(feed: feed, key: "secret-key-123", replica: r) { _ in }
        runner.policy.baseBackoff = 0.05
        runner.policy.maxBackoff = 0.2
        return (r, server, runner)
    }

    func registrations(_ r: Replica) throws -> Int { try r.read { try $0.eventCount(stream: .public) } }

    /// The real response is imported (5 sensors); polling again stores nothing; the key goes in its header and
    /// `{since}` becomes the start of the last successful poll.
    @Test(.timeLimit(.minutes(5)))
    func theRealResponseIsImportedOnceWhateverThePolls() throws {
        let dir = TempDir()
        let (r, server, runner) = try setUp(dir, [.init(status: 200, body: Self.sensors)])
        defer { r.close(); server.stop() }
        #expect(runner.pollOnce() == .imported)
        let stored = try registrations(r)
        #expect(stored > 0 && runner.counters.storedRows == 5)
        #expect(runner.run(polls: 2) == .imported)
        #expect(runner.counters.imported == 3 && runner.counters.storedRows == 5 && runner.counters.duplicateRows == 10, "\(runner.counters)")
        #expect(try registrations(r) == stored, "a poll that brought nothing new stored events")
        let requests = server.requests
        #expect(requests.count == 3 && requests.allSatisfy { $0.lowercased().contains("x-api-key: secret-key-123") })
        #expect(requests[0].contains("modified_since=0 ") && !requests[1].contains("modified_since=0 "), "\(requests.map { $0.prefix(120) })")
    }

    /// A request that times out (the server answers after a minute; the feed waits 2 s) stores nothing and is
    /// retried; the next answer is imported (polled until it is, as a busy machine may time out again).
    @Test(.timeLimit(.minutes(5)))
    func aTimeoutIsRetried() throws {
        let dir = TempDir()
        let (r, server, runner) = try setUp(dir, [.init(status: 200, body: Self.sensors, delayMillis: 60_000), .init(status: 200, body: Self.sensors)],
                                            timeout: 2)
        defer { r.close(); server.stop() }
        #expect(runner.pollOnce() == .failed)
        #expect(try registrations(r) == 0)
        var polls = 0
        while runner.pollOnce() != .imported && polls < 10 { polls += 1 }
        #expect(runner.counters.imported == 1 && runner.counters.storedRows == 5, "\(runner.counters)")
    }

    /// A 429 waits at least its Retry-After before the next request.
    /// A feed told to stop while its request waits for a slow provider abandons the request (libcurl asks about
    /// once a second): nothing is stored, nothing counted as failed, and it does not wait for the answer.
    @Test(.timeLimit(.minutes(5)))
    func aStopAbandonsTheRequestInFlight() throws {
        let dir = TempDir()
        let (r, server, runner) = try setUp(dir, [.init(status: 200, body: Self.sensors, delayMillis: 120_000)], timeout: 300)
        defer { server.stop(); r.close() }
        let stop = LinesSeen()
        let started = SystemClock.monotonicSeconds()
        let stopper = Thread {
            usleep(500_000)
            stop.add("stop")
        }
        stopper.start()
        let outcome = runner.run { !stop.all.isEmpty }
        let took = SystemClock.monotonicSeconds() - started
        #expect(outcome == nil, "stopped, not an outcome of a poll")
        #expect(took < 60, "returned \(took) s after it started: before the answer due after 120 s")
        #expect(server.requests.count == 1)
        #expect(runner.counters.polls == 1 && runner.counters.failed == 0 && runner.counters.imported == 0)
        #expect(try registrations(r) == 0)
    }

    @Test(.timeLimit(.minutes(5)))
    func a429WaitsForRetryAfter() throws {
        let dir = TempDir()
        let (r, server, runner) = try setUp(dir, [.init(status: 429, headers: ["Retry-After: 1"], body: Array(#"{"error":"RateLimitError"}"#.utf8)),
                                                  .init(status: 200, body: Self.sensors)])
        defer { r.close(); server.stop() }
        #expect(runner.run(polls: 2) == .imported)
        #expect(runner.counters.throttled == 1 && runner.counters.storedRows == 5)
        let times = server.times
        #expect(times.count == 2 && times[1] - times[0] >= 0.99, "the retry came \(times.count == 2 ? times[1] - times[0] : -1) s after the 429")
    }

    /// A 500 is retried after a backoff; nothing is stored twice.
    @Test(.timeLimit(.minutes(5)))
    func a500IsRetried() throws {
        let dir = TempDir()
        let (r, server, runner) = try setUp(dir, [.init(status: 500, body: Array("internal error".utf8)), .init(status: 200, body: Self.sensors)])
        defer { r.close(); server.stop() }
        #expect(runner.run(polls: 3) == .imported)
        #expect(runner.counters.failed == 1 && runner.counters.storedRows == 5 && runner.counters.duplicateRows == 5, "\(runner.counters)")
    }

    /// A malformed answer stores nothing and is retried.
    @Test(.timeLimit(.minutes(5)))
    func aMalformedAnswerStoresNothing() throws {
        let dir = TempDir()
        let (r, server, runner) = try setUp(dir, [.init(status: 200, body: Array(#"{"fields": ["sensor_index", "name"], "data": [[1, "#.utf8)),
                                                  .init(status: 200, body: Self.sensors)])
        defer { r.close(); server.stop() }
        #expect(runner.pollOnce() == .failed)
        #expect(try registrations(r) == 0)
        #expect(runner.pollOnce() == .imported)
        #expect(runner.counters.storedRows == 5)
    }

    /// A body cut short of its Content-Length is a failure (libcurl sees it), stores nothing, and is retried.
    @Test(.timeLimit(.minutes(5)))
    func aTruncatedBodyStoresNothing() throws {
        let dir = TempDir()
        let (r, server, runner) = try setUp(dir, [.init(status: 200, body: Self.sensors, truncateTo: 300), .init(status: 200, body: Self.sensors)])
        defer { r.close(); server.stop() }
        #expect(runner.pollOnce() == .failed)
        #expect(try registrations(r) == 0)
        #expect(runner.pollOnce() == .imported)
        #expect(runner.counters.storedRows == 5)
    }

    /// A refused key (the real 401 answer) stops the feed at once: no retry, nothing stored.
    @Test(.timeLimit(.minutes(5)))
    func aRefusedKeyStopsTheFeed() throws {
        let dir = TempDir()
        let (r, server, runner) = try setUp(dir, [.init(status: 401, body: readFileBytes(Self.responses + "error_invalid_api_key_response.json"))])
        defer { r.close(); server.stop() }
        #expect(runner.run(polls: 5) == .refused(status: 401))
        #expect(try registrations(r) == 0)
        #expect(server.requests.count == 1 && runner.counters.refused == 1)
    }

    /// The policy: full jitter within the doubling bound and the cap, at least Retry-After, a refused key stops.
    @Test func thePolicyBacksOffWithJitterAndStopsOnARefusedKey() {
        let p = FeedPolicy()
        #expect(p.next(after: .imported, failures: 0, interval: 120, random: 0.5) == .wait(120))
        #expect(p.next(after: .refused(status: 403), failures: 1, interval: 120, random: 0.5) == .stop)
        for n in 1...12 {
            for rnd in [0.0, 0.3, 0.999] {
                guard case .wait(let w) = p.next(after: .failed, failures: n, interval: 120, random: rnd) else { Issue.record("no wait"); continue }
                #expect(w >= 0.2 && w <= min(600, 2 * pow(2, Double(n - 1))), "failures \(n), random \(rnd): \(w)")
            }
        }
        #expect(p.next(after: .throttled(retryAfter: 30), failures: 1, interval: 120, random: 0.1) == .wait(30))
        #expect(FeedPolicy.retryAfter("7") == 7 && FeedPolicy.retryAfter("Wed, 21 Oct 2015 07:28:00 GMT") == nil)
    }

    /// The Google Pollen feed (key in the URL) and the AirNow feed import their real answers (the shipped
    /// `forecast:lookup` response and AirNow API file); the key reaches the server and none of the feed's lines.
    @Test(.timeLimit(.minutes(5)))
    func thePollenAndAirNowFeedsImportTheirRealAnswers() throws {
        let dir = TempDir()
        let r = try Replica(path: dir.file("server.db"))
        defer { r.close() }
        let pollenServer = try ScriptedHTTPServer([.init(status: 200, body: readFileBytes(Fixtures.root + "/pollen/google_pollen_forecast_DE_2025-08-03_teamjaf.json"))])
        let airnowServer = try ScriptedHTTPServer([.init(status: 200, body: readFileBytes(Fixtures.root + "/monitors/sensortoolkit_AirNow_raw_370630099_PM25_B190801_E190902.csv"))])
        defer { pollenServer.stop(); airnowServer.stop() }
        let lines = LinesSeen()
        var pollenOptions = ImportOptions()
        pollenOptions.at = (51.1657, 10.4515)
        var pollen = Feed(name: "pollen-de", url: "http://127.0.0.1:\(pollenServer.port)/v1/forecast:lookup?key={key}&location.latitude=51.1657&location.longitude=10.4515&days=5",
                          format: "google-pollen", options: pollenOptions)
        pollen.minSpacingSeconds = 0
        let pollenRunner = FeedRunner(feed: pollen, key: "g/key+1", replica: r) { lines.add($0) }
        #expect(pollenRunner.pollOnce() == .imported)
        #expect(pollenRunner.counters.storedRows == 5, "\(pollenRunner.counters)")
        #expect(pollenServer.requests.first?.contains("key=g%2Fkey%2B1&") == true, "\(pollenServer.requests.first?.prefix(100) ?? "")")
        var airnow = Feed(name: "airnow", url: "http://127.0.0.1:\(airnowServer.port)/aq/data/?API_KEY={key}", format: "airnow-api")
        airnow.minSpacingSeconds = 0
        let airnowRunner = FeedRunner(feed: airnow, key: "AIRNOWKEY7", replica: r) { lines.add($0) }
        #expect(airnowRunner.pollOnce() == .imported)
        #expect(airnowRunner.counters.storedRows > 1000, "\(airnowRunner.counters)")
        #expect(airnowRunner.pollOnce() == .imported)
        #expect(airnowRunner.counters.duplicateRows == airnowRunner.counters.storedRows, "\(airnowRunner.counters)")
        let pollenModel = try r.screen(PollenScreen.self, r.parameters(now: 1_754_222_400, at: (51.1657, 10.4515)))
        #expect(!pollenModel.isEmpty)
        // A key in the URL's path, where no argument name says it is one, is not shown either when the request fails.
        var refused = Feed(name: "nowhere", url: "http://127.0.0.1:1/{key}/sensors", format: "purpleair-json")
        refused.minSpacingSeconds = 0
        let nowhere = FeedRunner(feed: refused, key: "PATHKEY9", replica: r) { lines.add($0) }
        #expect(nowhere.pollOnce() == .failed)
        #expect(lines.all.contains { $0.contains("feed nowhere") })
        #expect(!lines.all.contains { $0.contains("g/key") || $0.contains("g%2Fkey") || $0.contains("AIRNOWKEY7") || $0.contains("PATHKEY9") }, "\(lines.all)")
    }

    /// The temperature feed (Open-Meteo's archive API, no key) imports an answer of the shape its documentation
    /// gives (`shared/docs/domain.md` section 5; the project ships no real one): days with a missing value stay
    /// missing, the station is the grid cell the API answered with, and polling again stores nothing.
    @Test(.timeLimit(.minutes(5)))
    func theTemperatureFeedImportsTheDocumentedShape() throws {
        let dir = TempDir()
        let r = try Replica(path: dir.file("server.db"))
        defer { r.close() }
        let answer = #"{"latitude": 34.68, "longitude": -82.82, "generationtime_ms": 0.5, "utc_offset_seconds": 0, "timezone": "GMT", "#
            + #""daily_units": {"time": "iso8601", "temperature_2m_max": "°C", "temperature_2m_min": "°C"}, "#
            + #""daily": {"time": ["2026-12-01", "2026-12-02", "2026-12-03"], "temperature_2m_max": [14.2, null, 11.8], "temperature_2m_min": [3.1, 4.0, null]}}"#
        let server = try ScriptedHTTPServer([.init(status: 200, body: Array(answer.utf8))])
        defer { server.stop() }
        var feed = Feed(name: "clemson", url: "http://127.0.0.1:\(server.port)/v1/archive?latitude=34.68&longitude=-82.82&daily=temperature_2m_max,temperature_2m_min",
                        format: "daily-temperature")
        feed.minSpacingSeconds = 0
        let runner = FeedRunner(feed: feed, key: nil, replica: r) { _ in }
        #expect(runner.pollOnce() == .imported)
        #expect(runner.counters.storedRows == 3, "\(runner.counters)")
        #expect(runner.pollOnce() == .imported)
        #expect(runner.counters.storedRows == 3 && runner.counters.duplicateRows == 3, "\(runner.counters)")
        var p = r.parameters(now: 1_764_892_800, sensor: "open-meteo:34.68,-82.82")
        p.date = "2026-12-03"
        let chart = try r.screen(ClimateScreen.self, p)
        #expect(chart.station == "open-meteo:34.68,-82.82" && chart.status != "no-station", "\(chart.station ?? "none") \(chart.status)")
    }

    /// `breeze feed` runs a configuration's feed (key from a 0600 file) into a database and says what it did;
    /// the key is sent and appears in none of its output.
    @Test(.timeLimit(.minutes(5)))
    func theFeedCommandPollsAConfiguration() throws {
        let dir = TempDir()
        let server = try ScriptedHTTPServer([.init(status: 200, body: Self.sensors)])
        defer { server.stop() }
        #expect(runBreeze(["--db", dir.file("s.db"), "init"]).code == 0)
        try Data("# PurpleAir read key\nkey-from-file-42\n".utf8).write(to: URL(fileURLWithPath: dir.file("pa.key")))
        chmod(dir.file("pa.key"), 0o600)
        // Three feeds (more than this machine's cores: each has a thread of its own).
        let feeds = (1...3).map { i in
            #"{"name": "purpleair\#(i)", "format": "purpleair-json", "interval": 0.05, "minSpacing": 0, "keyFile": ""# + dir.file("pa.key")
                + #"", "keyHeader": "X-API-Key", "url": "http://127.0.0.1:"# + String(server.port) + #"/v1/sensors?modified_since={since}"}"#
        }
        let config = #"{"feeds": ["# + feeds.joined(separator: ", ") + "]}"
        try Data(config.utf8).write(to: URL(fileURLWithPath: dir.file("feeds.json")))
        let run = runProgramWithErrors(breeze, ["--db", dir.file("s.db"), "feed", "--config", dir.file("feeds.json"), "--polls", "2"])
        #expect(run.code == 0, "\(run.err)")
        let summaries = run.out.split(separator: "\n").filter { $0.contains("2 polls, 2 imported") }
        #expect(summaries.count == 3, "\(run.out)")
        #expect(run.out.contains("5 rows stored"), "\(run.out)")
        #expect(!run.out.contains("key-from-file-42") && !run.err.contains("key-from-file-42"))
        #expect(server.requests.allSatisfy { $0.contains("key-from-file-42") })
    }

    /// `breeze node --feeds`: a node polls a feed into its database while it runs; its `--metrics` count the
    /// feed's polls by outcome (a 500 among them), the rows stored and already held, and when it last imported;
    /// SIGTERM stops the feed with the node. `breeze feed --metrics` serves the same counters alone.
    @Test(.timeLimit(.minutes(5)))
    func aNodeRunsTheFeedsAndCountsThemInItsMetrics() throws {
        let dir = TempDir()
        let db = dir.file("s.db")
        #expect(runBreeze(["--db", db, "init"]).code == 0)
        for (name, args) in [("node", ["node", "--listen", "127.0.0.1:0", "--feeds", dir.file("feeds.json")]
                                        + CLIAuthority(breeze: breeze, keyFile: dir.file("cluster.key")).nodeArguments(db: db)),
                             ("feed", ["feed", "--config", dir.file("feeds.json")])] {
            // The API answers, fails once with a 500, then answers again (and again).
            let server = try ScriptedHTTPServer([.init(status: 200, body: Self.sensors), .init(status: 500, body: Array("oops".utf8)),
                                                 .init(status: 200, body: Self.sensors)])
            defer { server.stop() }
            let config = #"{"feeds": [{"name": "purpleair", "format": "purpleair-json", "interval": 0.05, "minSpacing": 0, "url": "http://127.0.0.1:"#
                + String(server.port) + #"/v1/sensors?modified_since={since}"}]}"#
            try Data(config.utf8).write(to: URL(fileURLWithPath: dir.file("feeds.json")))
            let child = Child(breeze, ["--db", db] + args + ["--metrics", "127.0.0.1:0"], stderrPath: dir.file("\(name).log"))
            var port = 0
            while let l = child.readLine() {
                if l.hasPrefix("metrics on http://"), let colon = l.dropFirst(18).firstIndex(of: ":") {
                    port = Int(l[l.index(after: colon)...].prefix { $0.isNumber }) ?? 0
                    if name == "feed" { break }
                }
                if l.hasPrefix("feeds polling: purpleair") { break }
            }
            #expect(port > 0, "\(name): \(String(decoding: readFileBytes(dir.file("\(name).log")), as: UTF8.self).suffix(500))")
            var m: PrometheusExposition?
            let counted = try waitUntil(seconds: 60) {
                m = try PrometheusExposition(httpGet(port: port, "/metrics").body)
                return (m?.value("breeze_feed_polls_total", ["feed": "purpleair", "outcome": "imported"]) ?? 0) >= 2
                    && (m?.value("breeze_feed_polls_total", ["feed": "purpleair", "outcome": "failed"]) ?? 0) >= 1
            }
            #expect(counted, "\(name): \(String(decoding: readFileBytes(dir.file("\(name).log")), as: UTF8.self).suffix(500))")
            // The node's own families sit beside the feed's; `breeze feed` serves the feed's alone.
            #expect((m?.types["breeze_node_peers_connected"] != nil) == (name == "node"))
            #expect(m?.types["breeze_feed_polls_total"] == "counter")
            // The first run stores the answer's 5 sensors; every later poll (and the second command) holds them.
            #expect(m?.value("breeze_feed_rows_total", ["feed": "purpleair", "result": "stored"]) == (name == "node" ? 5 : 0))
            #expect((m?.value("breeze_feed_rows_total", ["feed": "purpleair", "result": "held"]) ?? 0) >= 5)
            #expect((m?.value("breeze_feed_last_success_time_seconds", ["feed": "purpleair"]) ?? 0) > 1_700_000_000)
            #expect(m?.value("breeze_feed_up", ["feed": "purpleair"]) == 1)
            child.signal(SIGTERM)
            var rest: [String] = []
            while let l = child.readLine() { rest.append(l) }
            #expect(child.wait() == 0)
            // What it did, when it stops (stdout); each poll's line on stderr.
            #expect(rest.contains { $0.hasPrefix("feed purpleair: ") && $0.contains("polls") }, "\(name): \(rest)")
            let log = String(decoding: readFileBytes(dir.file("\(name).log")), as: UTF8.self)
            #expect(log.contains("feed purpleair: HTTP 500"), "\(name): \(log.suffix(500))")
        }
        let r = try Replica(path: db)
        defer { r.close() }
        #expect(try registrations(r) == 5)
    }

    /// A key file others may read is refused; the CLI's configuration names a bad field.
    @Test func aKeyFileOthersMayReadIsRefused() throws {
        let dir = TempDir()
        try Data("secret\n".utf8).write(to: URL(fileURLWithPath: dir.file("k")))
        chmod(dir.file("k"), 0o644)
        #expect(throws: FeedError.self) { try Feed.readKey(file: dir.file("k")) }
        chmod(dir.file("k"), 0o600)
        #expect(try Feed.readKey(file: dir.file("k")) == "secret")
        // Read as a private key is: a directory (or a device, a FIFO) is not a key file, whatever its mode.
        mkdir(dir.file("d"), 0o700)
        #expect { try Feed.readKey(file: dir.file("d")) } throws: { ($0 as? FeedError)?.description.contains("not a regular file") == true }
        #expect(runBreeze(["--db", dir.file("a.db"), "init"]).code == 0)
        try Data(#"{"feeds": [{"name": "x", "url": "ftp://example", "format": "purpleair-json"}]}"#.utf8).write(to: URL(fileURLWithPath: dir.file("c.json")))
        let bad = runProgramWithErrors(breeze, ["--db", dir.file("a.db"), "feed", "--config", dir.file("c.json")])
        #expect(bad.code != 0 && bad.err.contains("url must be http"), "\(bad.err)")
        // Two feeds of one name would be one series in the metrics.
        let twice = #"{"name": "pa", "url": "http://127.0.0.1:9/x", "format": "purpleair-json"}"#
        try Data((#"{"feeds": ["# + twice + ", " + twice + "]}").utf8).write(to: URL(fileURLWithPath: dir.file("c.json")))
        let dup = runProgramWithErrors(breeze, ["--db", dir.file("a.db"), "feed", "--config", dir.file("c.json")])
        #expect(dup.code != 0 && dup.err.contains("two feeds are named 'pa'"), "\(dup.err)")
    }
}

/// Lines a feed logged.
final class LinesSeen: @unchecked Sendable {
    // `@unchecked Sendable`: `lines` is guarded by `lock`.
    private let lock = TestLock()
    private var lines: [String] = []
    func add(_ l: String) { lock.run { lines.append(l) } }
    var all: [String] { lock.run { lines } }
}

/// An HTTP/1.1 server on 127.0.0.1 that answers each request with the next scripted reply (the last repeats):
/// any status and headers, a delay, a body cut short of its Content-Length. Records each request's head and
/// when it arrived.
///
/// `@unchecked Sendable`: `requests`, `times` and `next` are guarded by `lock`; the socket is closed by `stop`.
final class ScriptedHTTPServer: @unchecked Sendable {
    struct Reply: Sendable {
        var status: Int
        var headers: [String] = []
        var body: [UInt8]
        var truncateTo: Int? = nil
        var delayMillis: Int = 0
    }

    let port: Int
    private let fd: Int32
    private let replies: [Reply]
    private let lock = TestLock()
    private var heads: [String] = []
    private var arrivals: [Double] = []
    private var next = 0
    private var stopped = false

    var requests: [String] { lock.run { heads } }
    var times: [Double] { lock.run { arrivals } }

    init(_ replies: [Reply]) throws {
        self.replies = replies
        let (fd, port) = try ScriptedHTTPServer.listenLocal()
        self.fd = fd
        self.port = port
        let t = Thread { [self] in acceptLoop() }
        t.start()
    }

    private static func listenLocal() throws -> (Int32, Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        let bound = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0, listen(fd, 16) == 0 else { close(fd); throw FeedError("test server: cannot listen") }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        return (fd, Int(UInt16(bigEndian: addr.sin_port)))
    }

    func stop() {
        lock.run { stopped = true }
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
    }

    private func acceptLoop() {
        while true {
            let c = accept(fd, nil, nil)
            if c < 0 { if lock.run({ stopped }) { return }; continue }
            let t = Thread { [self] in serve(c) }
            t.start()
        }
    }

    private func serve(_ c: Int32) {
        defer { close(c) }
        var head: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 4096)
        while !(head.count >= 4 && head.suffix(4) == [13, 10, 13, 10]) {
            let n = read(c, &buf, buf.count)
            if n <= 0 { return }
            head += buf[0..<n]
        }
        let reply: Reply = lock.run {
            heads.append(String(decoding: head, as: UTF8.self))
            arrivals.append(now())
            defer { next += 1 }
            return replies[min(next, replies.count - 1)]
        }
        if reply.delayMillis > 0 { usleep(UInt32(reply.delayMillis) * 1000) }
        var out = "HTTP/1.1 \(reply.status) Scripted\r\nContent-Type: application/json\r\nContent-Length: \(reply.body.count)\r\nConnection: close\r\n"
        for h in reply.headers { out += h + "\r\n" }
        out += "\r\n"
        let bytes = Array(out.utf8) + reply.body.prefix(reply.truncateTo ?? reply.body.count)
        _ = bytes.withUnsafeBytes { send(c, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }
}
