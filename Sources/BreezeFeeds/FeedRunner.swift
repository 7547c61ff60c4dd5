public import Breeze
import BreezeCore
@preconcurrency import Glibc

/// Polls one feed into a replica: GET, classify, import, and wait as `FeedPolicy` says. Every answer goes
/// through the importer of its format, so a poll that brings nothing new stores nothing (the importers keep a
/// fact once, whatever repeats it), and an answer that does not parse (malformed, truncated) stores nothing
/// and is retried. The key is sent, never logged (URLs in messages have their key arguments redacted).
///
/// `@unchecked Sendable`: a runner is handed to the one thread that runs it (`breeze feed` gives each feed its
/// own), which alone touches its mutable state; the counters, which the metrics endpoint reads from its own
/// threads while the feed runs, are behind `status`'s mutex. `Replica` is `Sendable` itself.
public final class FeedRunner: @unchecked Sendable {
    public let feed: Feed
    private let replica: Replica
    private let key: String?
    public var policy = FeedPolicy()
    /// Where each poll's line goes (`breeze feed` prints them).
    private let log: @Sendable (String) -> Void
    /// Counts since the runner started (`breeze feed` prints them when it stops; `--metrics` serves them while
    /// it runs), read from any thread.
    public var counters: Counters { status.read() }
    private let status = CountersBox()
    private var failures = 0
    private var lastRequest: Double?
    private var lastSuccessStart: Int64 = 0
    private var random = SystemRandomNumberGenerator()

    /// What the feed did.
    public struct Counters: Sendable, Equatable {
        public var polls = 0, imported = 0, storedRows = 0, duplicateRows = 0, failed = 0, throttled = 0, refused = 0
        /// When the last poll that imported started, Unix milliseconds (0: none yet).
        public var lastSuccessMillis: Int64 = 0
        /// True once the feed stopped for good (its key refused).
        public var stopped = false
    }

    public init(feed: Feed, key: String?, replica: Replica, log: @escaping @Sendable (String) -> Void) {
        self.feed = feed
        self.key = key
        self.replica = replica
        // Whatever a line quotes (a URL in a libcurl error, an answer's excerpt), the key never shows: its value,
        // as given and as sent in a URL, is replaced.
        let secrets = key.map { [$0, FeedRunner.percentEncoded($0)].filter { $0.count >= 4 } } ?? []
        self.log = { line in
            var scrubbed = line
            for s in secrets { scrubbed = scrubbed.replacingAll(s, with: "REDACTED") }
            log(scrubbed)
        }
    }

    /// One poll: the request (after the rate limit's spacing), then the import. Returns the outcome; nil when
    /// `shouldStop` said so first (while it waited for the spacing, or before the answer came: the request is
    /// abandoned, nothing is stored, and it counts as a poll of no outcome).
    public func pollOnce(shouldStop: @escaping () -> Bool = { false }) -> FeedPolicy.Outcome? {
        if let last = lastRequest {
            let until = last + feed.minSpacingSeconds
            while now() < until {
                if shouldStop() { return nil }
                usleep(UInt32(min(100_000, max(1000, (until - now()) * 1_000_000))))
            }
        }
        lastRequest = now()
        status.update { $0.polls += 1 }
        let started = Int64(time(nil))
        var url = feed.url.replacingAll("{since}", with: String(lastSuccessStart))
        if let key, feed.keyHeader == nil { url = url.replacingAll("{key}", with: FeedRunner.percentEncoded(key)) }
        let headers = (key != nil && feed.keyHeader != nil) ? ["\(feed.keyHeader!): \(key!)"] : []
        let response: HTTPGet.Response
        do {
            response = try HTTPGet.fetch(url, headers: headers, timeoutMillis: Int(feed.timeoutSeconds * 1000), shouldAbort: shouldStop)
        } catch {
            if error.isAborted {
                log("feed \(feed.name): stopping: the request in flight was abandoned")
                return nil
            }
            status.update { $0.failed += 1 }
            log("feed \(feed.name): \(error.isTimeout ? "timed out" : "no answer"): \(error.description)")
            return .failed
        }
        let excerpt = String(decoding: response.body.prefix(200), as: UTF8.self).split(separator: "\n").joined(separator: " ")
        switch response.status {
        case 200..<300: break
        case 401, 403:
            status.update { $0.refused += 1; $0.stopped = true }
            log("feed \(feed.name): the key was refused (HTTP \(response.status)): \(excerpt); not retrying: check the key, then restart the feed")
            return .refused(status: response.status)
        case 429:
            status.update { $0.throttled += 1 }
            let after = FeedPolicy.retryAfter(response.headers["retry-after"])
            log("feed \(feed.name): throttled (HTTP 429)" + (after.map { ", Retry-After \(Int($0)) s" } ?? ""))
            return .throttled(retryAfter: after)
        default:
            status.update { $0.failed += 1 }
            log("feed \(feed.name): HTTP \(response.status) from \(HTTPGet.redacted(feed.url)): \(excerpt)")
            return .failed
        }
        do {
            let s = try replica.importData(response.body, name: "\(feed.name) (\(feed.format))", format: feed.format, options: feed.options)
            status.update {
                $0.imported += 1
                $0.storedRows += s.storedRows + s.updatedRows
                $0.duplicateRows += s.duplicateRows
                $0.lastSuccessMillis = started * 1000
            }
            lastSuccessStart = started
            log("feed \(feed.name): \(s.rowsRead) rows read: \(s.storedRows) stored, \(s.updatedRows) updated, \(s.duplicateRows) already held"
                + (s.skipped.isEmpty ? "" : ", \(s.skipped.count) skipped"))
            return .imported
        } catch {
            status.update { $0.failed += 1 }
            log("feed \(feed.name): the answer could not be imported, nothing stored: \(error.description)")
            return .failed
        }
    }

    /// Polls until the key is refused, `shouldStop` says so (checked every 100 ms while waiting, and about once
    /// a second while a request is in flight, which is then abandoned), or `polls` polls were made. Returns why
    /// it stopped (nil: `shouldStop`).
    @discardableResult
    public func run(polls: Int? = nil, shouldStop: @escaping () -> Bool = { false }) -> FeedPolicy.Outcome? {
        var made = 0
        while !shouldStop() {
            guard let outcome = pollOnce(shouldStop: shouldStop) else { return nil }
            made += 1
            failures = outcome == .imported ? 0 : failures + 1
            let next = policy.next(after: outcome, failures: failures, interval: feed.intervalSeconds,
                                   random: Double.random(in: 0..<1, using: &random))
            if case .stop = next { return outcome }
            if let polls, made >= polls { return outcome }
            guard case .wait(let seconds) = next else { return outcome }
            let until = now() + seconds
            while now() < until && !shouldStop() { usleep(UInt32(min(100_000, max(1000, (until - now()) * 1_000_000)))) }
        }
        return nil
    }

    private func now() -> Double { SystemClock.monotonicSeconds() }

    /// A key as a URL query value.
    static func percentEncoded(_ s: String) -> String {
        var out = ""
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                out.append(Character(UnicodeScalar(b)))
            default:
                out += "%" + String(b, radix: 16, uppercase: true).leftPadded(2)
            }
        }
        return out
    }
}

/// A feed's counters behind a mutex: written by the feed's thread, read by the metrics endpoint's.
///
/// `@unchecked Sendable`: `value` is only touched with `mutex` held.
final class CountersBox: @unchecked Sendable {
    private var value = FeedRunner.Counters()
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    init() { pthread_mutex_init(mutex, nil) }
    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }
    func read() -> FeedRunner.Counters {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return value
    }
    func update(_ body: (inout FeedRunner.Counters) -> Void) {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        body(&value)
    }
}

extension String {
    func replacingAll(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty, contains(target) else { return self }
        var out = "", rest = Substring(self)
        while let r = rest.range(of: target) {
            out += rest[..<r.lowerBound] + replacement
            rest = rest[r.upperBound...]
        }
        return out + rest
    }

    func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
