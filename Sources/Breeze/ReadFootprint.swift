import BreezeCore
import BreezeStore

/// What one computation of an observed value read (as GRDB's `DatabaseRegion` is what a request read): a
/// user's stream (and which parts of their state, `Screen.userAspects`), the sensor list, single sensors,
/// ranges of fact keys, whole streams, or everything. After a commit, the observation thread recomputes the
/// value only when the commit's events (`CommitChanges`) touch what it read last time.
///
/// Recorded by `LogWorld` (what a screen reads) and by `ReplicaSnapshot`'s own methods (a version vector, a
/// count: `everything` when they do not name a stream). Confined to the observation thread.
final class ReadFootprint {
    private(set) var everything = false
    private var streams: Set<StreamID> = []
    private var users: [String: UserState.Aspects] = [:]
    private var sensorList = false
    private var sensors: Set<WorldCache.SensorKey> = []
    private var factRanges: [String: [(from: String, to: String)]] = [:]
    /// The parts of a user's state that a `userState` read counts as (a screen's declaration while it builds).
    var userAspects: UserState.Aspects = .all

    func readEverything() { everything = true }
    func read(stream: StreamID) { streams.insert(stream) }
    func read(user: String) { users[user, default: []].formUnion(userAspects) }
    func readSensorList() { sensorList = true }
    func read(source: String, sensor: String) { sensors.insert(WorldCache.key(source, sensor)) }
    /// Facts of `kind` with `from <= key < to` (a prefix read is the range up to the prefix + U+10FFFF).
    func read(kind: String, from: String, to: String) {
        if factRanges[kind]?.contains(where: { $0.from == from && $0.to == to }) == true { return }
        factRanges[kind, default: []].append((from, to))
    }

    /// True when `changes` may change what this read: some event of the commit falls in it.
    func isTouched(by changes: CommitChanges) -> Bool {
        if everything || changes.everything { return true }
        if sensorList && changes.sensorList { return true }
        for (u, aspects) in users {
            if let changed = changes.users[u], !changed.isDisjoint(with: aspects) { return true }
        }
        if !streams.isDisjoint(with: changes.streams) { return true }
        if !sensors.isDisjoint(with: changes.sensors) { return true }
        for (kind, keys) in changes.facts {
            guard let ranges = factRanges[kind] else { continue }
            for k in keys {
                // Compared as SQLite compares them (bytes of UTF-8), the order the ranges were read in.
                for r in ranges where !k.utf8.lexicographicallyPrecedes(r.from.utf8) && k.utf8.lexicographicallyPrecedes(r.to.utf8) {
                    return true
                }
            }
        }
        return false
    }
}

// Confined to the observation thread.
@available(*, unavailable)
extension ReadFootprint: Sendable {}

/// What the events of one or more commits touched, in `ReadFootprint`'s terms: read from the log by the
/// observation thread for the events after those it last saw (`seq` in `(after, through]`).
struct CommitChanges {
    /// Too many events to look at (an import), or a change without an event (fact streams dropped): every
    /// value is recomputed.
    var everything = false
    var streams: Set<StreamID> = []
    var users: [String: UserState.Aspects] = [:]
    var sensorList = false
    var sensors: Set<WorldCache.SensorKey> = []
    var facts: [String: [String]] = [:]

    static let all = CommitChanges(everything: true)

    /// More events than this are not looked at one by one: `everything` (as `WorldCache` forgets everything
    /// after a large gap).
    static let scanLimit: Int64 = WorldCache.scanLimit

    /// The changes made by the events with `after < seq <= through`.
    static func scan(_ log: EventLog, after: Int64, through: Int64) throws -> CommitChanges {
        guard after >= 0, through - after <= scanLimit else { return .all }
        var c = CommitChanges()
        guard through > after else { return c }
        try log.forEach(afterSeq: after) { entry in
            guard entry.seq <= through else { return false }
            c.add(entry.event)
            return true
        }
        return c
    }

    mutating func add(_ e: Event) {
        streams.insert(e.stream)
        let known = EventBody.knownTypes[e.type] == e.schemaVersion
        if let u = e.stream.userID {
            // A type or version this build does not read may be anything to the user's state.
            users[u, default: []].formUnion(known ? UserState.Aspects.changed(byType: e.type) : .all)
        }
        if let r = EventBody.readingRows(of: e) {
            sensors.insert(WorldCache.key(r.source, r.sensor))
            return
        }
        guard known, EventBody.factTypes.contains(e.type), let body = try? e.body() else { return }
        if case .sensorRegistered(let s) = body {
            sensorList = true
            sensors.insert(WorldCache.key(s.source, s.sensor))
        } else if let (kind, key) = body.projectionFactKey(stream: e.stream) {
            facts[kind, default: []].append(key)
        }
    }
}
