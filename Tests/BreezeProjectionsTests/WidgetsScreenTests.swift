import Foundation
import Testing
import BreezeCore
import BreezeAirQuality
@testable import BreezeProjections

/// Expected values computed with python3 from the raw files per domain.md (see `AQScreenFixtures`).
struct WidgetsScreenTests {
    typealias F = AQScreenFixtures

    @Test func nearestSensorDrivesAllThreeWidgets() throws {
        // (42.745, -73.680) is 0.43 km from 87173 and 4.16 km from 149970.
        let m = try WidgetsScreen.build(try F.world(), F.params("ana", F.troyNow, at: (42.7450, -73.6800)))
        #expect(m.lockScreen == WidgetsScreen.LockScreen(sensorId: "87173", source: "purpleair", name: "North Central Troy #1",
                                                         aqi: 93, category: "moderate", colour: "#FFFF00", isStale: false,
                                                         basis: "nearest", distanceKm: 0.43))
        // NowCast AQI 18:00..21:00 (python3, EPA-corrected): 42, 40, 39, 93; 93 vs 42 three hours earlier: rising.
        #expect(m.liveActivity == WidgetsScreen.LiveActivity(name: "North Central Troy #1", aqi: 93, category: "moderate",
                                                             colour: "#FFFF00", trend: "rising", recent: [42, 40, 39, 93]))
        #expect(m.tile == WidgetsScreen.Tile(value: 93, label: "93", title: "Moderate", background: "#FFFF00", foreground: "#000000"))
    }

    @Test func withoutAPositionTheFirstFavouriteUnderTheUsersCorrection() throws {
        let m = try WidgetsScreen.build(try F.world(), F.params("bo", F.troyNow))
        // bo's favourites sorted: "149970" < "87173". Uncorrected 149970 (python3): 18:00 46, 19:00 46 (the
        // 30-minute gap: no value of its own, its NowCast as the detail bar shows it), 20:00 42, 21:00 42;
        // 42 vs 46 falling.
        #expect(m.lockScreen.sensorId == "149970" && m.lockScreen.basis == "favourite" && m.lockScreen.distanceKm == nil)
        #expect(m.liveActivity.recent == [46, 46, 42, 42] && m.liveActivity.trend == "falling")
        #expect(m.tile.value == 42 && m.tile.background == "#00E400" && m.tile.foreground == "#000000")
        // bo's USG reading of 87173 (AQI 150) gives an orange tile with black text.
        let near = try WidgetsScreen.build(try F.world(), F.params("bo", F.troyNow, at: (42.7450, -73.6800)))
        #expect(near.tile == WidgetsScreen.Tile(value: 150, label: "150", title: "Unhealthy for Sensitive Groups",
                                                background: "#FF7E00", foreground: "#000000"))
    }

    @Test func staleMonitorFavouriteAndNoSensor() throws {
        let world = try F.world()
        // cy: PurpleAir disabled, so --at in Troy finds nothing and the favourite monitor is used; in 2023 it
        // is years old: no AQI, grey tile.
        let cy = try WidgetsScreen.build(world, F.params("cy", F.troyNow, at: F.troyUser))
        #expect(cy.lockScreen.sensorId == "370630099" && cy.lockScreen.basis == "favourite" && cy.lockScreen.isStale)
        #expect(cy.tile == WidgetsScreen.Tile(value: nil, label: "-", title: "No data", background: "#8E8E93", foreground: "#000000"))
        #expect(cy.liveActivity.aqi == nil && cy.liveActivity.trend == nil && cy.liveActivity.recent == [nil, nil, nil, nil])
        // In 2019 at 20:30 (python3): bars 16:00 missing (NowCast invalid), 17-19: 53, 53, 52; no AQI 3 hours
        // earlier, so no direction.
        let y2019 = try WidgetsScreen.build(world, F.params("cy", F.t("2019-08-19T20:30")))
        #expect(y2019.liveActivity.recent == [nil, 53, 53, 52] && y2019.liveActivity.trend == nil)
        #expect(y2019.lockScreen.aqi == 52 && !y2019.lockScreen.isStale)
        // ana has no favourites: without --at there is no sensor, and the widgets are the placeholder (grey,
        // no number, no sensor id), not an error.
        let ana = try WidgetsScreen.build(world, F.params("ana", F.troyNow))
        #expect(ana == WidgetsScreen.placeholder)
        #expect(ana.lockScreen.basis == "placeholder" && ana.lockScreen.sensorId == nil && ana.lockScreen.aqi == nil)
        #expect(ana.tile == WidgetsScreen.Tile(value: nil, label: "-", title: "No data", background: "#8E8E93", foreground: "#000000"))
        // ... and so is ana far from every sensor (Berlin).
        #expect(try WidgetsScreen.build(world, F.params("ana", F.troyNow, at: (52.52, 13.405))) == WidgetsScreen.placeholder)
        // The placeholder's JSON leaves the missing keys out, as every model does; a missing bar is a null in
        // its place.
        let json = String(decoding: try JSONEncoder().encode(ana), as: UTF8.self)
        #expect(!json.contains("sensorId") && !json.contains("\"aqi\"") && json.contains("\"basis\":\"placeholder\""))
        #expect(json.contains("\"recent\":[null,null,null,null]"))
    }

    @Test func tileTextContrastsWithEveryEPAColour() {
        // WCAG 2 contrast, computed with python3: black on green, yellow, orange, red; white on purple, maroon.
        #expect(AQILevel.allCases.map { WidgetsScreen.textColour(on: $0.colourHex) }
                == ["#000000", "#000000", "#000000", "#000000", "#FFFFFF", "#FFFFFF"])
    }

    @Test func rebuildingFromEventsInAnotherOrderIsByteIdentical() throws {
        let a = try F.world(), b = try F.shuffledWorld()
        for user in ["ana", "bo", "cy"] {
            let p = F.params(user, F.troyNow, at: F.troyUser)
            #expect(try Screens.json(WidgetsScreen.build(a, p)) == Screens.json(WidgetsScreen.build(b, p)))
        }
        let lines = WidgetsScreen.render(try WidgetsScreen.build(a, F.params("ana", F.troyNow, at: F.troyUser)))
        #expect(lines.count == 3 && lines[1].hasPrefix("Live Activity   93  ↑ rising"))
    }
}
