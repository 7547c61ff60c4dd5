import BreezeProjections
/// The rules every edit follows, in one place (the CLI and the app both go through `Replica`).
enum Validation {
    /// User ids: 1-64 characters of `A-Z a-z 0-9 . _ -` (`Protocol/encoding.md` section 3).
    static func user(_ id: String, what: String) throws(BreezeError) {
        do { try StreamID.validateUserID(id) } catch {
            throw BreezeError(.invalidArgument, "\(what) '\(id)': \(error.description)", underlying: error)
        }
    }

    /// An IANA zone name the time-zone database holds (`TimeZones.rules(named:)`, what every screen reads):
    /// a misspelt one is refused at once rather than silently read as UTC by every screen.
    static func timeZone(_ name: String?, what: String) throws(BreezeError) {
        guard let name, TimeZones.rules(named: name) == nil else { return }
        throw BreezeError(.invalidArgument, "\(what) '\(name)': not a zone of the time-zone database (\(TimeZones.directory)); use an IANA name such as America/New_York, as TimeZone.current.identifier gives")
    }

    /// Sensor ids: 1-128 characters without spaces or control characters (as `[SOURCE:]ID`).
    static func sensor(_ s: String) throws(BreezeError) -> String {
        guard !s.isEmpty, s.utf8.count <= 128, !s.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7f })
        else { throw BreezeError(.invalidArgument, "sensor '\(s)': must be 1-128 characters without spaces or control characters") }
        return s
    }

    /// A source of `DataSource.catalog`.
    static func source(_ id: String) throws(BreezeError) -> DataSource {
        guard let s = DataSource.named(id) else {
            throw BreezeError(.invalidArgument, "source '\(id)' is unknown; known sources: \(DataSource.catalog.map(\.id).joined(separator: ", "))")
        }
        return s
    }

    /// A correction the source offers.
    static func correction(_ c: String, of s: DataSource) throws(BreezeError) {
        guard s.corrections.contains(c) else {
            throw BreezeError(.invalidArgument, "correction '\(c)' is not available for \(s.id); choose one of \(s.corrections.joined(separator: ", "))")
        }
    }
}

extension Validation {
    /// The largest value a hand-entered biomarker reading may have in each unit it is commonly given in
    /// (a glucose meter reads up to about 600 mg/dL, 33 mmol/L; a percentage is at most 100; blood pressure
    /// and heart rate stay far below these): a value beyond is a typing slip, not a measurement.
    static let biomarkerMaxima: [String: Double] = [
        "mg/dl": 1_000, "mmol/l": 60, "%": 100, "bpm": 300, "mmhg": 350, "kg": 700, "lb": 1_500, "°c": 50, "°f": 122,
    ]

    /// A biomarker reading's value: a finite number from 0 to the unit's maximum (`biomarkerMaxima`), or below
    /// 1e6 in a unit not listed.
    static func biomarkerValue(_ v: Double, unit: String, what: String) throws(BreezeError) {
        guard v.isFinite else { throw BreezeError(.invalidArgument, "\(what): value \(v) is not a finite number") }
        let max = biomarkerMaxima[unit.lowercased()]
        guard v >= 0, max.map({ v <= $0 }) ?? (v < 1e6) else {
            throw BreezeError(.invalidArgument, "\(what): value \(v) \(unit) is outside 0...\(max.map { "\($0)" } ?? "1e6") (a finite measurement in that unit)")
        }
    }

    /// A short text: 1-128 characters, no control characters.
    static func text(_ s: String, what: String) throws(BreezeError) {
        guard !s.isEmpty, s.utf8.count <= 128, !s.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) else {
            throw BreezeError(.invalidArgument, "\(what) '\(s)': must be 1-128 characters without control characters")
        }
    }
}

extension Replica {
    /// Checks a sensor id by the rule every edit applies (1-128 characters, no spaces or control characters)
    /// and returns it.
    ///
    /// - Throws: `BreezeError.invalidArgument` naming the id.
    public static func validateSensor(_ id: String) throws(BreezeError) -> String { try Validation.sensor(id) }

    /// The source of `DataSource.catalog` with this id.
    ///
    /// - Throws: `BreezeError.invalidArgument` listing the known sources.
    public static func knownSource(_ id: String) throws(BreezeError) -> DataSource { try Validation.source(id) }
}
