import Foundation
import Testing
import BreezeCore
import BreezeImport
@testable import BreezeProjections

/// Expectations read from the raw response with python3 (`json.load`, then each `pollenTypeInfo` and
/// `plantInfo` entry of `dailyInfo[0]`); colours are `round(channel * 255)` in hex; distances are haversine
/// with R = 6371 km (domain.md section 7).
struct PollenScreenTests {
    static func params(_ lat: Double, _ lon: Double, date: String?, now: Int64 = FactScreenWorlds.time("2025-08-03T09:00:00Z")) -> ScreenParameters {
        var p = ScreenParameters(user: "me", now: now)
        p.at = (lat, lon)
        p.date = date
        return p
    }

    @Test func theRealForecastOfAugust3WithOutOfSeasonEntriesAsNil() throws {
        let m = try FactScreenWorlds.deterministic(PollenScreen.self, try FactScreenWorlds.pollen(), Self.params(51.2, 10.5, date: "2025-08-03"))
        #expect(!m.isEmpty && m.message == nil && m.date == "2025-08-03")
        #expect(m.latitude == 51.1657 && m.longitude == 10.4515 && m.regionCode == "DE")
        #expect(m.distanceKm == 5.1)   // 5.0965 km
        #expect(m.attribution == "Powered by Google")
        #expect(m.items.map(\.id) == ["GRASS", "TREE", "WEED", "HAZEL", "ASH", "COTTONWOOD", "OAK", "PINE", "BIRCH", "OLIVE",
                                      "GRAMINALES", "RAGWEED", "ALDER", "MUGWORT"])
        #expect(m.items.map(\.isPlant) == [false, false, false] + Array(repeating: true, count: 11))
        let byID = Dictionary(uniqueKeysWithValues: m.items.map { ($0.id, $0) })

        // GRASS: UPI 2 "Low", colour (0.5176471, 0.8117647, 0.2) -> #84CF33, and Google says inSeason false.
        let grass = byID["GRASS"]!
        #expect(grass.name == "Grass" && grass.value == 2 && grass.category == "Low" && grass.colour == "#84CF33")
        #expect(grass.designLevel == "Moderate" && byID["WEED"]?.designLevel == "Low" && byID["TREE"]?.designLevel == nil)
        #expect(grass.inSeason == false && grass.healthRecommendations.count == 2)
        #expect(grass.healthRecommendations[0] == "It's a good day for outdoor activities since pollen levels are low.")
        // WEED: UPI 1 "Very Low", red omitted -> #009E3A, in season.
        let weed = byID["WEED"]!
        #expect(weed.value == 1 && weed.category == "Very Low" && weed.colour == "#009E3A" && weed.inSeason)
        #expect(weed.indexDescription == "People with very high allergy to pollen are likely to experience symptoms")

        // Nine entries have no indexInfo: out of season, value nil (never 0), no category or colour.
        let out = m.items.filter { $0.value == nil }
        #expect(out.map(\.id) == ["TREE", "HAZEL", "ASH", "COTTONWOOD", "OAK", "PINE", "BIRCH", "OLIVE", "ALDER"])
        #expect(out.allSatisfy { !$0.inSeason && $0.category == nil && $0.colour == nil && $0.healthRecommendations.isEmpty })
        #expect(!m.items.contains { $0.value == 0 })

        // Plant descriptions.
        let grasses = byID["GRAMINALES"]!
        #expect(grasses.name == "Grasses" && grasses.family == "Poaceae" && grasses.season == "Late spring, summer")
        #expect(grasses.imageUrl == "https://storage.googleapis.com/pollen-pictures/graminales_full.jpg")
        // specialColors is Google's placeholder "None": the appearance is the shapes alone.
        #expect(grasses.appearance == "The leaves are alternate, long and narrow and the leaf margin is smooth.")
        #expect(grasses.value == 2 && grasses.inSeason == false && grasses.healthRecommendations.isEmpty)
        let mugwort = byID["MUGWORT"]!
        #expect(mugwort.appearance == "The leaves are green on the upper side and gray-green on the lower side. "
                + "The leaves are alternate, divided and pinnate.")
        #expect(mugwort.family == "Asteraceae (the daisy family)" && mugwort.season == "Late summer, fall" && mugwort.inSeason)
        #expect(mugwort.crossReaction?.hasPrefix("Ragweed and Goldenrod pollen") == true)

        // The six UPI levels, the day's highest (2, Low) active, colours from the data where a level occurs.
        #expect(m.scale.map(\.level) == ["None", "Very Low", "Low", "Moderate", "High", "Very High"])
        #expect(m.scale.map(\.value) == [0, 1, 2, 3, 4, 5])
        #expect(m.activeLevel == 2 && m.scale.map(\.isActive) == [false, false, true, false, false, false])
        // Every row has a colour: the forecast's own for UPI 1 and 2, the named swatch for the others.
        #expect(m.scale.map(\.colour) == ["#8E8E93", "#009E3A", "#84CF33", "#FFD600", "#FF8C00", "#E53935"])
        #expect(m.scale.map(\.colourSource) == ["swatch", "data", "data", "swatch", "swatch", "swatch"])
        // Where the six UPI levels sit on the design's five rows (None 0, Low 1, Moderate 2-3, High 4, Very High 5).
        #expect(m.scale.map(\.designLevel) == ["None", "Low", "Moderate", "Moderate", "High", "Very High"])
        // Each item's sheet marks its own level: WEED (1) on Very Low, GRASS (2) on Low, TREE (out of season)
        // none; the rows are otherwise the card's.
        #expect(byID["WEED"]!.scale.map(\.isActive) == [false, true, false, false, false, false])
        #expect(byID["GRASS"]!.scale.filter(\.isActive).map(\.level) == ["Low"])
        #expect(byID["TREE"]!.scale.filter(\.isActive).isEmpty)
        #expect(m.items.allSatisfy { $0.scale.map(\.colour) == m.scale.map(\.colour) })

        let text = PollenScreen.render(m)
        #expect(text.contains { $0.hasPrefix("Tree") && $0.contains("out of season") })
        #expect(text.contains { $0.hasPrefix("> Low") })
    }

    @Test func turningGooglePollenOffIsTheEmptyState() throws {
        let events = try FactScreenWorlds.pollen() + FactScreenWorlds.user("me", [.sourceDisable(source: "google-pollen")])
        let m = try PollenScreen.build(FactWorld(events: events), Self.params(51.2, 10.5, date: "2025-08-03"))
        #expect(m.isEmpty && m.items.isEmpty && m.message == "Google Pollen is turned off" && m.latitude == nil)
        #expect(m.scale.count == 6 && !m.scale.contains(where: \.isActive))
        // Turned back on, the forecast is there again.
        let on = try FactScreenWorlds.pollen()
            + FactScreenWorlds.user("me", [.sourceDisable(source: "google-pollen"), .sourceEnable(source: "google-pollen")])
        #expect(!(try PollenScreen.build(FactWorld(events: on), Self.params(51.2, 10.5, date: "2025-08-03"))).isEmpty)
    }

    @Test func thePlaceholderForNothingIsDroppedInTheResponsesLanguage() throws {
        // The real response with its English placeholder "None" written as a German response would have it.
        let text = String(decoding: try WorldSupport.bytes("google_pollen_forecast_DE_2025-08-03_teamjaf", "json"), as: UTF8.self)
        #expect(text.contains(#""specialColors": "None""#))
        let german = Array(text.replacingOccurrences(of: #""specialColors": "None""#, with: #""specialColors": "Keine""#).utf8)
        var o = ImportOptions()
        o.at = (51.1657, 10.4515)
        let parsed = try GooglePollenImporter.parse(german, file: "de.json", options: o)
        let world = FactWorld(events: WorldSupport.events(parsed.records))
        let m = try PollenScreen.build(world, Self.params(51.2, 10.5, date: "2025-08-03"))
        let grasses = try #require(m.items.first { $0.id == "GRAMINALES" })
        #expect(grasses.appearance == "The leaves are alternate, long and narrow and the leaf margin is smooth.")
        #expect(!m.items.contains { $0.appearance?.contains("Keine") == true })
    }

    @Test func aDayWithEveryEntryOutOfSeasonIsNotEmpty() throws {
        // 2025-08-06: all 14 entries arrive as {code, displayName} only.
        let m = try PollenScreen.build(FactWorld(events: try FactScreenWorlds.pollen()), Self.params(51.1657, 10.4515, date: "2025-08-06"))
        #expect(!m.isEmpty && m.items.count == 14 && m.distanceKm == 0)
        #expect(m.items.allSatisfy { $0.value == nil && !$0.inSeason })
        #expect(m.activeLevel == nil && !m.scale.contains(where: \.isActive))
    }

    @Test func justAfterMidnightInBerlinItIsTheNewDay() throws {
        let world = FactWorld(events: try FactScreenWorlds.pollen())
        // 2025-08-03T22:30Z is 00:30 CEST on the 4th: a phone in Berlin shows the 4th's forecast.
        var p = Self.params(51.1657, 10.4515, date: nil, now: FactScreenWorlds.time("2025-08-03T22:30:00Z"))
        p.timeZone = "Europe/Berlin"
        let berlin = try PollenScreen.build(world, p)
        #expect(berlin.date == "2025-08-04" && berlin.timeZone == "Europe/Berlin" && !berlin.isEmpty)
        p.timeZone = nil
        let utc = try PollenScreen.build(world, p)
        #expect(utc.date == "2025-08-03" && utc.timeZone == "UTC")
    }

    @Test func theDateDefaultsToTheUTCDayOfNow() throws {
        let world = FactWorld(events: try FactScreenWorlds.pollen())
        let m = try PollenScreen.build(world, Self.params(51.1657, 10.4515, date: nil, now: FactScreenWorlds.time("2025-08-04T23:30:00Z")))
        #expect(m.date == "2025-08-04" && !m.isEmpty && m.items.first { $0.id == "GRASS" }?.value == 2)
    }

    @Test func noForecastForThePlaceOrDayIsTheEmptyState() throws {
        let world = FactWorld(events: try FactScreenWorlds.pollen())
        // Munich is 346 km away.
        let far = try PollenScreen.build(world, Self.params(48.137, 11.575, date: "2025-08-03"))
        #expect(far.isEmpty && far.items.isEmpty && far.activeLevel == nil && far.latitude == nil)
        #expect(far.message?.hasPrefix("No pollen data available") == true)
        #expect(far.scale.count == 6 && !far.scale.contains(where: \.isActive))
        // A day the forecast does not cover.
        let later = try PollenScreen.build(world, Self.params(51.1657, 10.4515, date: "2025-08-09"))
        #expect(later.isEmpty && later.items.isEmpty)
        #expect(PollenScreen.render(later).last?.hasPrefix("No pollen data available for 2025-08-09") == true)
        // 50 km: 0.44 degrees north is 48.93 km (inside), 0.46 degrees is 51.15 km (outside).
        #expect(!(try PollenScreen.build(world, Self.params(51.1657 + 0.44, 10.4515, date: "2025-08-03"))).isEmpty)
        #expect(try PollenScreen.build(world, Self.params(51.1657 + 0.46, 10.4515, date: "2025-08-03")).isEmpty)
        // No position at all (location permission denied) is the empty state too, saying so.
        var p = Self.params(0, 0, date: "2025-08-03")
        p.at = nil
        let nowhere = try PollenScreen.build(world, p)
        #expect(nowhere.isEmpty && nowhere.items.isEmpty && nowhere.message?.contains("Location unknown") == true)
        p = Self.params(51.1657, 10.4515, date: "2025-02-30")
        #expect(throws: ScreenError.self) { try PollenScreen.build(world, p) }
    }

    @Test func theNearestPlaceThatHasTheDayIsChosen() throws {
        // The same real response attributed to a second place 26 km north (51.4,10.4515) for its first two
        // days only, so the choice between places can be checked on real content.
        var o = ImportOptions()
        o.at = (51.4, 10.4515)
        let north = try FactScreenWorlds.importing(GooglePollenImporter.self, "google_pollen_forecast_DE_2025-08-03_teamjaf", "json",
                                                   options: o, replica: 0xA6) { r in
            guard case .pollenForecast(let f) = r.body else { return false }
            return f.date <= "2025-08-04"
        }
        let events = try FactScreenWorlds.pollen() + north
        // At 51.35: 5.56 km from the north place, 20.49 km from the original one.
        let near = try FactScreenWorlds.deterministic(PollenScreen.self, events, Self.params(51.35, 10.4515, date: "2025-08-04"))
        #expect(near.latitude == 51.4 && near.distanceKm == 5.6)
        // On 2025-08-05 only the original place has a forecast, and it is within 50 km.
        let fallback = try PollenScreen.build(FactWorld(events: events), Self.params(51.35, 10.4515, date: "2025-08-05"))
        #expect(fallback.latitude == 51.1657 && fallback.distanceKm == 20.5)
    }
}
