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

    /// The user's settings, merged from every event of their stream.
    public func state(user: String) throws -> UserState {
        try Validation.user(user, what: "user")
        return try cache.state(of: user, in: log)
    }

    /// The version vector of one stream (what this replica holds of it).
    public func versionVector(of stream: StreamID) throws -> VersionVector { try log.versionVector(of: stream) }

    /// The version vectors of every stream held.
    public func versionVectors() throws -> [StreamID: VersionVector] { try log.versionVectors() }

    /// How many events are held (optionally of one stream).
    public func eventCount(stream: StreamID? = nil) throws -> Int { try log.count(stream: stream) }

    /// A screen's read model, from the facts projection (brought up to date first) and the user's state.
    ///
    /// - Throws: `BreezeError.screen` when the parameters do not name what the screen needs.
    public func screen<S: Screen>(_ screen: S.Type, _ parameters: ScreenParameters) throws -> S.Model {
        try catchUpProjection()
        do { return try S.build(LogWorld(log: log, cache: cache), parameters) } catch let e as ScreenError {
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
                return
            }
        }
        try log.catchUpProjection(progress: progress)
    }
}

// Wraps a connection confined to one thread.
@available(*, unavailable)
extension ReplicaSnapshot: Sendable {}

/// `WorldReader` over the SQLite projection of a log and the cached user states.
struct LogWorld: WorldReader {
    let log: EventLog
    let cache: ReadCache
    func sensors() throws -> [SensorRegistration] { try log.projectedSensors() }
    func readings(source: String, sensor: String, from: Int64, to: Int64) throws -> [(time: Int64, values: [String: Double])] {
        try log.projectedReadings(source: source, sensor: sensor, from: from, to: to)
    }
    func hourly(source: String, sensor: String, from: Int64, to: Int64) throws -> [HourAggregate] {
        try log.projectedHourly(source: source, sensor: sensor, from: from, to: to)
    }
    func latestReadingTime(source: String, sensor: String, atOrBefore at: Int64) throws -> Int64? {
        try log.latestReadingTime(source: source, sensor: sensor, at: at)
    }
    func facts(kind: String, keyPrefix: String) throws -> [EventBody] { try log.projectedFacts(kind: kind, keyPrefix: keyPrefix) }
    func userState(user: String) throws -> UserState { try cache.state(of: user, in: log) }
}
