import Breeze
import BreezeCore
import BreezeFeeds
import Dispatch
import Foundation
@preconcurrency import Glibc

/// `breeze feed --db DB --config FILE`: polls the providers' APIs into a database (a server's), each feed on a
/// thread of its own, until SIGINT or SIGTERM (or `--polls N` each). See `Feed`, `FeedRunner`, `FeedPolicy`.
enum FeedCommand {
    static let usage = """
        usage: breeze feed --db DB --config FILE [--polls N] [--metrics HOST:PORT [--metrics-allow-remote]] [--json]
          polls each feed of FILE (JSON) into DB until SIGINT/SIGTERM, or N polls each (`breeze node --feeds FILE`
          runs the same feeds inside a node); --metrics serves each feed's counters in the Prometheus format:
          {"feeds": [{"name": "purpleair", "format": "purpleair-json", "interval": 120,
                      "url": "https://api.purpleair.com/v1/sensors?fields=name,latitude,longitude,pm2.5_cf_1_a,pm2.5_cf_1_b,humidity,temperature&modified_since={since}",
                      "keyFile": "/var/lib/breeze/purpleair.key", "keyHeader": "X-API-Key"},
                     {"name": "pollen", "format": "google-pollen", "interval": 21600, "at": [42.73, -73.69], "keyEnv": "GOOGLE_POLLEN_KEY",
                      "url": "https://pollen.googleapis.com/v1/forecast:lookup?key={key}&location.latitude=42.73&location.longitude=-73.69&days=5"}]}
          fields: name, url ({key}: the key, {since}: the start of the last successful poll, Unix s), format (an import
          format), interval (s, default 120), minSpacing (s between requests, default 1), timeout (s, default 30),
          keyFile (mode 0600) or keyEnv, keyHeader, at [lat, lon], station, unit (celsius|fahrenheit), sensor
          backoff after timeouts, 5xx and malformed answers: random up to 2 s x 2^(failures-1), at most 10 min; 429: at
          least Retry-After; 401/403: the feed stops (a refused key is not retried)
        """

    nonisolated(unsafe) static var stopRequested: sig_atomic_t = 0

    static func run(_ args: [String], _ ctx: Context) throws(CLIError) {
        let a = try Arguments(args, valued: ["config", "polls", "metrics"], flags: ["metrics-allow-remote"], usage: usage)
        _ = try a.expect([])
        guard let path = a.options["config"] else { throw .usage("--config FILE is required", usage) }
        let polls = try a.options["polls"].map { s throws(CLIError) in try Arguments.positive(s, "--polls", default: 1) }
        if let m = a.options["metrics"], a.options["metrics-allow-remote"] == nil, !NodeCommand.isLoopback(m) {
            throw .usage("--metrics \(m): not a loopback address; the metrics have no token, so anyone who reaches them reads them: add --metrics-allow-remote to serve them there", usage)
        }
        let feeds = try config(path, environment: ctx.environment)
        signal(SIGINT) { _ in FeedCommand.stopRequested = 1 }
        signal(SIGTERM) { _ in FeedCommand.stopRequested = 1 }
        try ctx.withReplica { replica in
            let running = FeedThreads(feeds, replica: replica, console: ctx.console)
            let server = try a.options["metrics"].map { m throws(CLIError) in try NodeMetricsEndpoint.serve(nil, feeds: running.runners, listen: m) }
            defer { server?.stop() }
            if let server { ctx.console.out("metrics on http://\(server.address)/metrics") }
            running.start(polls: polls) { FeedCommand.stopRequested != 0 }
            running.wait()
            running.printSummaries(ctx)
            if running.runners.contains(where: { $0.counters.refused > 0 }) { throw CLIError.failure("a feed's key was refused (see above)") }
        }
    }

    /// The feeds of a configuration file, each with its key read (from its file, mode 0600, or the environment).
    static func config(_ path: String, environment: [String: String]) throws(CLIError) -> [(feed: Feed, key: String?)] {
        let text = try CredentialFiles.readText(path, option: "--config")
        let json: JSONValue
        do { json = try JSONReader.parse(text) } catch { throw .failure("--config \(path): not JSON (\(error.description))") }
        guard case .object(let top) = json, case .array(let list)? = top.first(where: { $0.0 == "feeds" })?.1, !list.isEmpty else {
            throw .failure("--config \(path): expected {\"feeds\": [ ... ]} with at least one feed")
        }
        var out: [(Feed, String?)] = []
        for (i, item) in list.enumerated() {
            guard case .object(let fields) = item else { throw .failure("--config \(path): feed \(i + 1) is not an object") }
            func value(_ name: String) -> JSONValue? { fields.first(where: { $0.0 == name })?.1 }
            func string(_ name: String, required: Bool = false) throws(CLIError) -> String? {
                switch value(name) {
                case .string(let s)?: return s
                case nil, .null?: if required { throw CLIError.failure("--config \(path): feed \(i + 1) has no \"\(name)\"") } else { return nil }
                default: throw CLIError.failure("--config \(path): feed \(i + 1): \"\(name)\" must be a string")
                }
            }
            func number(_ name: String, default d: Double) throws(CLIError) -> Double {
                switch value(name) {
                case .int(let v)?: return Double(v)
                case .double(let v)?: return v
                case nil: return d
                default: throw CLIError.failure("--config \(path): feed \(i + 1): \"\(name)\" must be a number")
                }
            }
            let name = try string("name", required: true)!
            // A feed's name labels its lines and its metrics: two of one name would be one series.
            guard !out.contains(where: { $0.0.name == name }) else { throw .failure("--config \(path): two feeds are named '\(name)'; names must differ") }
            guard !name.isEmpty, !name.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
                throw .failure("--config \(path): feed \(i + 1): the name is empty or holds control characters")
            }
            let url = try string("url", required: true)!
            let format = try string("format", required: true)!
            guard url.hasPrefix("https://") || url.hasPrefix("http://") else { throw .failure("--config \(path): feed \(name): url must be http(s)") }
            guard Replica.importFormats.contains(where: { $0.format == format }) else {
                throw .failure("--config \(path): feed \(name): unknown format '\(format)'; formats: \(Replica.importFormats.map(\.format).joined(separator: ", "))")
            }
            var options = ImportOptions()
            if case .array(let at)? = value("at") {
                func d(_ v: JSONValue) -> Double? { if case .double(let x) = v { return x }; if case .int(let x) = v { return Double(x) }; return nil }
                guard at.count == 2, let la = d(at[0]), let lo = d(at[1]), abs(la) <= 90, abs(lo) <= 180 else {
                    throw .failure("--config \(path): feed \(name): \"at\" must be [latitude, longitude]")
                }
                options.at = (la, lo)
            }
            options.station = try string("station")
            options.sensor = try string("sensor")
            if let u = try string("unit") {
                guard let unit = TemperatureUnit(name: u) else { throw .failure("--config \(path): feed \(name): unit '\(u)': celsius or fahrenheit") }
                options.unit = unit
            }
            var feed = Feed(name: name, url: url, format: format, options: options)
            feed.intervalSeconds = try number("interval", default: 120)
            feed.minSpacingSeconds = try number("minSpacing", default: 1)
            feed.timeoutSeconds = try number("timeout", default: 30)
            guard feed.intervalSeconds > 0, feed.intervalSeconds <= 30 * 86_400, feed.minSpacingSeconds >= 0, feed.minSpacingSeconds <= 86_400,
                  feed.timeoutSeconds > 0, feed.timeoutSeconds <= 3600 else {
                throw .failure("--config \(path): feed \(name): interval (0-30 days], minSpacing [0-1 day] and timeout (0-1 hour] are seconds")
            }
            feed.keyHeader = try string("keyHeader")
            if let h = feed.keyHeader, h.isEmpty || !h.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || $0 == 0x2D }) {
                throw .failure("--config \(path): feed \(name): keyHeader '\(h)' is not a header name (letters, digits, -)")
            }
            var key: String?
            if let file = try string("keyFile") {
                do { key = try Feed.readKey(file: file) } catch { throw .failure("--config \(path): feed \(name): \(error.description)") }
            } else if let env = try string("keyEnv") {
                guard let k = environment[env], !k.isEmpty else { throw .failure("--config \(path): feed \(name): the environment has no \(env)") }
                key = k
            }
            if let key, key.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
                throw .failure("--config \(path): feed \(name): the key holds control characters")
            }
            if key == nil, url.contains("{key}") || feed.keyHeader != nil {
                throw .failure("--config \(path): feed \(name): the url or keyHeader needs a key: give keyFile or keyEnv")
            }
            out.append((feed, key))
        }
        return out
    }
}

/// The feeds of a configuration polling into one replica, each on a thread of its own (each blocks between
/// its polls; a pool sized by cores would leave feeds waiting): `breeze feed`, and `breeze node --feeds`.
final class FeedThreads: Sendable {
    let runners: [FeedRunner]
    private let done = DispatchSemaphore(value: 0)

    init(_ feeds: [(feed: Feed, key: String?)], replica: Replica, console: Console) {
        let lock = PrintLock(console)
        runners = feeds.map { f in FeedRunner(feed: f.feed, key: f.key, replica: replica) { line in lock.err(line) } }
    }

    /// Starts every feed: each polls until `shouldStop` (checked every 100 ms while it waits), its key is
    /// refused, or `polls` polls.
    func start(polls: Int?, shouldStop: @escaping @Sendable () -> Bool) {
        for runner in runners {
            let done = self.done
            Thread {
                runner.run(polls: polls, shouldStop: shouldStop)
                done.signal()
            }.start()
        }
    }

    /// Waits until every feed has stopped.
    func wait() { for _ in runners { done.wait() } }

    /// A line per feed: what it did.
    func printSummaries(_ ctx: Context) {
        for r in runners {
            let c = r.counters
            if ctx.json {
                ctx.console.out(JSONValue.object([("feed", .string(r.feed.name)), ("polls", .int(Int64(c.polls))), ("imported", .int(Int64(c.imported))),
                                                  ("storedRows", .int(Int64(c.storedRows))), ("duplicateRows", .int(Int64(c.duplicateRows))),
                                                  ("failed", .int(Int64(c.failed))), ("throttled", .int(Int64(c.throttled))),
                                                  ("refused", .int(Int64(c.refused)))]).text)
            } else {
                ctx.console.out("feed \(r.feed.name): \(c.polls) polls, \(c.imported) imported, \(c.storedRows) rows stored, \(c.duplicateRows) already held, "
                                + "\(c.failed) failed, \(c.throttled) throttled, \(c.refused) refused")
            }
        }
    }
}

/// A flag one thread sets and others read: the node's feeds stop when the node does; the benchmarks and the
/// tests use it the same way.
///
/// `@unchecked Sendable`: `value` is only touched with `lock` held.
public final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    public init() {}
    public var isSet: Bool { lock.withLock { value } }
    public func set() { lock.withLock { value = true } }
}

/// The console, shared by several feeds' threads, one line at a time.
///
/// `@unchecked Sendable`: the console is used only under the mutex.
final class PrintLock: @unchecked Sendable {
    private let m = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let console: Console
    init(_ console: Console) {
        self.console = console
        pthread_mutex_init(m, nil)
    }
    deinit {
        pthread_mutex_destroy(m)
        m.deallocate()
    }
    func err(_ line: String) { pthread_mutex_lock(m); console.err(line); pthread_mutex_unlock(m) }
}
