import BreezeStore
/// Every intent of the app, as one method each. Each appends one event to the user's stream in one
/// transaction and returns it once committed; observers and connected peers hear of it at once.
extension Replica {
    // MARK: Favourites and watched sensors (add-wins sets)

    /// Stars a sensor (`[SOURCE:]ID`). The star is stored under the sensor's one canonical id, `source:id`
    /// (`149970` and `purpleair:149970` are the same star), found among the sensors this replica has
    /// registered; an id no registered sensor has is refused, as is an id two sources share without a
    /// `SOURCE:`. A replica with no sensor registered at all (a device before its first sync) takes the id
    /// as given.
    ///
    /// ```swift
    /// try replica.addFavourite("131075")
    /// ```
    ///
    /// - Throws: `BreezeError.invalidArgument` for a malformed, unknown or ambiguous id; a store error when
    ///   the write fails.
    @discardableResult
    public func addFavourite(_ sensor: String, user: String? = nil) throws(BreezeError) -> Event {
        try add(sensor, user: user, favourite: true)
    }

    /// Un-stars a sensor, under every id it was starred by (`source:id` and, from before ids were canonical,
    /// the bare id). Each remove carries every add of it this replica has seen (its dots), so an add made
    /// concurrently on another device, which this replica has not seen, still wins (add-wins).
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
    ///
    /// The id is made canonical and checked as `addFavourite` does.
    @discardableResult
    public func addWatch(_ sensor: String, user: String? = nil) throws(BreezeError) -> Event {
        try add(sensor, user: user, favourite: false)
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

    private func add(_ sensor: String, user: String?, favourite: Bool) throws(BreezeError) -> Event {
        let s = try Validation.sensor(sensor), u = try resolve(user)
        let event = try withLog { log throws -> Event in
            let id = try Self.canonicalSensor(s, in: log).canonical
            return try log.append(favourite ? .favouriteAdd(sensor: id) : .watchAdd(sensor: id), to: .user(u))
        }
        committed()
        return event
    }

    private func remove(_ sensor: String, user: String?, favourite: Bool) throws(BreezeError) -> Event {
        let s = try Validation.sensor(sensor), u = try resolve(user)
        let event = try withLog { log throws -> Event in
            let forms = try Self.canonicalSensor(s, in: log, forRemoval: true).forms
            let state = try cache.state(of: u, in: log)
            let set = favourite ? state.favourites : state.watched
            let items: [(StreamID, EventBody)] = forms.compactMap { form in
                let dots = set.liveDots(of: form)
                guard !dots.isEmpty else { return nil }
                return (.user(u), favourite ? .favouriteRemove(sensor: form, observed: dots) : .watchRemove(sensor: form, observed: dots))
            }
            guard !items.isEmpty else {
                throw BreezeError(.notPresent, "sensor '\(s)' is not a \(favourite ? "favourite" : "watched sensor") of user '\(u)'; nothing removed")
            }
            return try log.append(items).last!
        }
        committed()
        return event
    }

    /// The canonical id (`source:id`) of the registered sensor `ref` names (`[SOURCE:]ID`), and every form a
    /// set may hold it under (the canonical one first, then the bare id). On a replica with no sensor
    /// registered, `ref` as given. For a removal, an id no registered sensor has is taken as given too (a
    /// star of a sensor whose registration is gone must still come off).
    static func canonicalSensor(_ ref: String, in log: EventLog, forRemoval: Bool = false) throws(BreezeError) -> (canonical: String, forms: [String]) {
        do {
            try log.catchUpProjection()
            var source: String?, id = ref
            if let colon = ref.firstIndex(of: ":") {
                source = String(ref[..<colon])
                id = String(ref[ref.index(after: colon)...])
            }
            var (found, catalogue) = try log.projectedSensors(id: id)
            if let source {
                let exact = found.filter { $0.source == source }
                if exact.isEmpty {
                    // Not `source:id`: maybe an id that holds a colon itself.
                    let whole = try log.projectedSensors(id: ref)
                    found = whole.matches
                    catalogue = catalogue || whole.catalogue
                } else {
                    found = exact
                }
            }
            if found.count == 1, let f = found.first {
                let canonical = f.source + ":" + f.sensor
                return (canonical, [canonical, f.sensor])
            }
            if found.count > 1 {
                // A bare id two sources share: a removal takes off the bare form as stored (an older star).
                if forRemoval && source == nil { return (ref, [ref]) }
                throw BreezeError(.invalidArgument, "sensor '\(ref)' is ambiguous: give one of "
                                  + found.map { $0.source + ":" + $0.sensor }.joined(separator: ", "))
            }
            guard !catalogue || forRemoval else {
                throw BreezeError(.invalidArgument, "sensor '\(ref)' is not registered on this replica: import its registration "
                                  + "(breeze import sensors-csv) or sync with a replica that has it")
            }
            return (ref, source == nil ? [ref] : [ref, id])
        } catch let e as BreezeError { throw e } catch { throw BreezeError.from(error) }
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

    /// Records that this device notified the user of an alert (`AlertsScreen.AlertEvent.key` or
    /// `TestAlert.key`), so the user's other devices show it `delivered` and do not notify again. Call it when
    /// the notification is shown for an alert whose `shouldNotify` was true.
    ///
    /// ```swift
    /// for e in alerts.events where e.shouldNotify { post(e); try replica.markAlertDelivered(e.key) }
    /// ```
    ///
    /// - Throws: `BreezeError.invalidArgument` for a key that is not an alerts screen's key
    ///   (`test|<event id>`, or `source:id|hour|fired` / `cleared`): printable ASCII, at most 256 bytes.
    @discardableResult
    public func markAlertDelivered(_ key: String, user: String? = nil) throws(BreezeError) -> Event {
        let parts = key.split(separator: "|", omittingEmptySubsequences: false)
        let shape = (parts.count == 2 && parts[0] == "test") || (parts.count == 3 && (parts[2] == "fired" || parts[2] == "cleared"))
        guard shape, !parts.contains(where: \.isEmpty), key.utf8.count <= 256,
              key.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7f }) else {
            throw BreezeError(.invalidArgument, "alert key '\(key)': expected an alerts screen key (test|<event id>, or "
                              + "source:id|hour|fired or cleared), printable ASCII, at most 256 bytes")
        }
        let u = try resolve(user)
        return try commit([(.user(u), .alertDelivered(key: key))])[0]
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
        // The decoder's rule (`EventBody`, `biomarker.target`): what it would refuse is never written.
        guard target.minReading.isFinite, target.maxReading.isFinite, target.minReading >= 0,
              target.minReading <= target.maxReading, target.maxReading < 1e9 else {
            throw BreezeError(.invalidArgument, "target of '\(target.readingType)': expected 0 <= minimum <= maximum < 1e9, finite, not \(target.minReading)-\(target.maxReading)")
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
    /// - Throws: `BreezeError.invalidArgument` for an empty reading type or unit, or a value outside what the
    ///   unit can measure (`Validation.biomarkerValue`: 0 to 1,000 mg/dL, 60 mmol/L, 100 %, ...; below 1e6 for
    ///   any other unit), as targets are range-checked.
    @discardableResult
    public func logBiomarkerReading(_ reading: BiomarkerReading, user: String? = nil) throws(BreezeError) -> Event {
        try Validation.text(reading.readingType, what: "reading type")
        try Validation.text(reading.unit, what: "unit")
        try Validation.biomarkerValue(reading.value, unit: reading.unit, what: "reading of '\(reading.readingType)'")
        let u = try resolve(user)
        return try commit([(.health(u), .biomarkerReading(reading))])[0]
    }
}
