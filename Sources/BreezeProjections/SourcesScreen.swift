public import BreezeCore

/// The data-sources sheet: every source Breeze knows (`DataSource.catalog`, in catalogue order), whether the
/// user has it on, the correction in effect and the ones available, and how many sensors it provides.
///
/// Per user: `enabled` and `correction` come from the user's `UserState` (sources are on until disabled; the
/// correction is the user's choice or the catalogue default, the first listed: for PurpleAir the EPA US-wide
/// 2021 correction, `shared/docs/domain.md` sections 3.2 and 9). `sensorCount` counts the sensors registered
/// for the source in the world, whether or not this user has the source enabled (it says what turning the
/// source on would give). Daily temperature stations and pollen places are facts, not registered sensors, so
/// they are not counted; sources a registration names but the catalogue does not know are not listed.
public enum SourcesScreen: Screen {
    public static let name = "sources"
    public static let summary = "data sources: enabled, correction chosen and available, sensors provided"
    public static let userAspects: UserState.Aspects = [.sources]

    /// The read model.
    public struct Model: Codable, Equatable, Sendable {
        /// Whose settings these are.
        public var user: String
        /// One row per catalogue source, in catalogue order.
        public var sources: [Source]
        /// Registered sensors across all listed sources.
        public var totalSensors: Int
    }

    /// One data source as the sheet lists it.
    public struct Source: Codable, Equatable, Identifiable, Sendable {
        /// Identifier used in events and on the command line, e.g. `purpleair`.
        public var id: String
        /// Display name, e.g. `PurpleAir`.
        public var name: String
        /// Whether the user reads from this source (on until disabled).
        public var enabled: Bool
        /// The correction in effect: the user's choice, else the catalogue default.
        public var correction: String
        /// True when the user has not chosen a correction for this source (the default applies).
        public var isDefaultCorrection: Bool
        /// The corrections available, the default first.
        public var corrections: [String]
        /// How many sensors of this source are registered in the world.
        public var sensorCount: Int
    }

    public static func build(_ world: WorldReader, _ p: ScreenParameters) throws -> Model {
        let user = try world.userState(user: p.user)
        var counts: [String: Int] = [:]
        for s in try world.sensors() { counts[s.source, default: 0] += 1 }
        let rows = DataSource.catalog.map { s in
            Source(id: s.id, name: s.name, enabled: user.isEnabled(source: s.id),
                   correction: user.correction(for: s.id), isDefaultCorrection: user.corrections[s.id] == nil,
                   corrections: s.corrections, sensorCount: counts[s.id] ?? 0)
        }
        return Model(user: p.user, sources: rows, totalSensors: rows.reduce(0) { $0 + $1.sensorCount })
    }

    public static func render(_ model: Model) -> [String] {
        func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
        let nameWidth = max(6, model.sources.map(\.name.count).max() ?? 0) + 2
        var out = ["Data sources for \(model.user)", ""]
        out.append(pad("SOURCE", nameWidth) + pad("ON", 5) + pad("SENSORS", 9) + "CORRECTION (available)")
        for s in model.sources {
            let others = s.corrections.filter { $0 != s.correction }
            let correction = s.correction + (s.isDefaultCorrection ? " (default)" : "")
                + (others.isEmpty ? "" : "  [" + others.joined(separator: ", ") + "]")
            out.append(pad(s.name, nameWidth) + pad(s.enabled ? "on" : "off", 5) + pad(String(s.sensorCount), 9) + correction)
        }
        out.append("")
        out.append("\(model.totalSensors) sensors registered")
        return out
    }
}
