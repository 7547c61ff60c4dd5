/// Every intent of the app, as one method each. Each appends one event to the user's stream in one
/// transaction and returns it once committed; observers and connected peers hear of it at once.
extension Replica {
    // MARK: Favourites and watched sensors (add-wins sets)

    /// Stars a sensor (`[SOURCE:]ID`).
    ///
    /// ```swift
    /// try replica.addFavourite("131075")
    /// ```
    ///
    /// - Throws: `BreezeError.invalidArgument` for a malformed id; a store error when the write fails.
    @discardableResult
    public func addFavourite(_ sensor: String, user: String? = nil) throws(BreezeError) -> Event {
        let s = try Validation.sensor(sensor), u = try resolve(user)
        return try commit([(.user(u), .favouriteAdd(sensor: s))])[0]
    }

    /// Un-stars a sensor. The remove carries every add of it this replica has seen (its dots), so an add
    /// made concurrently on another device, which this replica has not seen, still wins (add-wins).
    ///
    /// ```swift
    /// if try replica.state().favourites.contains("131075") { try replica.removeFavourite("131075") }
    /// ```
    ///
    /// - Throws: `BreezeError.notPresent` when the sensor is not a favourite here (nothing is written).
    @discardableResult
    public func removeFavourite(_ sensor: String, user: String? = nil) throws(BreezeError) -> Event {
        try remove(sensor, user: user, favourite: true)
    }

    /// Watches a sensor: the alerts screen tells the user when its air crosses their alert category.
    ///
    /// ```swift
    /// try replica.addWatch("131075")
    /// ```
    @discardableResult
    public func addWatch(_ sensor: String, user: String? = nil) throws(BreezeError) -> Event {
        let s = try Validation.sensor(sensor), u = try resolve(user)
        return try commit([(.user(u), .watchAdd(sensor: s))])[0]
    }

    /// Stops watching a sensor, with the observed dots as `removeFavourite` does.
    ///
    /// ```swift
    /// try replica.removeWatch("131075")
    /// ```
    ///
    /// - Throws: `BreezeError.notPresent` when the sensor is not watched here.
    @discardableResult
    public func removeWatch(_ sensor: String, user: String? = nil) throws(BreezeError) -> Event {
        try remove(sensor, user: user, favourite: false)
    }

    private func remove(_ sensor: String, user: String?, favourite: Bool) throws(BreezeError) -> Event {
        let s = try Validation.sensor(sensor), u = try resolve(user)
        let event = try withLog { log throws -> Event in
            let state = try cache.state(of: u, in: log)
            let dots = (favourite ? state.favourites : state.watched).liveDots(of: s)
            guard !dots.isEmpty else {
                throw BreezeError(.notPresent, "sensor '\(s)' is not a \(favourite ? "favourite" : "watched sensor") of user '\(u)'; nothing removed")
            }
            return try log.append(favourite ? .favouriteRemove(sensor: s, observed: dots) : .watchRemove(sensor: s, observed: dots),
                                  to: .user(u))
        }
        committed()
        return event
    }

    // MARK: Alerts, unit, sources (last-writer-wins registers)

    /// Changes alert settings: each field given is its own last-writer-wins register; fields left nil keep
    /// their value.
    ///
    /// ```swift
    /// try replica.setAlerts(category: .unhealthy, enabled: true)
    /// ```
    ///
    /// - Throws: `BreezeError.invalidArgument` when no field is given.
    @discardableResult
    public func setAlerts(category: AQICategory? = nil, onClear: OnClear? = nil, enabled: Bool? = nil,
                          user: String? = nil) throws(BreezeError) -> Event {
        let change = AlertChange(category: category, onClear: onClear, enabled: enabled)
        guard !change.isEmpty else {
            throw BreezeError(.invalidArgument, "nothing to set: give a category, an on-clear behaviour or enabled")
        }
        let u = try resolve(user)
        return try commit([(.user(u), .alertSet(change))])[0]
    }

    /// Asks for a test alert (optionally about one sensor); the alerts screen shows it, on every device of
    /// the user.
    ///
    /// ```swift
    /// try replica.requestTestAlert(sensor: "131075")
    /// ```
    @discardableResult
    public func requestTestAlert(sensor: String? = nil, user: String? = nil) throws(BreezeError) -> Event {
        let s = try sensor.map { s throws(BreezeError) in try Validation.sensor(s) }, u = try resolve(user)
        return try commit([(.user(u), .testAlert(sensor: s))])[0]
    }

    /// The temperature unit every screen shows (a last-writer-wins register: the latest choice on any device wins).
    ///
    /// ```swift
    /// try replica.setUnit(.fahrenheit)
    /// ```
    @discardableResult
    public func setUnit(_ unit: TemperatureUnit, user: String? = nil) throws(BreezeError) -> Event {
        let u = try resolve(user)
        return try commit([(.user(u), .unitSet(unit))])[0]
    }

    /// Turns a data source of `DataSource.catalog` on or off.
    ///
    /// ```swift
    /// try replica.setSource("airnow", enabled: false)
    /// ```
    ///
    /// - Throws: `BreezeError.invalidArgument` for a source that is not in the catalogue.
    @discardableResult
    public func setSource(_ source: String, enabled: Bool, user: String? = nil) throws(BreezeError) -> Event {
        let s = try Validation.source(source), u = try resolve(user)
        return try commit([(.user(u), enabled ? .sourceEnable(source: s.id) : .sourceDisable(source: s.id))])[0]
    }

    /// Picks the correction applied to a source's readings (`shared/docs/domain.md` section 3.2).
    ///
    /// ```swift
    /// try replica.setCorrection("epa-2021-smoke", for: "purpleair")   // during a wildfire
    /// ```
    ///
    /// - Throws: `BreezeError.invalidArgument` for an unknown source or a correction the source does not offer.
    @discardableResult
    public func setCorrection(_ correction: String, for source: String, user: String? = nil) throws(BreezeError) -> Event {
        let s = try Validation.source(source)
        try Validation.correction(correction, of: s)
        let u = try resolve(user)
        return try commit([(.user(u), .sourceCorrect(source: s.id, correction: correction))])[0]
    }

    // MARK: Biomarkers

    /// Sets the daily target of one biomarker (the gauge's range, readings a day).
    ///
    /// ```swift
    /// try replica.setBiomarkerTarget(BiomarkerTarget(readingType: "Blood Glucose", minReading: 0, maxReading: 3, icon: "drop"))
    /// ```
    ///
    /// - Throws: `BreezeError.invalidArgument` for an empty reading type or icon, a range that is not finite
    ///   or whose minimum exceeds its maximum.
    @discardableResult
    public func setBiomarkerTarget(_ target: BiomarkerTarget, user: String? = nil) throws(BreezeError) -> Event {
        try Validation.text(target.readingType, what: "reading type")
        try Validation.text(target.icon, what: "icon")
        guard target.minReading.isFinite, target.maxReading.isFinite, target.minReading >= 0,
              target.minReading <= target.maxReading else {
            throw BreezeError(.invalidArgument, "target of '\(target.readingType)': expected 0 <= minimum <= maximum, finite, not \(target.minReading)-\(target.maxReading)")
        }
        let u = try resolve(user)
        return try commit([(.user(u), .biomarkerTarget(target))])[0]
    }

    /// Logs one biomarker reading by hand (it goes to the user's `health:<id>` stream, beside a monitor's
    /// imported readings); the biomarker gauge counts it.
    ///
    /// ```swift
    /// try replica.logBiomarkerReading(BiomarkerReading(readingType: "Blood Glucose", time: now, value: 104, unit: "mg/dL"))
    /// ```
    ///
    /// - Throws: `BreezeError.invalidArgument` for an empty reading type or unit, or a value that is not finite.
    @discardableResult
    public func logBiomarkerReading(_ reading: BiomarkerReading, user: String? = nil) throws(BreezeError) -> Event {
        try Validation.text(reading.readingType, what: "reading type")
        try Validation.text(reading.unit, what: "unit")
        guard reading.value.isFinite else {
            throw BreezeError(.invalidArgument, "reading of '\(reading.readingType)': value \(reading.value) is not a finite number")
        }
        let u = try resolve(user)
        return try commit([(.health(u), .biomarkerReading(reading))])[0]
    }
}
