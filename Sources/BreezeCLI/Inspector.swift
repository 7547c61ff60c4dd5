import Breeze
import BreezeCore
import BreezeInspect
import BreezeProjections
import BreezeStore
import Foundation

/// What `breeze inspect` serves: the page, and a JSON API over one database (and, with `--compare`, a second),
/// both opened read-only. Every answer is computed by the code the commands use: screens by `Screen.build` over
/// the `FactWorld` that `breeze replay` replays (`ReplayCommand.replay`), with the options `breeze screen`
/// parses (`ScreenCommand.parameters`); the log as `breeze log --json` prints it (`LogFilter`,
/// `LogCommand.json`); `ExplainCommand.explain`; `DiffCommand.compareLogs`.
///
/// API (every request needs `?token=`):
/// - `GET /`: the page.
/// - `GET /api/info`: the database(s): path, replica, last seq, streams, types, origins, users, the screens.
/// - `GET /api/screens?until=SEQ&...`: every screen's read model after seq `until` (default: the end of the
///   log), each with the options it was built with, as `breeze replay --until SEQ --screen NAME OPTIONS`
///   would build it. Options given (`user`, `sensor`, `at`, `now`, `metric`, `bbox`, `date`, and per screen
///   `NAME.OPTION`) override the defaults chosen from the data.
/// - `GET /api/screen/NAME?...`: one of them.
/// - `GET /api/state?until=SEQ&user=ID`: the user's merged settings at that point (`breeze state --json`).
/// - `GET /api/log?stream=&type=&origin=&since=&until=&after=SEQ&limit=N&db=a|b`: events, oldest first.
/// - `GET /api/event?seq=N&db=a|b`: one event, decoded.
/// - `GET /api/explain?field=unit|alert|favourite 149970|...&user=ID`: `breeze explain --json`.
/// - `GET /api/diff`: `breeze diff --json` of the two databases (with `--compare`) as `report`, and `first`: in
///   each log, the first event in seq order that the other lacks.
/// - `GET /api/events`: server-sent events, `log` each time a database gains events.
///
/// `@unchecked Sendable`: the logs and the cached worlds are used only under `lock` (libmicrohttpd calls
/// `handle` from a thread per connection); `events` is thread-safe.
final class Inspector: @unchecked Sendable {
    /// One database: its read-only log and the worlds replayed so far.
    final class Side {
        let path: String
        let log: EventLog
        /// Worlds replayed to a seq: a few kept along the log, and the newest one asked for.
        var checkpoints: [(seq: Int64, world: FactWorld, hlc: HLC)] = []
        var latest: (seq: Int64, world: FactWorld, hlc: HLC)?
        /// The types and origins seen up to `scanned` (the page's filters), and the defaults of the last end of
        /// the log asked for: each is brought up to date with what was appended since, not recomputed.
        var types: Set<String> = [], origins: Set<String> = [], scanned: Int64 = 0
        var defaults: (seq: Int64, user: String, value: Defaults)?
        init(path: String, log: EventLog) { self.path = path; self.log = log }
    }

    let a: Side
    let b: Side?
    /// The user given with `--user` (else chosen from the data).
    let givenUser: String?
    let ctx: Context
    /// The server-sent event stream the page listens to.
    let events = EventStream()
    private let lock = NSLock()
    private var diffCache: (key: [Int64], json: String)?

    init(_ a: Side, _ b: Side?, ctx: Context) {
        self.a = a
        self.b = b
        self.ctx = ctx
        givenUser = ctx.userGiven ? ctx.user : nil
    }

    func close() {
        events.close()
        a.log.close()
        b?.log.close()
    }

    /// Answers one request.
    func handle(_ r: HTTPRequest) -> HTTPResponse {
        if r.path == "/" || r.path == "/index.html" { return .text(InspectorPage.html, contentType: "text/html; charset=utf-8") }
        if r.path == "/api/events" { return .events(events.subscribe()) }
        lock.lock()
        defer { lock.unlock() }
        do {
            let side = r.query["db"] == "b" ? b : a
            guard let side else { return .error("no database to compare: start `breeze inspect` with --compare OTHER.db", status: 404) }
            switch r.path {
            case "/api/info": return .json(try info().text)
            case "/api/screens": return .json(try screens(side, r.query, only: nil).text)
            case let p where p.hasPrefix("/api/screen/"):
                let name = String(p.dropFirst("/api/screen/".count))
                guard let screen = Screens.named(name) else { return .error("unknown screen '\(name)'", status: 404) }
                return .json(try screens(side, r.query, only: screen).text)
            case "/api/state": return .json(try state(side, r.query).text)
            case "/api/log": return .json(try logPage(side, r.query).text)
            case "/api/event": return .json(try event(side, r.query).text)
            case "/api/explain": return .json(try explain(side, r.query).text)
            case "/api/diff": return .json(try diff())
            default: return .error("no such page: \(r.path)", status: 404)
            }
        } catch let e as CLIError {
            return .error(e.message, status: 400)
        } catch let e as StoreError {
            return .error(e.description, status: 500)
        } catch {
            return .error("\(error)", status: 500)
        }
    }

    // MARK: Worlds

    /// The world of `side` after seq `cut` (events in seq order, as `breeze replay --until SEQ`), continuing
    /// from the nearest world already replayed before it; every `lastSeq / 8` events a world is kept.
    func world(_ side: Side, at cut: Int64) throws -> (world: FactWorld, latest: HLC) {
        if let l = side.latest, l.seq == cut { return (l.world, l.hlc) }
        var start: (seq: Int64, world: FactWorld, hlc: HLC) = (0, FactWorld(), .zero)
        if let c = side.checkpoints.last(where: { $0.seq <= cut }) { start = c }
        if let l = side.latest, l.seq <= cut, l.seq > start.seq { start = l }
        let every = max(500, try side.log.lastSeq() / 8)
        var (seq, world, latest) = start
        while seq < cut {
            let next = min(cut, (seq / every + 1) * every)
            let (_, hlc) = try ReplayCommand.replay(side.log, to: .seq(next), onto: &world, afterSeq: seq)
            latest = max(latest, hlc)
            seq = next
            if seq % every == 0, !side.checkpoints.contains(where: { $0.seq == seq }) {
                side.checkpoints.append((seq, world, latest))
                side.checkpoints.sort { $0.seq < $1.seq }
            }
        }
        side.latest = (cut, world, latest)
        return (world, latest)
    }

    /// `until` of a query: a seq within the log, default its end.
    func cut(_ side: Side, _ q: [String: String]) throws -> Int64 {
        let last = try side.log.lastSeq()
        guard let u = q["until"], !u.isEmpty else { return last }
        guard let n = Int64(u), n >= 0 else { throw CLIError.failure("until '\(u)': expected a sequence number") }
        guard n <= last else { throw CLIError.failure("seq \(n): the log of \(side.path) ends at seq \(last)") }
        return n
    }

    // MARK: Screens

    /// The options each screen is built with: chosen from the data at the end of the log (so they do not
    /// move while the scrubber does), then overridden by the query (`sensor=...` for every air-quality screen,
    /// `detail.sensor=...` for one; `user=...` for all).
    func options(_ side: Side, _ q: [String: String]) throws -> [String: [String: String]] {
        let last = try side.log.lastSeq()
        let user = try user(side, q)
        let d: Defaults
        if let c = side.defaults, c.seq == last, c.user == user { d = c.value } else {
            d = try Inspector.defaults(try world(side, at: last).world, user: user)
            side.defaults = (last, user, d)
        }
        var out: [String: [String: String]] = [:]
        for screen in Screens.all {
            var o: [String: String] = ["user": user]
            switch screen.name {
            case "map": o["at"] = d.at; o["now"] = d.now; o["metric"] = "aqi"
            case "sheet": o["sensor"] = d.sensor; o["at"] = d.at; o["now"] = d.now
            case "detail", "history": o["sensor"] = d.sensor; o["now"] = d.now
            case "nearby", "widgets": o["at"] = d.at; o["now"] = d.now
            case "alerts", "sources": o["now"] = d.now
            case "pollen": o["at"] = d.pollenAt; o["date"] = d.pollenDate; o["now"] = d.now
            case "climate": o["sensor"] = d.station; o["date"] = d.climateDate; o["now"] = d.now
            case "biomarker": o["now"] = d.biomarkerNow ?? d.now
            default: o["now"] = d.now
            }
            // The place, sensor and time of the air-quality screens; pollen, climate and biomarker keep theirs.
            let airQuality = !["pollen", "climate", "biomarker"].contains(screen.name)
            for k in ["sensor", "at", "now", "metric", "bbox", "date"] {
                if airQuality, let v = q[k], !v.isEmpty { o[k] = v }
                if let v = q["\(screen.name).\(k)"] { o[k] = v.isEmpty ? nil : v }
            }
            out[screen.name] = o.compactMapValues { $0 }
        }
        return out
    }

    /// Defaults from the data: the user's first favourite sensor with readings, else the sensor with the
    /// most readings (PurpleAir first); `now` at the end of its newest hour; the place where it is; the first
    /// pollen place and day; the climate station and its newest day; the time of the user's newest biomarker
    /// reading.
    struct Defaults {
        var sensor: String?, at: String?, now: String?
        var pollenAt: String?, pollenDate: String?, station: String?, climateDate: String?, biomarkerNow: String?
    }

    static func defaults(_ w: FactWorld, user: String) throws -> Defaults {
        var d = Defaults()
        let sensors = try w.sensors()
        let favourites = try w.userState(user: user).favourites.elements
        func count(_ s: SensorRegistration) throws -> Int { try w.readings(source: s.source, sensor: s.sensor, from: .min, to: .max).count }
        var best: (SensorRegistration, Int)?
        for s in sensors {
            let n = try count(s)
            guard n > 0 else { continue }
            let rank = (favourites.contains(s.sensor) || favourites.contains("\(s.source):\(s.sensor)") ? 2 : 0) + (s.source == "purpleair" ? 1 : 0)
            if let (b, bn) = best {
                let bRank = (favourites.contains(b.sensor) || favourites.contains("\(b.source):\(b.sensor)") ? 2 : 0) + (b.source == "purpleair" ? 1 : 0)
                if rank < bRank || (rank == bRank && n <= bn) { continue }
            }
            best = (s, n)
        }
        if let (s, _) = best {
            d.sensor = "\(s.source):\(s.sensor)"
            if let lat = s.latitude, let lon = s.longitude { d.at = "\(lat),\(lon)" }
            if let t = try w.latestReadingTime(source: s.source, sensor: s.sensor, atOrBefore: .max) {
                d.now = iso((t / 3600 + 1) * 3600)
            }
        }
        if case .pollenForecast(let p)? = try w.facts(kind: "pollen", keyPrefix: "").first {
            d.pollenAt = "\(p.latitude),\(p.longitude)"
            d.pollenDate = p.date
        }
        if case .dailyTemperature(let t)? = try w.facts(kind: "temperature", keyPrefix: "").last {
            d.station = t.station
            d.climateDate = t.date
        }
        let readings = try w.facts(kind: "biomarker", keyPrefix: user + "|").compactMap { b -> Int64? in
            if case .biomarkerReading(let r) = b { return r.time } else { return nil }
        }
        if let t = readings.max() { d.biomarkerNow = iso(t) }
        return d
    }

    /// Whose settings the screens use: `user=` of the query, else `--user`, else the user found in the data,
    /// else `me`; checked.
    func user(_ side: Side, _ q: [String: String]) throws -> String {
        let defaultUser = Inspector.defaultUser(try side.log.streams())
        let user = q["user"] ?? givenUser ?? defaultUser ?? ctx.user
        do { try StreamID.validateUserID(user) } catch { throw CLIError.failure("user '\(user)': \(error.description)") }
        return user
    }

    /// The user whose health stream holds the most events, else whose settings stream does.
    static func defaultUser(_ streams: [StreamID]) -> String? {
        for kind in ["health:", "user:"] {
            if let s = streams.first(where: { $0.description.hasPrefix(kind) }) { return s.userID }
        }
        return nil
    }

    static func iso(_ t: Int64) -> String { ISOTime.format(millis: t * 1000).replacingOccurrences(of: ".000Z", with: "Z") }

    func screens(_ side: Side, _ q: [String: String], only: (any Screen.Type)?) throws -> JSONValue {
        let cut = try cut(side, q)
        let (world, latest) = try world(side, at: cut)
        let options = try options(side, q)
        var models: [(String, JSONValue)] = []
        for screen in only.map({ [$0] }) ?? Screens.all {
            let o = options[screen.name] ?? [:]
            var c = ctx
            c.user = o["user"] ?? ctx.user
            let args = o.filter { $0.key != "user" }.sorted { $0.key < $1.key }.flatMap { ["--\($0.key)", $0.value] }
            let model: JSONValue
            do {
                let a = try Arguments(args, valued: ScreenCommand.options, usage: ScreenCommand.optionsUsage)
                let p = try ScreenCommand.parameters(a, c, defaultNow: ReplayCommand.defaultNow(.seq(cut), latest: latest))
                model = try ReplayCommand.model(screen, world, p)
            } catch let e as CLIError {
                model = .object([("error", .string(e.message))])
            }
            models.append((screen.name, .object([
                ("options", .object(o.keys.sorted().map { ($0, .string(o[$0]!)) })), ("model", model),
            ])))
        }
        return .object([("db", .string(side.path)), ("until", .int(cut)), ("lastSeq", .int(try side.log.lastSeq())),
                        ("screens", .object(models))])
    }

    func state(_ side: Side, _ q: [String: String]) throws -> JSONValue {
        let cut = try cut(side, q)
        let user = try user(side, q)
        return try world(side, at: cut).world.userState(user: user).json(user: user)
    }

    // MARK: The log

    func logPage(_ side: Side, _ q: [String: String]) throws -> JSONValue {
        var args: [String] = []
        for k in ["stream", "origin", "since", "until"] { if let v = q[k], !v.isEmpty { args += ["--\(k)", v] } }
        if let t = q["type"], !t.isEmpty { args += ["--type", t] }
        let filter = try LogFilter(try Arguments(args, valued: LogFilter.valued, multi: LogFilter.multi, usage: LogCommand.usage))
        let limit = min(5000, max(1, Int(q["limit"] ?? "") ?? 200))
        let after = max(filter.startAfterSeq, Int64(q["after"] ?? "") ?? 0)
        var rows: [JSONValue] = []
        var more = false
        try side.log.forEach(stream: filter.stream, afterSeq: after) { entry in
            if filter.isPastEnd(entry.seq) { return false }
            guard filter.matches(entry) else { return true }
            if rows.count == limit { more = true; return false }
            rows.append(LogCommand.json(entry.event, seq: entry.seq))
            return true
        }
        return .object([("db", .string(side.path)), ("lastSeq", .int(try side.log.lastSeq())), ("events", .array(rows)),
                        ("more", .bool(more))])
    }

    func event(_ side: Side, _ q: [String: String]) throws -> JSONValue {
        guard let s = q["seq"], let seq = Int64(s), seq > 0 else { throw CLIError.failure("seq: expected a sequence number") }
        guard let entry = try side.log.page(afterSeq: seq - 1, limit: 1).first, entry.seq == seq else {
            throw CLIError.failure("no event at seq \(seq) in \(side.path)")
        }
        let e = entry.event
        guard case .object(var pairs) = LogCommand.json(e, seq: seq) else { return .null }
        pairs += [("bytes", .int(Int64(e.encoded.count))), ("clockAhead", .bool(entry.skewed)),
                  ("line", .string(LogCommand.line(entry, json: false)))]
        return .object(pairs)
    }

    func explain(_ side: Side, _ q: [String: String]) throws -> JSONValue {
        let field = (q["field"] ?? "").split(separator: " ").map(String.init)
        let fields = try ExplainCommand.parseFields(field)
        let user = try user(side, q)
        let stream = StreamID.user(user)
        let (explanations, local) = try ExplainCommand.explain(fields, stream: stream, side.log)
        return .object([("user", .string(user)), ("stream", .string(stream.description)),
                        ("fields", .array(explanations.map { ExplainCommand.json($0, local) })),
                        ("text", .array(explanations.flatMap { ExplainCommand.text($0, local, user: user) }.map(JSONValue.string)))])
    }

    func diff() throws -> String {
        guard let b else { throw CLIError.failure("no database to compare: start `breeze inspect` with --compare OTHER.db") }
        let key = [try a.log.lastSeq(), try b.log.lastSeq()]
        if let c = diffCache, c.key == key { return c.json }
        let r = try DiffCommand.compareLogs(a.log, b.log, only: nil, limit: 50, progress: { _ in })
        let report = DiffCommand.json(r.streams, r.projections, [a.path, b.path], crossDigest: r.crossDigest, differs: r.differs)
        let conflicts = Set(r.streams.flatMap(\.conflicts))
        let json = JSONValue.object([
            ("report", report),
            ("first", .object([("a", try firstDivergence(a.log, other: b.log, conflicts)), ("b", try firstDivergence(b.log, other: a.log, conflicts))])),
        ]).text
        diffCache = (key, json)
        return json
    }

    /// `diff`'s first divergence in `log`: its first event, in seq order, that `other` lacks (by its version
    /// vectors) or holds with other content; null when there is none.
    func firstDivergence(_ log: EventLog, other: EventLog, _ conflicts: Set<EventID>) throws -> JSONValue {
        let vectors = try other.versionVectors()
        var first: JSONValue = .null
        try log.forEach { entry in
            let e = entry.event
            guard !(vectors[e.stream]?.contains(e.id) ?? false) || conflicts.contains(e.id) else { return true }
            first = .object([("seq", .int(entry.seq)), ("id", .string(e.id.description)), ("stream", .string(e.stream.description)),
                             ("type", .string(e.type))])
            return false
        }
        return first
    }

    // MARK: What the page lists

    func info() throws -> JSONValue {
        func describe(_ s: Side) throws -> JSONValue {
            try s.log.forEach(afterSeq: s.scanned) { entry in
                s.types.insert(entry.event.type)
                s.origins.insert(entry.event.id.origin.replica.description)
                s.scanned = entry.seq
                return true
            }
            let (types, origins) = (s.types, s.origins)
            let streams = try s.log.streams()
            return .object([("path", .string(s.path)), ("replica", .string(s.log.replica.description)),
                            ("lastSeq", .int(try s.log.lastSeq())), ("events", .int(Int64(try s.log.count()))),
                            ("streams", .array(streams.map { .string($0.description) })),
                            ("types", .array(types.sorted().map(JSONValue.string))),
                            ("origins", .array(origins.sorted().map(JSONValue.string))),
                            ("users", .array(Array(Set(streams.compactMap(\.userID))).sorted().map(JSONValue.string)))])
        }
        return .object([("a", try describe(a)), ("b", try b.map(describe) ?? .null),
                        ("user", .string(try user(a, [:]))),
                        ("screens", .array(Screens.all.map { .object([("name", .string($0.name)), ("summary", .string($0.summary))]) })),
                        ("categories", .array(AirQualityLegendEntry.all.map {
                            .object([("category", .string($0.category)), ("title", .string($0.title)), ("low", .int(Int64($0.low))),
                                     ("high", .int(Int64($0.high))), ("colour", .string($0.colour))])
                        }))])
    }
}
