public import BreezeCore

/// The biomarker gauges (the app's `BiomarkerView`): per reading type, how many readings the user took today
/// against a daily target ("At least 3x/day").
///
/// - Which types: every type with a target (`UserState.biomarkerTargets`) and every type with readings on
///   the day, sorted by name. A type without a target uses the app's default gauge: `minReading` 0,
///   `maxReading` 3, icon `drop` (`hasTarget` false).
/// - Today: the local day of `p.now` in the device's zone `p.timeZone` (or the day `p.date` names), from local
///   midnight up to and including `p.now`: readings after `now` are not counted, so the screen as of a moment
///   never shows later data. In New York the gauge resets at local midnight (04:00 or 05:00 UTC), not at
///   19:00 the evening before; the model names the zone (`timeZone`). Without `p.timeZone` the day is UTC's.
/// - `readingCount`: the user's `health:<user>` readings of the type in that window (one per distinct time;
///   the store keeps one reading per type and time).
/// - `progress`: `readingCount / maxReading`, capped at 1 (1 when the target is 0 or less and a reading
///   exists, else 0), as the app's `gaugeValue` without its overflow.
/// - The latest value in the window, its unit and time, when there is one.
/// - Turning the `cgm` source (the glucose monitor) off hides every reading: the gauges show 0 and `message`
///   says why; targets stay (they are the user's own settings).
/// No target and no reading on the day is not an error: a new user sees the app's default gauge, 0 of 3 Blood
/// Glucose readings (`defaultReadingType`), so the screen always has one gauge to draw.
public enum BiomarkerScreen: Screen {
    public static let name = "biomarker"
    public static let summary = "biomarker readings today against each daily target (count, progress, latest)"
    public static let userAspects: UserState.Aspects = [.biomarkerTargets, .sources]

    /// The app's default gauge when the user set no target: 0...3 readings, icon `drop`.
    public static let defaultMinReading = 0.0
    public static let defaultMaxReading = 3.0
    public static let defaultIcon = "drop"
    /// The gauge of a user with no target and no reading yet: the design's `readingType: "Blood Glucose"`.
    public static let defaultReadingType = "Blood Glucose"

    /// The read model.
    public struct Model: Codable, Equatable, Sendable {
        /// Whose readings these are.
        public var user: String
        /// The day counted, `YYYY-MM-DD` on the local calendar of `timeZone`.
        public var date: String
        /// The IANA zone of that day (`UTC` without one).
        public var timeZone: String
        /// One gauge per reading type, sorted by `readingType`.
        public var biomarkers: [Biomarker]
        /// Why the readings are hidden ("Glucose monitor is turned off"), nil when they are shown.
        public var message: String?
    }

    /// The source of biomarker readings, which the user can turn off.
    public static let source = "cgm"

    /// One gauge.
    public struct Biomarker: Codable, Equatable, Identifiable, Sendable {
        /// The reading type (one card each) (`Identifiable`: `ForEach`, `.sheet(item:)`, `Chart`).
        public var id: String { readingType }
        /// E.g. "Blood Glucose".
        public var readingType: String
        /// Readings today (up to `now`).
        public var readingCount: Int
        /// Lower end of the gauge.
        public var minReading: Double
        /// The daily target (readings wanted per day).
        public var maxReading: Double
        /// SF Symbol name, e.g. `drop`.
        public var icon: String
        /// True when the user set a target for this type (else the app's default 0...3, `drop`).
        public var hasTarget: Bool
        /// `readingCount / maxReading`, capped at 1.
        public var progress: Double
        /// The newest reading's value today, if any.
        public var latestValue: Double?
        /// Its unit, e.g. `mg/dL`.
        public var unit: String?
        /// Its time, ISO 8601 UTC.
        public var latestTime: String?
    }

    public static func build(_ world: WorldReader, _ p: ScreenParameters) throws -> Model {
        let day = try FactScreenCalendar.referenceDay(p)
        let zone = FactScreenCalendar.userZone(p)
        let dayNumber = ISOTime.days(year: Int64(day.year), month: Int64(day.month), day: Int64(day.day))
        let start = zone.start(ofDay: dayNumber)
        let end = min(zone.start(ofDay: dayNumber + 1), p.now + 1)   // [start, end): 23, 24 or 25 hours
        let state = try world.userState(user: p.user)
        var counts: [String: Int] = [:]
        var latest: [String: BiomarkerReading] = [:]
        let shown = state.isEnabled(source: source)
        // One range of keys per reading type (`<user>|<type>|<sortable time>`): the day's readings, not every
        // reading the user has.
        for type in shown ? try world.factGroups(kind: "biomarker", keyPrefix: p.user + "|") : [] {
            let prefix = p.user + "|" + type + "|"
            for case .biomarkerReading(let r) in try world.facts(kind: "biomarker", keyFrom: prefix + EventBody.sortableTime(start),
                                                                 keyTo: prefix + EventBody.sortableTime(end), limit: nil, descending: false)
            where r.time >= start && r.time < end {
                counts[r.readingType, default: 0] += 1
                if let l = latest[r.readingType], l.time >= r.time { continue }
                latest[r.readingType] = r
            }
        }
        var types = Set(counts.keys).union(state.biomarkerTargets.sortedKeys).sorted()
        if types.isEmpty { types = [defaultReadingType] }
        let gauges = types.map { type -> Biomarker in
            let target = state.biomarkerTargets[type]
            let count = counts[type] ?? 0
            let maxReading = target?.maxReading ?? defaultMaxReading
            let progress = maxReading > 0 ? min(1, Double(count) / maxReading) : (count > 0 ? 1 : 0)
            let last = latest[type]
            return Biomarker(readingType: type, readingCount: count, minReading: target?.minReading ?? defaultMinReading,
                             maxReading: maxReading, icon: target?.icon ?? defaultIcon, hasTarget: target != nil,
                             progress: progress, latestValue: last?.value, unit: last?.unit,
                             latestTime: last.map { LocalTime.iso($0.time) })
        }
        return Model(user: p.user, date: FactScreenCalendar.iso(day), timeZone: zone.zone, biomarkers: gauges,
                     message: shown ? nil : "\(DataSource.named(source)?.name ?? source) is turned off")
    }

    public static func render(_ model: Model) -> [String] {
        var out = ["Biomarkers for \(model.user) on \(model.date) (\(model.timeZone))", ""]
        if let message = model.message { out.insert(message, at: 1) }
        let width = max(12, model.biomarkers.map(\.readingType.count).max() ?? 0) + 2
        for b in model.biomarkers {
            let filled = Int((b.progress * 20).rounded())
            let gauge = "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: 20 - filled) + "]"
            var line = FactScreenCalendar.pad(b.readingType, width) + gauge + " "
                + FactScreenCalendar.pad("\(b.readingCount)/\(FactScreenCalendar.fixed(b.maxReading, 0))", 8)
                + FactScreenCalendar.pad("(\(b.icon))", 8) + "at least \(FactScreenCalendar.fixed(b.maxReading, 0))x/day"
                + (b.hasTarget ? "" : " (default)")
            if let v = b.latestValue {
                line += "; latest \(FactScreenCalendar.fixed(v, v == v.rounded() ? 0 : 1)) \(b.unit ?? "")"
                    + (b.latestTime.map { " at \($0.prefix(10)) \($0.dropFirst(11).prefix(5))Z" } ?? "")
            }
            out.append(line)
        }
        return out
    }
}
