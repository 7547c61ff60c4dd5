public import BreezeCore
import BreezeAirQuality
import Glibc

/// A device's interests (`Protocol/sync.md` 6.7), kept in its own database (`meta.interests`, one interest
/// per line in the text form): they are this device's, so they are not events and never sync.
extension EventLog {
    /// The interests this replica declared, in the order they were added; empty: it holds everything.
    public func interests() throws(StoreError) -> [Interest] {
        do {
            let q = try db.cached("SELECT value FROM meta WHERE key = 'interests'")
            defer { q.reset() }
            guard let text = try q.first({ $0.text(0) }) else { return [] }
            return text.split(separator: "\n").compactMap { try? Interest(parsing: String($0)) }
        } catch { throw StoreError.from(error, path: path) }
    }

    /// Adds an interest; false when it was declared already.
    @discardableResult
    public func addInterest(_ interest: Interest) throws(StoreError) -> Bool {
        try updateInterests { list in
            guard !list.contains(interest) else { return false }
            list.append(interest)
            return true
        }
    }

    /// Removes an interest; false when it was not declared.
    @discardableResult
    public func removeInterest(_ interest: Interest) throws(StoreError) -> Bool {
        try updateInterests { list in
            guard let i = list.firstIndex(of: interest) else { return false }
            list.remove(at: i)
            return true
        }
    }

    private func updateInterests(_ change: (inout [Interest]) -> Bool) throws(StoreError) -> Bool {
        do {
            return try db.writeTransaction {
                var list = try interests()
                guard change(&list) else { return false }
                if list.isEmpty {
                    try db.execute("DELETE FROM meta WHERE key = 'interests'")
                } else {
                    let s = try db.prepare("INSERT OR REPLACE INTO meta(key, value) VALUES ('interests', ?)")
                    try s.bind(1, list.map(\.description).joined(separator: "\n"))
                    try s.run()
                }
                return true
            }
        } catch let e as StoreError { throw e } catch { throw StoreError.from(error, path: path) }
    }

    /// The fact streams this replica holds events of (`sensor:`, `pollen:`, `climate:`), sorted.
    public func heldFactStreams() throws(StoreError) -> [StreamID] {
        do {
            let q = try db.cached("SELECT DISTINCT s.name FROM heads h JOIN streams s ON s.id = h.stream")
            var out: [StreamID] = []
            while try q.step() {
                if let s = try? StreamID(parsing: q.text(0)), s.isFactPartition { out.append(s) }
            }
            return out.sorted()
        } catch { throw StoreError.from(error, path: path) }
    }

    /// Drops every event of these fact streams, and what this replica knew it held of them (their version
    /// vectors), so it no longer holds them at all: the streams its interests no longer name. Sync then
    /// neither offers nor asks for them; naming one again fetches it whole. The projection is rebuilt when
    /// anything went (the facts it held from them are gone), and `dropGeneration` moves so readers' caches
    /// forget. Returns the events dropped. Only fact streams can be dropped: the user's own streams and
    /// `public` are refused.
    @discardableResult
    public func dropFactStreams(_ streams: [StreamID]) throws(StoreError) -> Int {
        for s in streams where !s.isFactPartition {
            throw StoreError(.invalidAppend, "stream '\(s)' is not a fact stream: only sensor:, pollen: and climate: streams can be dropped")
        }
        var dropped = 0
        do {
            try db.writeTransaction {
                // Sequence numbers are arrival order, and readers keep positions in it (a session's cursor, the
                // caches): a number must never be given out twice. SQLite gives a new row one more than the
                // greatest held, so the greatest must stay: if it goes, the newest row left takes its number
                // (it is read again by whoever had passed it, which every reader tolerates); if nothing would
                // be left, the stream holding it stays until the next drop.
                let oldMax = try db.scalarInt("SELECT max(seq) FROM events") ?? 0
                var keys: [Int64] = []
                for s in streams { if let key = try streamKey(s, create: false) { keys.append(key) } }
                guard !keys.isEmpty else { return }
                let list = keys.map(String.init).joined(separator: ",")
                if try db.scalarInt("SELECT EXISTS (SELECT 1 FROM events WHERE stream NOT IN (\(list)))") == 0,
                   let newest = try db.scalarInt("SELECT stream FROM events WHERE seq = \(oldMax)") {
                    keys.removeAll { $0 == newest }
                }
                for key in keys {
                    let del = try db.cached("DELETE FROM events WHERE stream = ?")
                    try del.bind(1, key)
                    try del.run()
                    dropped += Int(try db.scalarInt("SELECT changes()") ?? 0)
                    let heads = try db.cached("DELETE FROM heads WHERE stream = ?")
                    try heads.bind(1, key)
                    try heads.run()
                    for table in ["horizon_gaps", "retired", "compaction_marks", "rollup_marks"] {
                        let gaps = try db.cached("DELETE FROM \(table) WHERE stream = ?")
                        try gaps.bind(1, key)
                        try gaps.run()
                    }
                }
                try keepHighestSeq(oldMax)
                if dropped > 0 {
                    // In the same transaction: the projection is stale (whoever reads next rebuilds it, should
                    // this process stop before its rebuild below), and a rebuild running elsewhere starts over.
                    let g = try db.cached("SELECT value FROM meta WHERE key = 'drop_generation'").first { $0.int(0) } ?? 0
                    try setMeta("drop_generation", g + 1)
                    try setMeta("proj_version", 0)
                }
            }
        } catch { throw StoreError.from(error, path: path) }
        if dropped > 0 { try rebuildProjection() }
        return dropped
    }

    /// The `sensor.register` events of `public` stored after `afterSeq`, in log order, and the greatest
    /// sequence number the log holds (where the next call starts). Rows are filtered by type in SQL, so
    /// nothing else is decoded.
    public func registrations(afterSeq: Int64) throws(StoreError) -> (lastSeq: Int64, events: [Event]) {
        do {
            let last = try db.scalarInt("SELECT max(seq) FROM events") ?? afterSeq
            guard let key = try streamKey(.public, create: false) else { return (max(last, afterSeq), []) }
            // The stream is checked here, not in SQL: with it in the WHERE clause SQLite may read the whole
            // of `public` along `events_id` instead of the sequence numbers since the last call.
            let q = try db.cached("SELECT data, stream, flags FROM events WHERE seq > ? AND seq <= ? AND type = 'sensor.register'")
            defer { q.reset() }
            try q.bind(1, afterSeq)
            try q.bind(2, last)
            var out: [Event] = []
            while try q.step() {
                guard q.int(1) == key, q.int(2) & 2 == 0 else { continue }
                if let e = try? Event(decoding: q.blob(0), stored: true) { out.append(e) }
            }
            return (max(last, afterSeq), out)
        } catch { throw StoreError.from(error, path: path) }
    }

    /// Events of `stream` beyond `vector`, each origin's in counter order (along the id index, not the whole
    /// log): at most `limit`, origins in order. What a node sends a peer that subscribed to a stream after
    /// the scan for it began (`SyncSession.offer(stream:_:)`).
    public func streamEvents(_ stream: StreamID, beyond vector: VersionVector, limit: Int) throws(StoreError) -> [Event] {
        do {
            guard limit > 0, let key = try streamKey(stream, create: false) else { return [] }
            let heads = try db.cached("SELECT origin, epoch, counter FROM heads WHERE stream = ? ORDER BY origin, epoch")
            defer { heads.reset() }
            try heads.bind(1, key)
            var origins: [(Origin, UInt64)] = []
            while try heads.step() {
                let o = Origin(replica: ReplicaID(rawValue: UInt64(bitPattern: heads.int(0))), epoch: UInt32(truncatingIfNeeded: heads.int(1)))
                origins.append((o, UInt64(bitPattern: heads.int(2))))
            }
            var out: [Event] = []
            let q = try db.cached("SELECT data FROM events WHERE stream = ? AND origin = ? AND epoch = ? AND counter > ? ORDER BY counter LIMIT ?")
            for (o, head) in origins where head > vector[o] {
                defer { q.reset() }
                try q.bind(1, key)
                try q.bind(2, Int64(bitPattern: o.replica.rawValue))
                try q.bind(3, Int64(o.epoch))
                try q.bind(4, Int64(bitPattern: vector[o]))
                try q.bind(5, Int64(limit - out.count))
                while try q.step() { out.append(try Event(decoding: q.blob(0), stored: true)) }
                if out.count >= limit { break }
            }
            return out
        } catch let e as DecodingError {
            throw StoreError(.corrupt, "\(path): a stored event of \(stream) does not decode (\(e)); run `breeze verify`")
        } catch { throw StoreError.from(error, path: path) }
    }

    /// Moves whenever `dropFactStreams` removed events: a cache of facts built before is stale.
    public func dropGeneration() throws(StoreError) -> Int64 {
        do {
            return try db.cached("SELECT value FROM meta WHERE key = 'drop_generation'").first { $0.int(0) } ?? 0
        } catch { throw StoreError.from(error, path: path) }
    }
}

/// Turns a replica's interests into the fact streams it subscribes to (`Protocol/sync.md` 6.7): the sensors
/// within each `near` circle (by the registrations in `public`, which every replica holds) and the pollen cells
/// the circle touches, each `sensor`, `pollen` and `climate` interest, and the user's favourite and watched
/// sensors whatever the interests say. Registrations are read once and then only the new ones, so asking
/// after every commit costs what arrived.
///
/// Used with one `EventLog` by one thread at a time.
public final class InterestResolver {
    private struct Registered { var source: String; var sensor: String; var point: GeoPoint?; var stamp: HLC; var id: EventID }
    private var seq: Int64 = 0
    private var sensors: [String: Registered] = [:]
    private var bySensorID: [String: Set<String>] = [:]

    /// Most streams one subscription names (`Protocol/sync.md` 6.7, `Message.maxSubscribedStreams`: what one
    /// frame holds); interests that resolve to more are refused.
    public static let maxStreams = 50_000

    public init() {}

    /// The streams `log`'s interests name for `user` (whose favourites and watched sensors are added), or
    /// nil when it declared none (it holds everything).
    public func subscription(_ log: EventLog, user: String?) throws -> Set<StreamID>? {
        let interests = try log.interests()
        guard !interests.isEmpty else { return nil }
        try refresh(log)
        var out = Set<StreamID>()
        func sensor(_ source: String?, _ id: String) {
            if let source {
                out.insert(.sensor(source: source, sensor: id))
            } else {
                for k in bySensorID[id] ?? [] { if let r = sensors[k] { out.insert(.sensor(source: r.source, sensor: r.sensor)) } }
            }
        }
        for i in interests {
            switch i {
            case .near(let lat, let lon, let km):
                let centre = GeoPoint(latitude: lat, longitude: lon)
                for r in sensors.values {
                    if let p = r.point, p.distanceKm(to: centre) <= km { out.insert(.sensor(source: r.source, sensor: r.sensor)) }
                }
                for cell in InterestResolver.pollenCells(latitude: lat, longitude: lon, km: km) { out.insert(cell) }
            case .box(let south, let west, let north, let east):
                func inside(_ p: GeoPoint) -> Bool {
                    guard p.latitude >= south && p.latitude <= north else { return false }
                    return west <= east ? (p.longitude >= west && p.longitude <= east) : (p.longitude >= west || p.longitude <= east)
                }
                for r in sensors.values {
                    if let p = r.point, inside(p) { out.insert(.sensor(source: r.source, sensor: r.sensor)) }
                }
                let lonRanges = west <= east ? [(west, east)] : [(west, 180.0), (-180.0, east)]
                for (w, e) in lonRanges {
                    for cell in InterestResolver.pollenCells(south: south, west: w, north: north, east: e) { out.insert(cell) }
                }
            case .sensor(let source, let id):
                sensor(source, id)
            case .pollen(let lat, let lon):
                out.insert(.pollen(latitude: lat, longitude: lon))
            case .climate(let station):
                out.insert(.climate(station: station))
            }
        }
        if let user {
            let state = try log.userState(user: user)
            for ref in state.favourites.elements + state.watched.elements {
                if let colon = ref.firstIndex(of: ":") {
                    sensor(String(ref[..<colon]), String(ref[ref.index(after: colon)...]))
                } else {
                    sensor(nil, ref)
                }
            }
        }
        guard out.count <= InterestResolver.maxStreams else {
            throw StoreError(.invalidAppend, "the interests of \(log.path) name \(out.count) streams, more than \(InterestResolver.maxStreams): narrow a 'near' interest")
        }
        return out
    }

    /// The pollen cells (0.1 degree squares) that a circle's bounding box touches.
    static func pollenCells(latitude: Double, longitude: Double, km: Double) -> [StreamID] {
        let dLat = km / 111.0
        let cosLat = max(cos(latitude * .pi / 180), 0.01)
        let dLon = min(km / (111.0 * cosLat), 180)
        return pollenCells(south: latitude - dLat, west: longitude - dLon, north: latitude + dLat, east: longitude + dLon)
    }

    /// The pollen cells a box touches (west at most east).
    static func pollenCells(south: Double, west: Double, north: Double, east: Double) -> [StreamID] {
        let lat0 = StreamID.cellIndex(max(south, -90)), lat1 = StreamID.cellIndex(min(north, 90))
        let lon0 = StreamID.cellIndex(max(west, -180)), lon1 = StreamID.cellIndex(min(east, 180))
        var out: [StreamID] = []
        for a in lat0...lat1 { for o in lon0...lon1 { out.append(.pollen(StreamID.pollenCellKey(latIndex: a, lonIndex: o))) } }
        return out
    }

    /// Reads the registrations stored since the last call (the newest by timestamp wins, as in the projection).
    private func refresh(_ log: EventLog) throws {
        let (last, events) = try log.registrations(afterSeq: seq)
        seq = last
        for e in events {
            guard case .sensorRegistered(let s)? = try? e.body() else { continue }
            let k = s.source + "\u{0}" + s.sensor
            if let held = sensors[k], (held.stamp, held.id) > (e.hlc, e.id) { continue }
            let point = s.latitude.flatMap { lat in s.longitude.map { GeoPoint(latitude: lat, longitude: $0) } }
            sensors[k] = Registered(source: s.source, sensor: s.sensor, point: point ?? sensors[k]?.point, stamp: e.hlc, id: e.id)
            bySensorID[s.sensor, default: []].insert(k)
        }
    }
}
