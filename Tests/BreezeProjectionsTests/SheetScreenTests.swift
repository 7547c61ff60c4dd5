import Testing
import BreezeCore
import BreezeAirQuality
@testable import BreezeProjections

/// Expected values computed with python3 from the raw files per domain.md (see `AQScreenFixtures`).
struct SheetScreenTests {
    typealias F = AQScreenFixtures

    @Test func troySheetHasBadgeFreshnessDistanceAndLegend() throws {
        let world = try F.world()
        let m = try SheetScreen.build(world, F.params("ana", F.troyNow, sensor: "149970", at: F.troyUser))
        #expect(m.sensorId == "149970" && m.name == "South Troy #2")
        #expect(m.badge == AirQualityBadge(aqi: 37, category: "good", colour: "#00E400", beyondIndex: false))
        // Newest reading 22:20, now 22:27:30.
        #expect(m.updated == Updated(time: "2023-10-27T22:20:00Z", seconds: 450, text: "7 min ago"))
        #expect(!m.isStale)
        // Haversine (42.7300, -73.6900) -> (42.7087, -73.6925), R = 6371 km: 2.3772 km.
        #expect(m.distanceKm == 2.38)
        #expect(!m.isFavourite)
        #expect(m.legend.map(\.category) == ["good", "moderate", "usg", "unhealthy", "very-unhealthy", "hazardous"])
        #expect(m.legend.map(\.low) == [0, 51, 101, 151, 201, 301] && m.legend.map(\.high) == [50, 100, 150, 200, 300, 500])
        #expect(m.legend.map(\.colour) == ["#00E400", "#FFFF00", "#FF7E00", "#FF0000", "#8F3F97", "#7E0023"])
        #expect(m.legend.filter(\.isCurrent).map(\.category) == ["good"])
        #expect(m.legend[2].title == "Unhealthy for Sensitive Groups")
    }

    @Test func favouriteStarAndCorrectionArePerUser() throws {
        let world = try F.world()
        let ana = try SheetScreen.build(world, F.params("ana", F.troyNow, sensor: "87173"))
        let bo = try SheetScreen.build(world, F.params("bo", F.troyNow, sensor: "87173"))
        #expect(!ana.isFavourite && bo.isFavourite)
        // 87173 at 21:00: EPA-corrected AQI 93 Moderate, uncorrected 150 USG (python3).
        #expect(ana.badge.aqi == 93 && ana.badge.category == "moderate")
        #expect(bo.badge.aqi == 150 && bo.badge.category == "usg")
        #expect(bo.legend.filter(\.isCurrent).map(\.category) == ["usg"])
        // No --at: no distance.
        #expect(ana.distanceKm == nil)
        // cy favourited the monitor as source:id.
        let cy = try SheetScreen.build(world, F.params("cy", F.troyNow, sensor: "airnow:370630099"))
        #expect(cy.isFavourite)
    }

    @Test func staleSensorsSayHowOld() throws {
        let world = try F.world()
        let pa = try SheetScreen.build(world, F.params("ana", F.troyLastReading + 3601, sensor: "149970"))
        #expect(pa.isStale && pa.updated == Updated(time: "2023-10-30T00:10:00Z", seconds: 3601, text: "1 h ago"))
        // Monitor: age from the end of the last hour (2019-09-30T23:00-24:00): 3 h 1 s -> stale; `time` names
        // the hour that ended, 2019-10-01T00:00, not the hour's start.
        let mon = try SheetScreen.build(world, F.params("ana", F.t("2019-10-01T03:00") + 1, sensor: "370630099",
                                                        at: F.troyUser))
        #expect(mon.isStale && mon.updated == Updated(time: "2019-10-01T00:00:00Z", seconds: 10801, text: "3 h ago"))
        #expect(mon.badge == AirQualityBadge(nil) && mon.legend.allSatisfy { !$0.isCurrent })
        // (42.73, -73.69) -> (35.889402, -78.8747): 881.35 km (python3).
        #expect(mon.distanceKm == 881.35)
        let old = try SheetScreen.build(world, F.params("ana", F.troyLastReading + 9 * 86400, sensor: "149970"))
        #expect(old.updated?.text == "9 days ago" && old.isStale)
    }

    @Test func parametersAreChecked() throws {
        let world = try F.world()
        #expect(throws: ScreenError.self) { try SheetScreen.build(world, F.params("ana", F.troyNow)) }
        #expect(throws: ScreenError.self) { try SheetScreen.build(world, F.params("ana", F.troyNow, sensor: "purpleair:370630099")) }
    }

    @Test func rebuildingFromEventsInAnotherOrderIsByteIdentical() throws {
        let a = try F.world(), b = try F.shuffledWorld()
        for (user, sensor) in [("ana", "149970"), ("bo", "87173"), ("cy", "370630099")] {
            let p = F.params(user, F.troyNow, sensor: sensor, at: F.troyUser)
            #expect(try Screens.json(SheetScreen.build(a, p)) == Screens.json(SheetScreen.build(b, p)))
        }
        let lines = SheetScreen.render(try SheetScreen.build(a, F.params("bo", F.troyNow, sensor: "87173", at: F.troyUser)))
        #expect(lines[0] == "★ North Central Troy #1 (purpleair:87173)")
        #expect(lines.contains("> 101-150  #FF7E00  Unhealthy for Sensitive Groups"))
    }
}
