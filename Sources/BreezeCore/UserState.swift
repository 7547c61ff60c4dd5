import BreezeCrypto

/// One user's settings, reduced from the events of their `user:<id>` stream with CRDTs, so every replica
/// that has seen the same events holds the same `UserState` (and the same `stateHash`), whatever the order
/// of arrival and however many duplicates.
///
/// - favourites, watched sensors: add-wins observed-remove sets;
/// - alert category, on-clear behaviour, alerts enabled, temperature unit: last-writer-wins registers;
/// - enabled sources, correction per source, biomarker targets: last-writer-wins maps;
/// - test alert requests: a grow-only set keyed by event id.
public struct UserState: Hashable, Sendable {
    public private(set) var favourites = ORSet<String>()
    public private(set) var watched = ORSet<String>()
    public private(set) var alertCategory: LWWRegister<AQICategory>?
    public private(set) var alertOnClear: LWWRegister<OnClear>?
    public private(set) var alertsEnabled: LWWRegister<Bool>?
    public private(set) var unit: LWWRegister<TemperatureUnit>?
    public private(set) var sourcesEnabled = LWWMap<String, Bool>()
    public private(set) var corrections = LWWMap<String, String>()
    public private(set) var biomarkerTargets = LWWMap<String, BiomarkerTarget>()
    public private(set) var testAlerts = FactSet<EventID, String>()
    /// Alerts some device of the user has notified, by key (`AlertsScreen`): the replica that delivered each
    /// (hex), so another device that sees the key does not notify again. Grow-only.
    public private(set) var deliveredAlerts = FactSet<String, String>()
    /// Events skipped because this build does not know their type or version (not part of the state hash:
    /// a newer build would reduce them).
    public private(set) var skippedUnknown = 0

    /// The defaults a user sees before changing anything.
    public enum Defaults {
        public static let alertCategory = AQICategory.usg
        public static let onClear = OnClear.notify
        public static let alertsEnabled = true
        public static let unit = TemperatureUnit.celsius
    }

    /// An empty state (all defaults).
    public init() {}

    /// Reduces a sequence of events (of one user stream) in any order.
    public init<S: Sequence>(events: S) where S.Element == Event {
        for e in events { apply(e) }
    }

    /// Applies one event of the user's stream. Events of other types are ignored; a known type whose
    /// payload cannot be decoded is ignored too (it was hashed and stored, so this cannot happen for events
    /// written by a correct build). Applying an event twice has no further effect.
    public mutating func apply(_ event: Event) {
        guard let body = try? event.body() else { return }
        apply(body, stamp: event.stamp)
    }

    /// Applies a typed body with the stamp of its event.
    public mutating func apply(_ body: EventBody, stamp: Stamp) {
        switch body {
        case .favouriteAdd(let s): favourites.add(s, dot: stamp.id)
        case .favouriteRemove(_, let observed): favourites.remove(observed: observed)
        case .watchAdd(let s): watched.add(s, dot: stamp.id)
        case .watchRemove(_, let observed): watched.remove(observed: observed)
        case .alertSet(let c):
            if let v = c.category { alertCategory = .merge(alertCategory, LWWRegister(v, stamp: stamp)) }
            if let v = c.onClear { alertOnClear = .merge(alertOnClear, LWWRegister(v, stamp: stamp)) }
            if let v = c.enabled { alertsEnabled = .merge(alertsEnabled, LWWRegister(v, stamp: stamp)) }
        case .unitSet(let u): unit = .merge(unit, LWWRegister(u, stamp: stamp))
        case .sourceEnable(let s): sourcesEnabled.set(s, true, stamp: stamp)
        case .sourceDisable(let s): sourcesEnabled.set(s, false, stamp: stamp)
        case .sourceCorrect(let s, let c): corrections.set(s, c, stamp: stamp)
        case .biomarkerTarget(let t): biomarkerTargets.set(t.readingType, t, stamp: stamp)
        case .testAlert(let s): testAlerts.insert(stamp.id, s ?? "", stamp: stamp)
        case .alertDelivered(let k): deliveredAlerts.insert(k, stamp.id.origin.replica.description, stamp: stamp)
        case .unknown: skippedUnknown += 1
        case .sensorRegistered, .reading, .readingBlock, .readingCompaction, .readingRollup, .retentionPolicy, .pollenForecast, .dailyTemperature, .biomarkerReading, .revocation: break
        case .renewalRequest, .certificateIssued: break     // certificates, for the sync node (Protocol/sync.md 4.11)
        }
    }

    /// The join of two states (state-based merge). Commutative, associative and idempotent.
    public func merged(with other: UserState) -> UserState {
        var out = self
        out.favourites = favourites.merged(with: other.favourites)
        out.watched = watched.merged(with: other.watched)
        out.alertCategory = .merge(alertCategory, other.alertCategory)
        out.alertOnClear = .merge(alertOnClear, other.alertOnClear)
        out.alertsEnabled = .merge(alertsEnabled, other.alertsEnabled)
        out.unit = .merge(unit, other.unit)
        out.sourcesEnabled = sourcesEnabled.merged(with: other.sourcesEnabled)
        out.corrections = corrections.merged(with: other.corrections)
        out.biomarkerTargets = biomarkerTargets.merged(with: other.biomarkerTargets)
        out.testAlerts = testAlerts.merged(with: other.testAlerts)
        out.deliveredAlerts = deliveredAlerts.merged(with: other.deliveredAlerts)
        out.skippedUnknown = 0
        return out
    }

    // MARK: Resolved values (what screens show)

    /// The alert threshold in effect.
    public var effectiveAlertCategory: AQICategory { alertCategory?.value ?? Defaults.alertCategory }
    /// What happens when an alert clears.
    public var effectiveOnClear: OnClear { alertOnClear?.value ?? Defaults.onClear }
    /// Whether alerts are on.
    public var effectiveAlertsEnabled: Bool { alertsEnabled?.value ?? Defaults.alertsEnabled }
    /// The temperature unit in effect.
    public var effectiveUnit: TemperatureUnit { unit?.value ?? Defaults.unit }
    /// Whether a source is enabled (sources are on until disabled).
    public func isEnabled(source: String) -> Bool { sourcesEnabled[source] ?? true }
    /// The correction in effect for a source (the catalogue default until the user picks one).
    public func correction(for source: String) -> String {
        corrections[source] ?? DataSource.named(source)?.defaultCorrection ?? "none"
    }

    // MARK: Canonical form and hash

    /// A canonical binary form of the whole CRDT state (values and the stamps that decided them), sorted, so
    /// equal states give equal bytes.
    public var canonicalBytes: [UInt8] {
        var w = ByteWriter(capacity: 256)
        func orset(_ s: ORSet<String>) {
            let keys = s.adds.keys.sorted()
            w.varint(UInt64(keys.count))
            for k in keys {
                w.string(k)
                w.array(s.adds[k]!.sorted()) { w, d in d.encode(into: &w) }
            }
            w.array(s.removed.sorted()) { w, d in d.encode(into: &w) }
        }
        func reg<V>(_ r: LWWRegister<V>?, _ enc: (inout ByteWriter, V) -> Void) {
            guard let r else { w.u8(0); return }
            w.u8(1)
            r.stamp.encode(into: &w)
            enc(&w, r.value)
        }
        orset(favourites)
        orset(watched)
        reg(alertCategory) { $0.u8($1.rawValue) }
        reg(alertOnClear) { $0.u8($1.rawValue) }
        reg(alertsEnabled) { $0.bool($1) }
        reg(unit) { $0.u8($1.rawValue) }
        w.array(sourcesEnabled.sortedKeys) { w, k in
            w.string(k); w.bool(sourcesEnabled[k]!); sourcesEnabled.entries[k]!.stamp.encode(into: &w)
        }
        w.array(corrections.sortedKeys) { w, k in
            w.string(k); w.string(corrections[k]!); corrections.entries[k]!.stamp.encode(into: &w)
        }
        w.array(biomarkerTargets.sortedKeys) { w, k in
            let t = biomarkerTargets[k]!
            w.string(k); w.f64(t.minReading); w.f64(t.maxReading); w.string(t.icon)
            biomarkerTargets.entries[k]!.stamp.encode(into: &w)
        }
        w.array(testAlerts.facts.keys.sorted()) { w, k in k.encode(into: &w); w.string(testAlerts[k]!) }
        // Only when there is one, so the hashes of states without deliveries stay what they were.
        if deliveredAlerts.count > 0 {
            w.array(deliveredAlerts.facts.keys.sorted()) { w, k in w.string(k); deliveredAlerts.facts[k]!.stamp.encode(into: &w) }
        }
        return w.bytes
    }

    /// BLAKE2b-256 of `canonicalBytes`, as 64 hex digits: equal on every replica that has seen the same
    /// events.
    public var stateHash: String { Digest.hex(Digest.blake2b(canonicalBytes, length: 32)) }

    /// The resolved settings as JSON (what `breeze state --json` prints).
    public func json(user: String) -> JSONValue {
        var targets: [JSONValue] = []
        for k in biomarkerTargets.sortedKeys {
            let t = biomarkerTargets[k]!
            targets.append(.object([("readingType", .string(t.readingType)), ("minReading", .double(t.minReading)),
                                    ("maxReading", .double(t.maxReading)), ("icon", .string(t.icon))]))
        }
        let sources: [JSONValue] = DataSource.catalog.map { s in
            .object([("id", .string(s.id)), ("enabled", .bool(isEnabled(source: s.id))),
                     ("correction", .string(correction(for: s.id)))])
        }
        return .object([
            ("user", .string(user)),
            ("favourites", .array(favourites.elements.map(JSONValue.string))),
            ("watched", .array(watched.elements.map(JSONValue.string))),
            ("alert", .object([("category", .string(effectiveAlertCategory.name)),
                               ("onClear", .string(effectiveOnClear.name)),
                               ("enabled", .bool(effectiveAlertsEnabled))])),
            ("unit", .string(effectiveUnit.name)),
            ("sources", .array(sources)),
            ("biomarkerTargets", .array(targets)),
            ("testAlerts", .int(Int64(testAlerts.count))),
            ("deliveredAlerts", .int(Int64(deliveredAlerts.count))),
            ("stateHash", .string(stateHash)),
        ])
    }
}

/// A user's state encodes whole, CRDT metadata included (what an app stores between launches, or hands to
/// a widget): decoded, it merges and hashes as the original.
extension UserState: Codable {}
