import Testing
import Foundation
import BreezeCore
@testable import BreezeProjections

/// One JSON Schema per read model, in `Protocol/screens/<name>.schema.json`, checked against the real output
/// of every screen on the project's fixtures (full, empty and edge states), and one vocabulary across them:
/// a property name has one type on every screen, distances are `distanceKm`, trends are `trend`, times are
/// ISO 8601 UTC to the second (what Swift's `.iso8601` date decoding reads), a missing value is an omitted
/// key (a `null` only as an array element, where the position is the meaning).
///
/// `BREEZE_WRITE_SCHEMAS=1 swift test --filter ScreenSchemaTests` writes the schemas again from these samples
/// (union of the keys seen; required = present in every sample); review the diff like code.
struct ScreenSchemaTests {
    typealias F = AQScreenFixtures

    static let directory: String = {
        let file = #filePath
        var dir = String(file[..<file.lastIndex(of: "/")!])
        for _ in 0..<2 { dir = String(dir[..<dir.lastIndex(of: "/")!]) }
        return dir + "/Protocol/screens"
    }()

    /// Real outputs of every screen, by screen name.
    static func samples() throws -> [String: [Any]] {
        var out: [String: [Any]] = [:]
        func add<S: Screen>(_ s: S.Type, _ world: FactWorld, _ p: ScreenParameters) throws {
            let json = try Screens.json(try S.build(world, p))
            out[S.name, default: []].append(try JSONSerialization.jsonObject(with: Data(json.utf8), options: [.fragmentsAllowed]))
        }
        let aq = try F.world()
        let berlin = (latitude: 52.52, longitude: 13.405)
        for user in ["ana", "bo", "cy"] {
            for now in [F.troyNow, F.troyLastReading + 3601, F.t("2019-08-19T20:30")] {
                try add(MapScreen.self, aq, F.params(user, now, at: F.troyUser))
                try add(MapScreen.self, aq, F.params(user, now))
                try add(MapScreen.self, aq, F.params(user, now, at: berlin))
                // Every metric: temperature and PM2.5 values are not whole numbers.
                for metric in ["temperature", "humidity", "pm25"] {
                    var p = F.params(user, now, at: F.troyUser)
                    p.metric = metric
                    try add(MapScreen.self, aq, p)
                }
                for sensor in ["149970", "87173", "airnow:370630099"] {
                    try add(SheetScreen.self, aq, F.params(user, now, sensor: sensor, at: F.troyUser))
                    try add(SheetScreen.self, aq, F.params(user, now, sensor: sensor))
                    try add(DetailScreen.self, aq, F.params(user, now, sensor: sensor))
                    try add(HistoryScreen.self, aq, F.params(user, now, sensor: sensor))
                }
                try add(NearbyScreen.self, aq, F.params(user, now, at: F.troyUser))
                try add(NearbyScreen.self, aq, F.params(user, now, at: berlin))
                try add(NearbyScreen.self, aq, F.params(user, now))              // no place: the empty state
                try add(WidgetsScreen.self, aq, F.params(user, now, at: F.troyUser))
                try add(WidgetsScreen.self, aq, F.params(user, now))
                try add(AlertsScreen.self, aq, F.params(user, now))
                try add(SourcesScreen.self, aq, F.params(user, now))
            }
        }
        // Alerts with watched sensors, events and a test alert.
        var ana = HistAlertsUser("ana", replica: 0xA1)
        let alerts = FactWorld(events: try WorldSupport.troy() + [
            ana.event(.watchAdd(sensor: "87173")), ana.event(.watchAdd(sensor: "nosuch")), ana.event(.alertSet(AlertChange(category: .moderate))),
            ana.event(.testAlert(sensor: "87173")), ana.event(.alertDelivered(key: "purpleair:87173|2023-10-23T12:00:00Z|fired")),
        ])
        try add(AlertsScreen.self, alerts, ScreenParameters(user: "ana", now: 1_698_604_800))

        let pollen = FactWorld(events: try FactScreenWorlds.pollen())
        for (at, date) in [((51.2, 10.5), "2025-08-03"), ((51.1657, 10.4515), "2025-08-06"), ((48.137, 11.575), "2025-08-03")] {
            var p = ScreenParameters(user: "me", now: FactScreenWorlds.time("2025-08-03T09:00:00Z"))
            p.at = at
            p.date = date
            try add(PollenScreen.self, pollen, p)
        }
        let clemson = FactWorld(events: try FactScreenWorlds.clemson() + FactScreenWorlds.user("fan", [.unitSet(.fahrenheit)]))
        for (user, date, sensor) in [("me", "2020-07-04", "GHCND:USC00381770"), ("fan", "1995-10-05", "GHCND:USC00381770"),
                                     ("me", "1929-07-04", "GHCND:USC00381770")] {
            var p = ScreenParameters(user: user, now: FactScreenWorlds.time("2025-07-04T12:00:00Z"))
            p.date = date
            p.sensor = sensor
            try add(ClimateScreen.self, clemson, p)
        }
        var far = ScreenParameters(user: "me", now: FactScreenWorlds.time("2025-07-04T12:00:00Z"))
        far.at = berlin
        try add(ClimateScreen.self, clemson, far)
        far.at = (34.7, -82.8)                                   // by position, near the station: distanceKm
        try add(ClimateScreen.self, clemson, far)
        far.at = nil                                             // no place: the empty state
        try add(ClimateScreen.self, clemson, far)
        try add(PollenScreen.self, pollen, ScreenParameters(user: "me", now: FactScreenWorlds.time("2025-08-03T09:00:00Z")))
        let glucose = FactWorld(events: try FactScreenWorlds.glucose())
        for (user, now) in [("me", "2010-03-25T23:59:59Z"), ("bo", "2010-03-25T23:59:59Z")] {
            try add(BiomarkerScreen.self, glucose, ScreenParameters(user: user, now: FactScreenWorlds.time(now)))
        }
        return out
    }

    @Test func everyScreensRealOutputMatchesItsPublishedSchema() throws {
        let samples = try Self.samples()
        #expect(Set(samples.keys) == Set(Screens.all.map { $0.name }), "every screen has samples")
        if ProcessInfo.processInfo.environment["BREEZE_WRITE_SCHEMAS"] == "1" {
            try FileManager.default.createDirectory(atPath: Self.directory, withIntermediateDirectories: true)
            for (name, values) in samples {
                var schema = SchemaInference.infer(values)
                schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
                schema["$id"] = "https://breeze.example/Protocol/screens/\(name).schema.json"
                schema["title"] = "The \(name) screen's read model (BreezeProjections, `breeze screen \(name) --json`)"
                let data = try JSONSerialization.data(withJSONObject: schema, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
                try data.write(to: URL(fileURLWithPath: Self.directory + "/\(name).schema.json"))
            }
        }
        for (name, values) in samples.sorted(by: { $0.key < $1.key }) {
            let path = Self.directory + "/\(name).schema.json"
            guard let data = FileManager.default.contents(atPath: path),
                  let schema = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                Issue.record("no schema at \(path)"); continue
            }
            for (i, v) in values.enumerated() {
                let problems = SchemaInference.validate(v, against: schema, at: name)
                #expect(problems.isEmpty, "\(name) sample \(i): \(problems.prefix(5))")
            }
        }
    }

    @Test func oneVocabularyAcrossScreens() throws {
        var typeOf: [String: Set<String>] = [:]
        var problems: [String] = []
        let iso = try NSRegularExpression(pattern: #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(Z|[+-]\d{2}:\d{2})$"#)
        func walk(_ v: Any, _ path: String, _ key: String?) {
            if let o = v as? [String: Any] {
                for (k, x) in o {
                    if x is NSNull { problems.append("\(path).\(k) is null (a missing value is an omitted key)") }
                    walk(x, path + "." + k, k)
                }
            } else if let a = v as? [Any] {
                for x in a { walk(x, path + "[]", key) }
            } else if let key {
                let k = SchemaInference.kind(v)   // integers are numbers for the vocabulary
                if k != "null" { typeOf[key, default: []].insert(k == "integer" ? "number" : k) }
                if let s = v as? String, ["hour", "time", "latestTime", "windowStart", "windowEnd", "localTime"].contains(key),
                   iso.firstMatch(in: s, range: NSRange(s.startIndex..., in: s)) == nil {
                    problems.append("\(path) = \(s): not ISO 8601 to the second")
                }
            }
        }
        for (name, values) in try Self.samples() { for v in values { walk(v, name, nil) } }
        for (k, types) in typeOf where types.count > 1 { problems.append("'\(k)' has types \(types.sorted()) across screens") }
        for bad in ["distance", "direction", "lat", "lon", "lng"] where typeOf[bad] != nil {
            problems.append("'\(bad)' is not the vocabulary (distanceKm, trend, latitude, longitude)")
        }
        #expect(problems.isEmpty, "\(problems.prefix(10))")
    }

    @Test func theValidatorRefusesWhatTheSchemaDoesNotAllow() throws {
        let schema = SchemaInference.infer([["a": 1, "b": ["x"], "c": ["d": true]] as [String: Any], ["a": 2.5, "b": [String]()] as [String: Any]])
        #expect(SchemaInference.validate(["a": 3, "b": ["y"]] as [String: Any], against: schema, at: "$").isEmpty)
        #expect(!SchemaInference.validate(["b": ["y"]] as [String: Any], against: schema, at: "$").isEmpty, "a required key missing")
        #expect(!SchemaInference.validate(["a": "3", "b": []] as [String: Any], against: schema, at: "$").isEmpty, "a wrong type")
        #expect(!SchemaInference.validate(["a": 1, "b": [], "z": 0] as [String: Any], against: schema, at: "$").isEmpty, "an unknown key")
        #expect(!SchemaInference.validate(["a": 1, "b": [1]] as [String: Any], against: schema, at: "$").isEmpty, "a wrong item type")
        #expect(!SchemaInference.validate(["a": 1, "b": [], "c": ["d": 1]] as [String: Any], against: schema, at: "$").isEmpty, "nested")
    }
}

/// A JSON Schema (2020-12 subset: `type`, `properties`, `required`, `additionalProperties: false`, `items`)
/// inferred from sample values, and a validator of that subset.
enum SchemaInference {
    static func kind(_ v: Any) -> String {
        if v is NSNull { return "null" }
        if v is String { return "string" }
        if v is [Any] { return "array" }
        if v is [String: Any] { return "object" }
        if type(of: v) == Bool.self { return "boolean" }
        if let n = v as? NSNumber {
            // JSONSerialization gives booleans as a boolean NSNumber subclass (`__NSCFBoolean`).
            if String(describing: type(of: v)).contains("Boolean") { return "boolean" }
            return ["d", "f"].contains(String(cString: n.objCType)) ? "number" : "integer"
        }
        return "unknown"
    }

    /// The schema of every value in `values`.
    static func infer(_ values: [Any]) -> [String: Any] {
        var kinds = Set(values.map(kind))
        if kinds.contains("number") { kinds.remove("integer") }
        var schema: [String: Any] = ["type": kinds.count == 1 ? kinds.first! as Any : kinds.sorted() as Any]
        let objects = values.compactMap { $0 as? [String: Any] }
        if !objects.isEmpty {
            var keys: [String: [Any]] = [:]
            for o in objects { for (k, v) in o { keys[k, default: []].append(v) } }
            schema["properties"] = keys.mapValues { infer($0) }
            schema["required"] = keys.keys.filter { k in objects.allSatisfy { $0[k] != nil } }.sorted()
            schema["additionalProperties"] = false
        }
        let items = values.compactMap { $0 as? [Any] }.flatMap { $0 }
        if values.contains(where: { $0 is [Any] }) { schema["items"] = items.isEmpty ? [String: Any]() : infer(items) }
        return schema
    }

    /// Where `value` breaks `schema`, as readable paths.
    static func validate(_ value: Any, against schema: [String: Any], at path: String) -> [String] {
        var out: [String] = []
        let allowed: [String] = (schema["type"] as? String).map { [$0] } ?? (schema["type"] as? [String]) ?? []
        var k = kind(value)
        if k == "integer" && allowed.contains("number") { k = "number" }
        if !allowed.isEmpty && !allowed.contains(k) { return ["\(path): \(k), expected \(allowed.joined(separator: " or "))"] }
        if let o = value as? [String: Any] {
            let props = schema["properties"] as? [String: Any] ?? [:]
            for r in schema["required"] as? [String] ?? [] where o[r] == nil { out.append("\(path).\(r): missing") }
            for (key, v) in o {
                guard let p = props[key] as? [String: Any] else {
                    if (schema["additionalProperties"] as? Bool) == false { out.append("\(path).\(key): not in the schema") }
                    continue
                }
                out += validate(v, against: p, at: path + "." + key)
            }
        }
        if let a = value as? [Any], let items = schema["items"] as? [String: Any], !items.isEmpty {
            for (i, v) in a.enumerated() { out += validate(v, against: items, at: "\(path)[\(i)]") }
        }
        return out
    }
}
