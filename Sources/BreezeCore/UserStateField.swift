/// One piece of a user's state that `breeze explain` can account for; together they cover every field of
/// `UserState`.
///
/// Favourites and watched sensors are add-wins sets (`ORSet`), one field per sensor; test-alert requests are
/// a grow-only set (`FactSet`, every request kept); everything else is a last-writer-wins register
/// (`LWWRegister`, or one key of an `LWWMap`).
public enum UserStateField: Hashable, Sendable, CustomStringConvertible {
    /// Whether a sensor is a favourite.
    case favourite(String)
    /// Whether a sensor is watched (alerts).
    case watch(String)
    /// The alert threshold.
    case alertCategory
    /// What happens when an alert clears.
    case alertOnClear
    /// Whether alerts are on.
    case alertsEnabled
    /// The temperature unit.
    case unit
    /// Whether a data source is enabled.
    case sourceEnabled(String)
    /// The correction applied to a data source.
    case correction(String)
    /// The daily target of a biomarker reading type.
    case target(String)
    /// The test alerts requested (a grow-only set of requests).
    case testAlerts

    /// How the field is named on the command line and in `--json`, e.g. `favourite 131075`, `alert category`.
    public var description: String {
        switch self {
        case .favourite(let s): return "favourite \(s)"
        case .watch(let s): return "watch \(s)"
        case .alertCategory: return "alert category"
        case .alertOnClear: return "alert on-clear"
        case .alertsEnabled: return "alert enabled"
        case .unit: return "unit"
        case .sourceEnabled(let s): return "source \(s) enabled"
        case .correction(let s): return "source \(s) correction"
        case .target(let t): return "target \(t)"
        case .testAlerts: return "alert test"
        }
    }

    /// True for the add-wins set fields (favourite, watch).
    public var isSetMembership: Bool {
        switch self {
        case .favourite, .watch: return true
        default: return false
        }
    }

    /// The add-wins set holding the field (favourites or watched), for set fields.
    public func set(in state: UserState) -> ORSet<String>? {
        switch self {
        case .favourite: return state.favourites
        case .watch: return state.watched
        default: return nil
        }
    }

    /// The set element (the sensor), for set fields.
    public var element: String? {
        switch self {
        case .favourite(let s), .watch(let s): return s
        default: return nil
        }
    }

    /// The field's register in `state`, its value written as text and its stamp kept, for register fields
    /// (nil when no event has written it, or for set fields).
    public func register(in state: UserState) -> LWWRegister<String>? {
        switch self {
        case .favourite, .watch, .testAlerts: return nil
        case .alertCategory: return state.alertCategory.map { LWWRegister($0.value.name, stamp: $0.stamp) }
        case .alertOnClear: return state.alertOnClear.map { LWWRegister($0.value.name, stamp: $0.stamp) }
        case .alertsEnabled: return state.alertsEnabled.map { LWWRegister(String($0.value), stamp: $0.stamp) }
        case .unit: return state.unit.map { LWWRegister($0.value.name, stamp: $0.stamp) }
        case .sourceEnabled(let s): return state.sourcesEnabled.entries[s].map { LWWRegister(String($0.value), stamp: $0.stamp) }
        case .correction(let s): return state.corrections.entries[s].map { LWWRegister($0.value, stamp: $0.stamp) }
        case .target(let t): return state.biomarkerTargets.entries[t].map { LWWRegister(Self.text($0.value), stamp: $0.stamp) }
        }
    }

    /// The value in effect, as text (the default when no event decided it): what `breeze state` shows.
    public func effectiveValue(in state: UserState) -> String {
        switch self {
        case .favourite, .watch: return String(set(in: state)!.contains(element!))
        case .alertCategory: return state.effectiveAlertCategory.name
        case .alertOnClear: return state.effectiveOnClear.name
        case .alertsEnabled: return String(state.effectiveAlertsEnabled)
        case .unit: return state.effectiveUnit.name
        case .sourceEnabled(let s): return String(state.isEnabled(source: s))
        case .correction(let s): return state.correction(for: s)
        case .target(let t): return state.biomarkerTargets[t].map(Self.text) ?? "(none)"
        case .testAlerts: return String(state.testAlerts.count)
        }
    }

    /// A biomarker target as text: `0-4 readings/day (drop)`.
    static func text(_ t: BiomarkerTarget) -> String {
        func n(_ d: Double) -> String { d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(d) }
        return "\(n(t.minReading))-\(n(t.maxReading)) readings/day (\(t.icon))"
    }
}
