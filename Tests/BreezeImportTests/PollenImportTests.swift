import Foundation
import Testing
import BreezeCore
@testable import BreezeImport

/// `GooglePollenImporter` on the real Google Pollen API response in Fixtures/pollen/ (see PROVENANCE.md).
/// Expected values were read from the raw JSON with python3 (json.load, counting per day).
struct PollenImportTests {
    static let fileName = "google_pollen_forecast_DE_2025-08-03_teamjaf.json"

    static func realBytes() throws -> [UInt8] {
        let url = try #require(Bundle.module.url(forResource: "google_pollen_forecast_DE_2025-08-03_teamjaf",
                                                 withExtension: "json", subdirectory: "Fixtures/pollen"))
        return Array(try Data(contentsOf: url))
    }

    /// The location the real response was requested for (data README).
    static func options() -> ImportOptions {
        var o = ImportOptions()
        o.at = (latitude: 51.1657, longitude: 10.4515)
        return o
    }

    static func forecasts(_ result: ParseResult) throws -> [PollenForecast] {
        #expect(result.records.allSatisfy { $0.stream == .public })
        let out = result.records.compactMap { record -> PollenForecast? in
            if case .pollenForecast(let f) = record.body { return f }
            return nil
        }
        try #require(out.count == result.records.count, "every record is a pollen forecast")
        return out
    }

    static func parseReal() throws -> [PollenForecast] {
        let result = try GooglePollenImporter.parse(try realBytes(), file: fileName, options: options())
        #expect(result.rowsRead == 5)
        #expect(result.issues.isEmpty)
        return try forecasts(result)
    }

    @Test func theRealResponseGivesOneForecastPerDayForFiveDaysAtTheGivenLocation() throws {
        let days = try Self.parseReal()
        #expect(days.map(\.date) == ["2025-08-03", "2025-08-04", "2025-08-05", "2025-08-06", "2025-08-07"])
        for day in days {
            #expect(day.latitude == 51.1657)
            #expect(day.longitude == 10.4515)
            #expect(day.regionCode == "DE")
            // 3 pollenTypeInfo (GRASS, TREE, WEED) then 11 plantInfo, on every day.
            #expect(day.entries.filter { !$0.isPlant }.map(\.code) == ["GRASS", "TREE", "WEED"])
            #expect(day.entries.filter(\.isPlant).map(\.code)
                    == ["HAZEL", "ASH", "COTTONWOOD", "OAK", "PINE", "BIRCH", "OLIVE", "GRAMINALES", "RAGWEED",
                        "ALDER", "MUGWORT"])
        }
    }

    @Test func entriesWithoutIndexInfoAreOutOfSeasonWithNoIndexNotZero() throws {
        let days = try Self.parseReal()
        // Days 1-3: 9 of 14 entries lack indexInfo; days 4-5: all 14 do (python3 over the raw JSON).
        let withoutIndex = ["TREE", "HAZEL", "ASH", "COTTONWOOD", "OAK", "PINE", "BIRCH", "OLIVE", "ALDER"]
        for day in days.prefix(3) {
            #expect(day.entries.filter { $0.indexValue == nil }.map(\.code) == withoutIndex)
            #expect(day.entries.filter { $0.indexValue != nil }.map(\.code)
                    == ["GRASS", "WEED", "GRAMINALES", "RAGWEED", "MUGWORT"])
        }
        for day in days.suffix(2) {
            #expect(day.entries.count == 14)
            #expect(day.entries.allSatisfy { $0.indexValue == nil && $0.category == nil && $0.colour == nil })
        }
        let tree = try #require(days[0].entries.first { $0.code == "TREE" })
        #expect(tree == PollenEntry(code: "TREE", displayName: "Tree", isPlant: false))
        #expect(tree.inSeason == nil)
    }

    @Test func indexInfoGivesValueCategoryDescriptionAndColourWithOmittedChannelsAsZero() throws {
        let day = try Self.parseReal()[0]
        let grass = try #require(day.entries.first { $0.code == "GRASS" })
        #expect(grass.indexValue == 2)
        #expect(grass.category == "Low")
        #expect(grass.indexDescription == "People with high allergy to pollen are likely to experience symptoms")
        #expect(grass.inSeason == false)
        // {"red":0.5176471,"green":0.8117647,"blue":0.2} -> 132, 207, 51.
        #expect(grass.colour == "#84CF33")
        let weed = try #require(day.entries.first { $0.code == "WEED" })
        #expect(weed.indexValue == 1)
        #expect(weed.category == "Very Low")
        #expect(weed.inSeason == true)
        // {"green":0.61960787,"blue":0.22745098}: red omitted = 0 -> 0, 158, 58 (domain.md section 4).
        #expect(weed.colour == "#009E3A")
    }

    @Test func healthRecommendationsComeOnlyWithPollenTypes() throws {
        let day = try Self.parseReal()[0]
        let grass = try #require(day.entries.first { $0.code == "GRASS" })
        #expect(grass.healthRecommendations == [
            "It's a good day for outdoor activities since pollen levels are low.",
            "Do you know which plants cause your pollen allergy? Check out the pollen data to be prepared.",
        ])
        #expect(day.entries.first { $0.code == "WEED" }?.healthRecommendations
                == ["Pollen levels are very low right now. It's a great day to enjoy the outdoors!"])
        #expect(day.entries.filter(\.isPlant).allSatisfy { $0.healthRecommendations.isEmpty })
    }

    @Test func plantDescriptionsGiveTypeFamilySeasonAndPictures() throws {
        let day = try Self.parseReal()[0]
        let grasses = try #require(day.entries.first { $0.code == "GRAMINALES" })
        #expect(grasses.displayName == "Grasses")
        #expect(grasses.isPlant)
        #expect(grasses.plantType == "GRASS")
        #expect(grasses.family == "Poaceae")
        #expect(grasses.season == "Late spring, summer")
        #expect(grasses.specialColors == "None")
        #expect(grasses.specialShapes == "The leaves are alternate, long and narrow and the leaf margin is smooth.")
        #expect(grasses.crossReaction?.hasPrefix("Plantain (Plantago) pollen.") == true)
        #expect(grasses.picture == "https://storage.googleapis.com/pollen-pictures/graminales_full.jpg")
        #expect(grasses.pictureCloseup == "https://storage.googleapis.com/pollen-pictures/graminales_closeup.jpg")
        #expect(grasses.indexValue == 2)
        #expect(grasses.colour == "#84CF33")
        let mugwort = try #require(day.entries.first { $0.code == "MUGWORT" })
        #expect(mugwort.plantType == "WEED")
        #expect(mugwort.family == "Asteraceae (the daisy family)")
        #expect(mugwort.season == "Late summer, fall")
        // Plants without a plantDescription (HAZEL ... OLIVE, ALDER) have no type or description.
        let hazel = try #require(day.entries.first { $0.code == "HAZEL" })
        #expect(hazel.plantType == nil && hazel.family == nil && hazel.picture == nil)
        // On the last two days the descriptions are absent too.
        let lastGrasses = try #require(try Self.parseReal()[4].entries.first { $0.code == "GRAMINALES" })
        #expect(lastGrasses.family == nil)
    }

    @Test func aNonEnglishResponseParsesTheSameWayKeyedOnCodes() throws {
        var text = String(decoding: try Self.realBytes(), as: UTF8.self)
        let german = [
            ("\"Grass\"", "\"Gräser\""), ("\"Tree\"", "\"Bäume\""), ("\"Weed\"", "\"Kräuter\""),
            ("\"Grasses\"", "\"Süßgräser\""), ("\"Hazel\"", "\"Hasel\""), ("\"Alder\"", "\"Erle\""),
            ("\"Mugwort\"", "\"Beifuß\""), ("\"Ragweed\"", "\"Ambrosia\""), ("\"Birch\"", "\"シラカバ\""),
            ("\"Universal Pollen Index\"", "\"Universeller Pollenindex\""),
            ("\"Very Low\"", "\"Sehr gering\""), ("\"Low\"", "\"Gering\""),
            ("\"Late spring, summer\"", "\"Später Frühling, Sommer\""),
        ]
        for (english, other) in german {
            #expect(text.contains(english), "\(english) should be in the real response")
            text = text.replacingOccurrences(of: english, with: other)
        }
        let result = try GooglePollenImporter.parse(Array(text.utf8), file: "de.json", options: Self.options())
        #expect(result.issues.isEmpty)
        let days = try Self.forecasts(result)
        #expect(days.count == 5)
        let day = days[0]
        #expect(day.entries.count == 14)
        #expect(day.entries.map(\.code) == (try Self.parseReal())[0].entries.map(\.code))
        let grass = try #require(day.entries.first { $0.code == "GRASS" })
        #expect(grass.displayName == "Gräser")
        #expect(grass.category == "Gering")
        #expect(grass.indexValue == 2)
        #expect(grass.colour == "#84CF33")
        #expect(day.entries.first { $0.code == "WEED" }?.category == "Sehr gering")
        #expect(day.entries.first { $0.code == "BIRCH" }?.displayName == "シラカバ")
        let grasses = try #require(day.entries.first { $0.code == "GRAMINALES" })
        #expect(grasses.displayName == "Süßgräser")
        #expect(grasses.season == "Später Frühling, Sommer")
        #expect(grasses.family == "Poaceae")
    }

    @Test func theLocationIsRequiredBecauseTheResponseHasNone() throws {
        let error = #expect(throws: ImportError.self) {
            _ = try GooglePollenImporter.parse(try Self.realBytes(), file: Self.fileName, options: ImportOptions())
        }
        #expect(error?.message.contains("google-pollen needs --at LAT,LON") == true)
    }

    @Test func filesOfOtherFormatsAreRefused() throws {
        let real = try Self.realBytes()
        let bad: [(String, [UInt8])] = [
            ("truncated JSON", Array(real.prefix(real.count / 2))),
            ("CSV", Array("date,tmin,tmax\n2020-01-01,1,2\n".utf8)),
            ("API error", Array(#"{"error":{"code":403,"message":"The caller does not have permission","status":"PERMISSION_DENIED"}}"#.utf8)),
            ("other JSON", Array(#"{"latitude":52.52,"longitude":13.42,"daily":{"time":[]}}"#.utf8)),
            ("array", Array("[1,2,3]".utf8)),
            ("empty", []),
        ]
        for (name, bytes) in bad {
            let error = #expect(throws: ImportError.self, "\(name)") {
                _ = try GooglePollenImporter.parse(bytes, file: name, options: Self.options())
            }
            #expect(error?.file == name)
        }
        let apiError = #expect(throws: ImportError.self) {
            _ = try GooglePollenImporter.parse(bad[2].1, file: "e.json", options: Self.options())
        }
        #expect(apiError?.message.contains("The caller does not have permission") == true)
    }

    @Test func malformedDaysAreSkippedAndReportedByIndex() throws {
        let json = """
        {"regionCode":"DE","dailyInfo":[
          {"date":{"year":2025,"month":8,"day":3},"pollenTypeInfo":[{"code":"GRASS","displayName":"Grass"}]},
          {"date":{"year":2025,"month":13,"day":3},"pollenTypeInfo":[{"code":"GRASS","displayName":"Grass"}]},
          {"date":{"year":2025,"month":8,"day":5},"pollenTypeInfo":[{"code":"GRASS","displayName":"Grass",
            "indexInfo":{"code":"UPI","value":7,"category":"?"}}]},
          {"date":{"year":2025,"month":8,"day":6}},
          {"date":{"year":2025,"month":8,"day":7},"plantInfo":[{"displayName":"Oak"}]},
          {"date":{"year":2025,"month":8,"day":8},"plantInfo":[{"code":"OAK","displayName":"Oak",
            "indexInfo":{"value":0,"category":"None","color":{}}}]}
        ]}
        """
        let result = try GooglePollenImporter.parse(Array(json.utf8), file: "m.json", options: Self.options())
        #expect(result.rowsRead == 6)
        #expect(result.records.map(\.line) == [1, 6])
        #expect(result.issues.map(\.line) == [2, 3, 4, 5])
        #expect(result.issues[2].reason == "no values")
        #expect(result.issues[1].reason.contains("0-5"))
        #expect(result.issues[3].reason.contains("no code"))
        let days = try Self.forecasts(result)
        // UPI 0 ("None") is a real zero, unlike a missing indexInfo; an empty colour object is black.
        let oak = try #require(days[1].entries.first)
        #expect(oak.indexValue == 0)
        #expect(oak.category == "None")
        #expect(oak.colour == "#000000")
        #expect(oak.plantType == nil)
    }
}
