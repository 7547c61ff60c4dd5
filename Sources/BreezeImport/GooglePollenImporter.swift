import BreezeCore
import Foundation

/// Google Pollen API `forecast:lookup` responses (`shared/docs/domain.md` section 4), in any response
/// language: everything is keyed on the language-neutral `code`s, and display texts are kept as given.
///
/// One `pollen.forecast` event per `dailyInfo` day goes to the `public` stream. The response carries no
/// location, so `--at LAT,LON` (`ImportOptions.at`) is required: it is the location the request was made for.
///
/// Each day's entries are every `pollenTypeInfo` (GRASS, TREE, WEED; `isPlant` false) followed by every
/// `plantInfo` (`isPlant` true), in file order:
/// - `indexInfo` gives `indexValue` (UPI 0-5), `category`, `indexDescription` and `colour`. An entry without
///   `indexInfo` is out of season or unsupported: its index is nil, never zero (section 4 and section 9).
/// - `colour` is `#RRGGBB` from the float channels 0-1, each `round(channel * 255)`; the API omits channels
///   that are 0, so a missing channel is 0 (`{"green":0.61960787,"blue":0.22745098}` is `#009E3A`). Alpha is
///   ignored.
/// - `healthRecommendations` are only given on `pollenTypeInfo`.
/// - `plantDescription` gives `plantType` (its `type`), `family`, `season`, `specialColors`,
///   `specialShapes`, `crossReaction`, `picture` and `pictureCloseup`; a plant without one has no plant type.
///
/// `rowsRead` counts days; a day with a malformed date or entry is skipped and reported with its 1-based index
/// in `dailyInfo`, and a day with no entries at all is skipped as "no values". `nextPageToken` is ignored
/// (import each page as its own file). An API error response (`{"error": {...}}`) is refused.
public enum GooglePollenImporter: Importer {
    public static let format = "google-pollen"
    public static let summary = "Google Pollen API forecast:lookup response (JSON, any language; needs --at LAT,LON)"

    public static func parse(_ bytes: [UInt8], file: String, options: ImportOptions) throws(ImportError) -> ParseResult {
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: Data(bytes), options: [])
        } catch {
            throw ImportError(file: file, "not valid JSON, so not a Google Pollen forecast:lookup response")
        }
        guard let object = root as? [String: Any] else {
            throw ImportError(file: file, "not a Google Pollen forecast:lookup response: the top level is not an object")
        }
        if let error = object["error"] {
            let message = ((error as? [String: Any])?["message"] as? String) ?? "no message"
            throw ImportError(file: file, "a Google API error response, not a forecast: \(message)")
        }
        guard let days = object["dailyInfo"] as? [Any] else {
            throw ImportError(file: file, "not a Google Pollen forecast:lookup response: no dailyInfo array")
        }
        guard let at = options.at else {
            throw ImportError(file: file, "google-pollen needs --at LAT,LON (the response does not carry its location)")
        }
        guard at.latitude.isFinite, at.longitude.isFinite, abs(at.latitude) <= 90, abs(at.longitude) <= 180 else {
            throw ImportError(file: file, "--at \(at.latitude),\(at.longitude) is not a valid latitude,longitude")
        }
        let regionCode = object["regionCode"] as? String

        var result = ParseResult()
        for (i, element) in days.enumerated() {
            let line = i + 1
            result.rowsRead += 1
            do throws(ImportRowError) {
                guard let day = element as? [String: Any] else { throw ImportRowError("day is not an object") }
                let date = try dayDate(day["date"])
                var entries: [PollenEntry] = []
                for (j, item) in try array(day["pollenTypeInfo"], "pollenTypeInfo").enumerated() {
                    entries.append(try entry(item, isPlant: false, where: "pollenTypeInfo[\(j)]"))
                }
                for (j, item) in try array(day["plantInfo"], "plantInfo").enumerated() {
                    entries.append(try entry(item, isPlant: true, where: "plantInfo[\(j)]"))
                }
                guard !entries.isEmpty else { throw ImportRowError("no values") }
                let forecast = PollenForecast(latitude: at.latitude, longitude: at.longitude, regionCode: regionCode,
                                              date: date, entries: entries)
                result.records.append(ImportRecord(stream: .public, body: .pollenForecast(forecast), line: line))
            } catch {
                result.issues.append(ImportIssue(file: file, line: line, reason: error.reason))
            }
        }
        return result
    }

    /// `{year, month, day}` as `YYYY-MM-DD`.
    private static func dayDate(_ value: Any?) throws(ImportRowError) -> String {
        guard let d = value as? [String: Any] else { throw ImportRowError("day has no date") }
        guard let y = integer(d["year"]), let m = integer(d["month"]), let dd = integer(d["day"]),
              DateParsing.isValid(year: y, month: m, day: dd) else {
            throw ImportRowError("date \(d) is not a valid {year, month, day}")
        }
        return DateParsing.isoDate((y, m, dd))
    }

    /// An optional JSON array (absent = empty).
    private static func array(_ value: Any?, _ name: String) throws(ImportRowError) -> [Any] {
        guard let value, !(value is NSNull) else { return [] }
        guard let a = value as? [Any] else { throw ImportRowError("\(name) is not an array") }
        return a
    }

    /// One `PollenTypeInfo` or `PlantInfo`.
    private static func entry(_ value: Any, isPlant: Bool, where place: String) throws(ImportRowError) -> PollenEntry {
        guard let e = value as? [String: Any] else { throw ImportRowError("\(place) is not an object") }
        guard let code = e["code"] as? String, !code.isEmpty else { throw ImportRowError("\(place) has no code") }
        var out = PollenEntry(code: code, displayName: (e["displayName"] as? String) ?? code, isPlant: isPlant)
        out.inSeason = e["inSeason"] as? Bool
        if let infoValue = e["indexInfo"], !(infoValue is NSNull) {
            guard let info = infoValue as? [String: Any] else { throw ImportRowError("\(place) indexInfo is not an object") }
            if let v = info["value"], !(v is NSNull) {
                guard let n = integer(v), n >= 0 && n <= 5 else {
                    throw ImportRowError("\(place) (\(code)) index value \(v) is not a Universal Pollen Index 0-5")
                }
                out.indexValue = UInt8(n)
            }
            out.category = info["category"] as? String
            out.indexDescription = info["indexDescription"] as? String
            if let c = info["color"], !(c is NSNull) {
                guard let colour = hexColour(c) else { throw ImportRowError("\(place) (\(code)) color \(c) is not RGB 0-1") }
                out.colour = colour
            }
        }
        if let recs = e["healthRecommendations"], !(recs is NSNull) {
            guard let list = recs as? [Any] else { throw ImportRowError("\(place) healthRecommendations is not an array") }
            out.healthRecommendations = list.compactMap { $0 as? String }
        }
        if let descValue = e["plantDescription"], !(descValue is NSNull) {
            guard let d = descValue as? [String: Any] else { throw ImportRowError("\(place) plantDescription is not an object") }
            out.plantType = d["type"] as? String
            out.family = d["family"] as? String
            out.season = d["season"] as? String
            out.specialColors = d["specialColors"] as? String
            out.specialShapes = d["specialShapes"] as? String
            out.crossReaction = d["crossReaction"] as? String
            out.picture = d["picture"] as? String
            out.pictureCloseup = d["pictureCloseup"] as? String
        }
        return out
    }

    /// A JSON number that is a whole number.
    private static func integer(_ value: Any?) -> Int? {
        guard let n = value as? NSNumber else { return nil }
        let d = n.doubleValue
        guard d.isFinite, d == d.rounded(), abs(d) < 1e9 else { return nil }
        return Int(d)
    }

    /// `{red?, green?, blue?, alpha?}` (floats 0-1, zero channels omitted) as `#RRGGBB`.
    private static func hexColour(_ value: Any) -> String? {
        guard let c = value as? [String: Any] else { return nil }
        let digits: [Character] = Array("0123456789ABCDEF")
        var text = "#"
        for name in ["red", "green", "blue"] {
            var channel = 0.0
            if let v = c[name], !(v is NSNull) {
                guard let n = v as? NSNumber else { return nil }
                channel = n.doubleValue
            }
            guard channel.isFinite, channel >= 0, channel <= 1 else { return nil }
            let byte = Int((channel * 255).rounded())
            text.append(digits[byte >> 4])
            text.append(digits[byte & 15])
        }
        return text
    }
}
