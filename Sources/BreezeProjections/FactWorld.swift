public import BreezeCore

/// An in-memory `WorldReader` built from events (for tests and for replaying a log prefix): the same
/// last-writer-wins-by-stamp rules as the SQLite projection (`BreezeStore.ProjectionStore`).
public struct FactWorld: WorldReader, Equatable {
    private var sensorRegs: [String: LWWRegister<SensorRegistration>] = [:]
    private var points: [String: [Int64: [String: LWWRegister<Double>]]] = [:]
    private var factRows: [String: LWWRegister<EventBody>] = [:]
    private var users: [String: UserState] = [:]

    public init() {}

    /// A world holding these events.
    public init<S: Sequence>(events: S) where S.Element == Event {
        for e in events { apply(e) }
    }

    /// Applies one event (facts and user settings; others are ignored).
    public mutating func apply(_ e: Event) {
        guard EventBody.type(e.type, belongsIn: e.stream), let body = try? e.body() else { return }
        let stamp = e.stamp
        switch body {
        case .sensorRegistered(let s):
            let k = s.source + "\u{0}" + s.sensor
            sensorRegs[k] = .merge(sensorRegs[k], LWWRegister(s, stamp: stamp))
        case .reading(let r):
            put(r, stamp)
        case .readingBlock(let b):
            for r in b.readings { put(r, stamp) }
        case .readingCompaction(let c):
            // Each row with the stamp of the event it came from (a row stamped after its compaction is not one).
            for r in c.rows where r.hlc <= e.hlc && r.counter < e.id.counter {
                put(Reading(source: c.source, sensor: c.sensor, time: r.time, values: r.values),
                    Stamp(hlc: r.hlc, id: EventID(origin: e.id.origin, counter: r.counter)))
            }
        case .pollenForecast, .dailyTemperature, .biomarkerReading:
            guard let (kind, key) = body.projectionFactKey(stream: e.stream) else { return }
            put(kind, key, body, stamp)
        default:
            if case .user(let id) = e.stream { users[id, default: UserState()].apply(e) }
        }
    }

    private mutating func put(_ r: Reading, _ stamp: Stamp) {
        let k = r.source + "\u{0}" + r.sensor
        // Backwards: a quantity an event gives twice keeps its last value, as in the SQLite projection
        // (`ReadingBucket`), because on an equal stamp the register already held is kept.
        for m in r.values.reversed() where m.value.isFinite {
            points[k, default: [:]][r.time, default: [:]][m.quantity] =
                .merge(points[k]?[r.time]?[m.quantity], LWWRegister(m.value, stamp: stamp))
        }
    }

    private mutating func put(_ kind: String, _ key: String, _ body: EventBody, _ stamp: Stamp) {
        let k = kind + "\u{0}" + key
        factRows[k] = .merge(factRows[k], LWWRegister(body, stamp: stamp))
    }

    public func sensors() throws -> [SensorRegistration] {
        sensorRegs.keys.sorted().map { sensorRegs[$0]!.value }
    }

    public func readings(source: String, sensor: String, from: Int64, to: Int64) throws -> [(time: Int64, values: [String: Double])] {
        guard let series = points[source + "\u{0}" + sensor] else { return [] }
        return series.keys.filter { $0 >= from && $0 < to }.sorted().map { t in (t, series[t]!.mapValues(\.value)) }
    }

    public func latestReadingTime(source: String, sensor: String, atOrBefore at: Int64) throws -> Int64? {
        points[source + "\u{0}" + sensor]?.keys.filter { $0 <= at }.max()
    }

    public func facts(kind: String, keyPrefix: String) throws -> [EventBody] {
        let prefix = kind + "\u{0}" + keyPrefix
        return factRows.keys.filter { $0.hasPrefix(prefix) }.sorted().map { factRows[$0]!.value }
    }

    public func facts(kind: String, keyFrom: String, keyTo: String, limit: Int?, descending: Bool) throws -> [EventBody] {
        let head = kind + "\u{0}"
        var keys = factRows.keys.filter { k in
            guard k.hasPrefix(head) else { return false }
            let key = k.dropFirst(head.count)
            return key >= keyFrom[...] && key < keyTo[...]
        }.sorted()
        if descending { keys.reverse() }
        if let limit { keys = Array(keys.prefix(limit)) }
        return keys.map { factRows[$0]!.value }
    }

    public func factGroups(kind: String, keyPrefix: String) throws -> [String] {
        let head = kind + "\u{0}" + keyPrefix
        // By bytes, as SQLite compares and the store splits them.
        return Set(factRows.keys.filter { $0.utf8.starts(with: head.utf8) }.map { k in
            String(decoding: k.utf8.dropFirst(head.utf8.count).prefix { $0 != UInt8(ascii: "|") }, as: UTF8.self)
        }).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    public func userState(user: String) throws -> UserState { users[user] ?? UserState() }
}

extension Optional {
    static func merge<V>(_ a: LWWRegister<V>?, _ b: LWWRegister<V>) -> LWWRegister<V>? {
        guard let a else { return b }
        return a.merged(with: b)
    }
}
