import BreezeStore

/// A read-only view of a replica at one moment: what an observation's closure (`Replica.observe(_:)`) and
/// `Replica.read(_:)` are handed.
///
/// It is valid only inside that closure, on the thread that called it: it wraps a database connection that
/// is not `Sendable`. Everything a screen reads goes through it, so a value observed is computed exactly as
/// `Replica.screen(_:_:)` computes it.
///
/// ```swift
/// let watched = replica.observe { snapshot in try snapshot.state(user: "ana").watched.elements }
/// ```
public struct ReplicaSnapshot {
    let log: EventLog
    let cache: ReadCache
    let path: String
    /// True on the observation thread: there, events that hold no fact leave the projection's checkpoint
    /// where it is (no write lock taken for them); a direct read moves it, so the stored checkpoint stays
    /// what `breeze verify` and `diff` compare.
    var observing = false
    /// Ended when the closure it was given to returns: using the snapshot after that is a clear error (its
    /// connection belongs to the replica's lock, which is no longer held), not a raw store error or a race.
    var lease = SnapshotLease()
    /// On the observation thread: what the value being computed reads (`ReadFootprint`), so the next commit
    /// recomputes it only when it touches that.
    var footprint: ReadFootprint?

    /// The user's settings, merged from every event of their stream.
    public func state(user: String) throws -> UserState {
        try lease.check(path)
        try Validation.user(user, what: "user")
        footprint?.userAspects = .all
        footprint?.read(user: user)
        return try cache.state(of: user, in: log)
    }

    /// The version vector of one stream (what this replica holds of it).
    public func versionVector(of stream: StreamID) throws -> VersionVector {
        try lease.check(path)
        footprint?.read(stream: stream)
        return try log.versionVector(of: stream)
    }

    /// The version vectors of every stream held.
    public func versionVectors() throws -> [StreamID: VersionVector] {
        try lease.check(path)
        footprint?.readEverything()
        return try log.versionVectors()
    }

    /// This replica's certificate status (`Replica.certificateStatus()`), for `observeCertificate`: what the
    /// node installs arrives with events of the user's stream.
    func certificateStatus(user: String) throws -> Replica.CertificateStatus? {
        try lease.check(path)
        footprint?.read(stream: .user(user))
        return try Replica.certificateStatus(log)
    }

    /// How many events are held (optionally of one stream).
    public func eventCount(stream: StreamID? = nil) throws -> Int {
        try lease.check(path)
        if let stream { footprint?.read(stream: stream) } else { footprint?.readEverything() }
        return try log.count(stream: stream)
    }

    /// A screen's read model, from the facts projection (brought up to date first) and the user's state.
    ///
    /// - Throws: `BreezeError.screen` when the parameters do not name what the screen needs.
    public func screen<S: Screen>(_ screen: S.Type, _ parameters: ScreenParameters) throws -> S.Model {
        try lease.check(path)
        try catchUpProjection()
        let checkpoint = try log.projectionCheckpoint()
        try cache.world.refresh(log, covered: max(checkpoint.seq, cache.factFreeThrough))
        footprint?.userAspects = S.userAspects
        defer { footprint?.userAspects = .all }
        do { return try S.build(LogWorld(log: log, cache: cache, footprint: footprint), parameters) } catch let e as ScreenError {
            throw BreezeError(.screen, "screen \(S.name): \(e)", underlying: e)
        }
    }

    /// Brings the facts projection up to date when facts arrived after its checkpoint. The checks read only:
    /// an observation whose screen saw only user edits arrive (screens read those from the log) takes no
    /// write lock, so it never makes a writer wait.
    func catchUpProjection(progress: (Int) -> Void = { _ in }) throws {
        let checkpoint = try log.projectionCheckpoint()
        if checkpoint.version == EventLog.projectionVersion {
            let last = try log.lastSeq()
            let from = max(checkpoint.seq, cache.factFreeThrough)
            if from >= last { return }
            if try !log.hasFacts(afterSeq: from, throughSeq: last) {
                cache.factFreeThrough = last
                if observing { return }
            }
        }
        try log.catchUpProjection(progress: progress)
    }
}

// Wraps a connection confined to one thread.
@available(*, unavailable)
extension ReplicaSnapshot: Sendable {}

/// `WorldReader` over the SQLite projection of a log, through the connection's caches: user states
/// (`ReadCache`), sensors with a spatial index and pipelines already run (`WorldCache`).
///
/// With a `footprint` (an observed value being computed), every read is recorded there.
struct LogWorld: WorldReader {
    let log: EventLog
    let cache: ReadCache
    var footprint: ReadFootprint?
    func sensors() throws -> [SensorRegistration] {
        footprint?.readSensorList()
        return try cache.world.sensors(log)
    }
    func sensors(in box: GeoBox) throws -> [SensorRegistration] {
        footprint?.readSensorList()
        return try cache.world.grid(log).candidates(south: box.south, west: box.west, north: box.north, east: box.east)
            .filter { WorldGeometry.contains(box, $0) }
    }
    func sensors(near point: (latitude: Double, longitude: Double), withinKm km: Double) throws -> [(sensor: SensorRegistration, km: Double)] {
        footprint?.readSensorList()
        return WorldGeometry.nearest(try cache.world.grid(log).candidates(near: point.latitude, point.longitude, km: km), point, km)
    }
    func airQuality(_ sensor: SensorRegistration, user: UserState, now: Int64, hours: Int) throws -> SensorAirQuality {
        footprint?.read(source: sensor.source, sensor: sensor.sensor)
        let hour = now - ((now % 3600) + 3600) % 3600
        let correction = sensor.source == "purpleair" ? user.correction(for: "purpleair") : "none"
        let e = cache.world.entry(sensor.source, sensor.sensor)
        // A sensor with pipelines kept: the one whose inputs are these (its newest reading is cached). Without
        // any (a cold map of a city), the pipeline is run at once: it finds its newest reading itself.
        if !e.quality.isEmpty {
            let last = try latestReadingTime(source: sensor.source, sensor: sensor.sensor, atOrBefore: now)
            let key = WorldCache.QualityKey(hour: hour, lastReading: last, hours: hours, correction: correction)
            if let q = e.quality[key], q.sensor == sensor { return q.at(now: now) }
        }
        let q = try SensorAirQuality(world: self, sensor: sensor, user: user, now: now, hours: hours)
        let key = WorldCache.QualityKey(hour: hour, lastReading: q.lastReading, hours: hours, correction: correction)
        if e.order.count >= WorldCache.qualitiesPerSensor { e.quality[e.order.removeFirst()] = nil }
        if e.quality[key] == nil { e.order.append(key) }
        e.quality[key] = q
        return q
    }
    func readings(source: String, sensor: String, from: Int64, to: Int64) throws -> [(time: Int64, values: [String: Double])] {
        footprint?.read(source: source, sensor: sensor)
        return try log.projectedReadings(source: source, sensor: sensor, from: from, to: to)
    }
    func hourly(source: String, sensor: String, from: Int64, to: Int64) throws -> [HourAggregate] {
        footprint?.read(source: source, sensor: sensor)
        return try log.projectedHourly(source: source, sensor: sensor, from: from, to: to)
    }
    func latestReadingTime(source: String, sensor: String, atOrBefore at: Int64) throws -> Int64? {
        footprint?.read(source: source, sensor: sensor)
        return try cache.world.latestReadingTime(log, source: source, sensor: sensor, atOrBefore: at)
    }
    func facts(kind: String, keyPrefix: String) throws -> [EventBody] {
        footprint?.read(kind: kind, from: keyPrefix, to: keyPrefix + "\u{10FFFF}")
        return try log.projectedFacts(kind: kind, keyPrefix: keyPrefix)
    }
    func facts(kind: String, keyFrom: String, keyTo: String, limit: Int?, descending: Bool) throws -> [EventBody] {
        // The whole range, whatever the limit: a new fact inside it may change which come first.
        footprint?.read(kind: kind, from: keyFrom, to: keyTo)
        return try log.projectedFacts(kind: kind, keyFrom: keyFrom, keyTo: keyTo, limit: limit, descending: descending)
    }
    func factGroups(kind: String, keyPrefix: String) throws -> [String] {
        footprint?.read(kind: kind, from: keyPrefix, to: keyPrefix + "\u{10FFFF}")
        return try log.projectedFactGroups(kind: kind, keyPrefix: keyPrefix)
    }
    func userState(user: String) throws -> UserState {
        footprint?.read(user: user)
        return try cache.state(of: user, in: log)
    }
}

/// Whether a `ReplicaSnapshot` may still be used: open while the closure it was given to runs.
///
/// `@unchecked Sendable`: `open` is read and written under `lock` (an escaped snapshot may be used from
/// another thread).
final class SnapshotLease: @unchecked Sendable {
    private let lock = Lock()
    private var open = true

    /// Ends the lease: every later use of the snapshot throws.
    func end() { lock.withLock { open = false } }

    func check(_ path: String) throws(BreezeError) {
        guard lock.withLock({ open }) else {
            throw BreezeError(.misuse, "\(path): a ReplicaSnapshot used after the read { } or observation that gave it returned; keep values, not the snapshot")
        }
    }
}
