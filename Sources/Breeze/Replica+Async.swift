import BreezeStore
import Dispatch

/// The async API: what an app calls from the main actor or any task. Nothing here runs on the caller's
/// thread: reads go to a pool of read connections (`Options.readers`; in WAL mode a read never waits for an
/// import or a sync that is writing), writes to one serial queue of their own (they wait for each other and
/// for the synchronous API's calls, never for a read). Each has the name and arguments of its synchronous
/// twin, which stays for tools and scripts; in an `async` context Swift picks these, so a main-actor call
/// that would wait on disk does not compile without `await`.
///
/// ```swift
/// let sheet = try await replica.screen(SheetScreen.self, replica.parameters(sensor: "131075"))
/// try await replica.addFavourite("131075")
/// ```
extension Replica {
    // MARK: Reads (the reader pool)

    /// Runs `body` with a read-only view of the replica on a connection of the reader pool, off the caller's
    /// thread. The view is the last commit's: a write running meanwhile is not waited for (and not seen).
    ///
    /// ```swift
    /// let count = try await replica.read { try $0.eventCount() }
    /// ```
    public func read<T: Sendable>(_ body: @escaping @Sendable (ReplicaSnapshot) throws -> T) async throws(BreezeError) -> T {
        let path = self.path
        return try await readers.run { (reader: ReaderPool.Reader) throws(BreezeError) -> T in
            let snapshot = ReplicaSnapshot(log: reader.log, cache: reader.cache, path: path, observing: true)
            defer { snapshot.lease.end() }
            do { return try body(snapshot) } catch { throw BreezeError.from(error) }
        }
    }

    /// A screen's read model, computed on the reader pool.
    ///
    /// ```swift
    /// let pollen = try await replica.screen(PollenScreen.self, replica.parameters(at: (51.17, 10.45)))
    /// ```
    public func screen<S: Screen>(_ screen: S.Type, _ parameters: ScreenParameters) async throws(BreezeError) -> S.Model {
        try await read { try $0.screen(screen, parameters) }
    }

    /// A user's settings (default `options.user`), read on the reader pool.
    ///
    /// ```swift
    /// let unit = try await replica.state().effectiveUnit
    /// ```
    public func state(user: String? = nil) async throws(BreezeError) -> UserState {
        let u = try resolve(user)
        return try await read { try $0.state(user: u) }
    }

    /// The version vector of every stream held, read on the reader pool.
    ///
    /// ```swift
    /// let held = try await replica.versionVectors()[.user("ana")]?.total ?? 0
    /// ```
    public func versionVectors() async throws(BreezeError) -> [StreamID: VersionVector] {
        try await read { try $0.versionVectors() }
    }

    // MARK: Writes (the write queue)

    /// Runs `body` with this replica on the write queue, off the caller's thread: for a sequence of
    /// synchronous calls that belong together (they run one after another, nothing else of the async API
    /// between them).
    ///
    /// ```swift
    /// try await replica.write { r in
    ///     try r.setUnit(.celsius)
    ///     try r.addFavourite("131075")
    /// }
    /// ```
    @discardableResult
    public func write<T: Sendable>(_ body: @escaping @Sendable (Replica) throws -> T) async throws(BreezeError) -> T {
        let result: Result<T, BreezeError> = await withCheckedContinuation { c in
            writeQueue.async {
                c.resume(returning: Result { () throws(BreezeError) -> T in
                    do { return try body(self) } catch { throw BreezeError.from(error) }
                })
            }
        }
        return try result.get()
    }

    /// `addFavourite(_:user:)` on the write queue.
    ///
    /// ```swift
    /// try await replica.addFavourite("131075")
    /// ```
    @discardableResult
    public func addFavourite(_ sensor: String, user: String? = nil) async throws(BreezeError) -> Event {
        try await write { try $0.addFavourite(sensor, user: user) }
    }

    /// `removeFavourite(_:user:)` on the write queue.
    @discardableResult
    public func removeFavourite(_ sensor: String, user: String? = nil) async throws(BreezeError) -> Event {
        try await write { try $0.removeFavourite(sensor, user: user) }
    }

    /// `addWatch(_:user:)` on the write queue.
    @discardableResult
    public func addWatch(_ sensor: String, user: String? = nil) async throws(BreezeError) -> Event {
        try await write { try $0.addWatch(sensor, user: user) }
    }

    /// `removeWatch(_:user:)` on the write queue.
    @discardableResult
    public func removeWatch(_ sensor: String, user: String? = nil) async throws(BreezeError) -> Event {
        try await write { try $0.removeWatch(sensor, user: user) }
    }

    /// `setAlerts(category:onClear:enabled:user:)` on the write queue.
    @discardableResult
    public func setAlerts(category: AQICategory? = nil, onClear: OnClear? = nil, enabled: Bool? = nil,
                          user: String? = nil) async throws(BreezeError) -> Event {
        try await write { try $0.setAlerts(category: category, onClear: onClear, enabled: enabled, user: user) }
    }

    /// `requestTestAlert(sensor:user:)` on the write queue.
    @discardableResult
    public func requestTestAlert(sensor: String? = nil, user: String? = nil) async throws(BreezeError) -> Event {
        try await write { try $0.requestTestAlert(sensor: sensor, user: user) }
    }

    /// `markAlertDelivered(_:user:)` on the write queue.
    @discardableResult
    public func markAlertDelivered(_ key: String, user: String? = nil) async throws(BreezeError) -> Event {
        try await write { try $0.markAlertDelivered(key, user: user) }
    }

    /// `setUnit(_:user:)` on the write queue.
    @discardableResult
    public func setUnit(_ unit: TemperatureUnit, user: String? = nil) async throws(BreezeError) -> Event {
        try await write { try $0.setUnit(unit, user: user) }
    }

    /// `setSource(_:enabled:user:)` on the write queue.
    @discardableResult
    public func setSource(_ source: String, enabled: Bool, user: String? = nil) async throws(BreezeError) -> Event {
        try await write { try $0.setSource(source, enabled: enabled, user: user) }
    }

    /// `setCorrection(_:for:user:)` on the write queue.
    @discardableResult
    public func setCorrection(_ correction: String, for source: String, user: String? = nil) async throws(BreezeError) -> Event {
        try await write { try $0.setCorrection(correction, for: source, user: user) }
    }

    /// `setBiomarkerTarget(_:user:)` on the write queue.
    @discardableResult
    public func setBiomarkerTarget(_ target: BiomarkerTarget, user: String? = nil) async throws(BreezeError) -> Event {
        try await write { try $0.setBiomarkerTarget(target, user: user) }
    }

    /// `logBiomarkerReading(_:user:)` on the write queue.
    @discardableResult
    public func logBiomarkerReading(_ reading: BiomarkerReading, user: String? = nil) async throws(BreezeError) -> Event {
        try await write { try $0.logBiomarkerReading(reading, user: user) }
    }

    /// `importFile(_:format:options:user:progress:)` on the write queue: the caller's actor is free while the
    /// file is read, parsed and stored; `progress` is called on the queue (hop to the main actor to show it).
    ///
    /// ```swift
    /// let summary = try await replica.importFile(path, format: "purpleair-csv")
    /// ```
    public func importFile(_ path: String, format: String, options: ImportOptions = ImportOptions(), user: String? = nil,
                           progress: @escaping @Sendable (ImportProgress) -> Void = { _ in }) async throws(BreezeError) -> ImportSummary {
        try await write { try $0.importFile(path, format: format, options: options, user: user, progress: progress) }
    }

    /// `importData(_:name:format:options:user:progress:)` on the write queue.
    public func importData(_ data: [UInt8], name: String, format: String, options: ImportOptions = ImportOptions(),
                           user: String? = nil, progress: @escaping @Sendable (ImportProgress) -> Void = { _ in }) async throws(BreezeError) -> ImportSummary {
        try await write { try $0.importData(data, name: name, format: format, options: options, user: user, progress: progress) }
    }
}
