import BreezeCore
import BreezeStore

/// What this device holds (`Protocol/sync.md` 6.7): its interests choose the fact streams (sensors' readings,
/// pollen cells, climate stations) it receives and keeps; with none it holds everything. Interests are this
/// device's own, kept in its database and never synced; the user's favourite and watched sensors are always
/// held, whatever the interests say.
extension Replica {
    /// The interests this device declared, in the order they were added.
    public func interests() throws(BreezeError) -> [Interest] {
        try withLog { log in try log.interests() }
    }

    /// How many days of readings a device keeps once it declares interests (its horizon), chosen where the
    /// interest is added.
    public enum ReadingHorizon: Equatable, Sendable {
        /// The horizon already set, else `standardDays` (14: this week and last, what History shows): a
        /// device with interests holds part of the city, and only recent readings of it.
        case standard
        /// Readings of the last `n` days (1 to 36,500), and the 12 hours NowCast looks back before them.
        case days(Int)
        /// Every reading (a device that shows older data, or replays history).
        case all

        /// The days of `standard` when none is set: 14.
        public static let standardDays = EventLog.defaultHorizonDays
    }

    /// Declares an interest: from now on sync fetches what it names and the device keeps it, for the
    /// horizon chosen here: a device with interests keeps 14 days of readings unless told otherwise, so an
    /// app that shows older data says `.all` (or `.days(n)`).
    ///
    /// ```swift
    /// try replica.addInterest(.near(latitude: 42.73, longitude: -73.69, km: 5))              // 14 days
    /// try replica.addInterest(.near(latitude: 42.73, longitude: -73.69, km: 5), keeping: .all)
    /// ```
    ///
    /// - Returns: false when it was declared already (the horizon is still applied).
    /// - Throws: `BreezeError.invalidArgument` for a radius or place out of range, or days outside 1 to 36,500.
    @discardableResult
    public func addInterest(_ interest: Interest, keeping horizon: ReadingHorizon = .standard) throws(BreezeError) -> Bool {
        try Replica.check(interest)
        let now = nowSeconds
        // The interest and its horizon in one call under the lock (the horizon first: the store checks its days).
        let added = try withLog { log in
            switch horizon {
            case .standard: break
            case .days(let d): _ = try Replica.setHorizon(days: d, in: log, now: now)
            case .all: _ = try Replica.setHorizon(days: nil, in: log, now: now)
            }
            return try log.addInterest(interest)
        }
        if added || horizon != .standard { committed() }
        return added
    }

    /// Withdraws an interest: the fact streams no other interest (or favourite) names are dropped from this
    /// device at the next sync step, and no longer received. Removing the last one makes the device hold
    /// everything again.
    ///
    /// - Throws: `BreezeError.notPresent` when it was not declared.
    public func removeInterest(_ interest: Interest) throws(BreezeError) {
        let removed = try withLog { log in try log.removeInterest(interest) }
        guard removed else { throw BreezeError(.notPresent, "\(path): no interest '\(interest)' is declared") }
        committed()
    }

    /// The fact streams the interests name now (for the user `user` or this replica's), or nil when none is
    /// declared (every stream).
    public func subscribedStreams(user: String? = nil) throws(BreezeError) -> Set<StreamID>? {
        let user = try resolve(user)
        return try withLog { log in try InterestResolver().subscription(log, user: user) }
    }

    /// The fact streams this device holds events of, sorted.
    public func heldFactStreams() throws(BreezeError) -> [StreamID] {
        try withLog { log in try log.heldFactStreams() }
    }

    /// The days of readings this device keeps (its horizon), nil for all: the horizon set, else 14 days
    /// (what History needs) for a device with interests, else none.
    public func horizonDays() throws(BreezeError) -> Int? {
        try withLog { log in try log.effectiveHorizonDays() }
    }

    /// Keeps readings for `days` days (and the 12 hours NowCast looks back before them), or every reading
    /// with nil; older ones are dropped now and as they age (by the sync node, once a minute). A dropped
    /// reading is never sent back by sync: this device's version vectors still cover it.
    ///
    /// - Returns: how many reading events were dropped now.
    /// - Throws: `BreezeError.invalidArgument` for a number of days outside 1 to 36,500.
    @discardableResult
    public func setHorizon(days: Int?) throws(BreezeError) -> Int {
        let now = nowSeconds
        let dropped = try withLog { log in try Replica.setHorizon(days: days, in: log, now: now) }
        committed()
        return dropped
    }

    /// Sets the horizon and applies it now; returns how many reading events were dropped.
    private static func setHorizon(days: Int?, in log: EventLog, now: Int64) throws -> Int {
        try log.setHorizon(days: days)
        return try log.applyHorizon(nowSeconds: now).dropped
    }

    private static func check(_ interest: Interest) throws(BreezeError) {
        // Values built in code are checked by the rules of the text form: it is parsed back (radius, box, place).
        do { _ = try Interest(words: interest.description.split(separator: " ").map(String.init)) } catch {
            throw BreezeError(.invalidArgument, "interest '\(interest)': \(error.description)")
        }
    }
}
