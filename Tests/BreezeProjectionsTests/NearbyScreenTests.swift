import Testing
import BreezeCore
import BreezeAirQuality
@testable import BreezeProjections

/// Expected values computed with python3 from the raw files per domain.md (see `AQScreenFixtures`).
struct NearbyScreenTests {
    typealias F = AQScreenFixtures

    @Test func closestFirstThenByDistance() throws {
        let m = try NearbyScreen.build(try F.world(), F.params("ana", F.troyNow, at: F.troyUser))
        // Haversine from (42.73, -73.69): 87173 1.4461 km, 149970 2.3772 km; 166653 has no location and the
        // monitor is hidden (2019).
        #expect(m.closest == NearbyScreen.Entry(sensorId: "87173", source: "purpleair", name: "North Central Troy #1",
                                                distanceKm: 1.45, aqi: 93, category: "moderate", colour: "#FFFF00", isStale: false))
        #expect(m.others == [NearbyScreen.Entry(sensorId: "149970", source: "purpleair", name: "South Troy #2",
                                                distanceKm: 2.38, aqi: 37, category: "good", colour: "#00E400", isStale: false)])
        #expect(m.favourites.isEmpty)
        // From the south: 149970 first.
        let south = try NearbyScreen.build(try F.world(), F.params("ana", F.troyNow, at: (42.70, -73.70)))
        #expect(south.closest?.sensorId == "149970" && south.others.map(\.sensorId) == ["87173"])
    }

    @Test func favouritesHaveTrendArrowsUnderTheUsersCorrection() throws {
        let m = try NearbyScreen.build(try F.world(), F.params("bo", F.troyNow, at: F.troyUser))
        // bo: no correction. NowCast AQI at 21:00 against 18:00 (python3): 149970 42 vs 46 falling (more than
        // 5 %), 87173 150 vs 49 rising. Favourites in sorted order of their ids.
        #expect(m.favourites.map(\.sensorId) == ["149970", "87173"])
        #expect(m.favourites.map(\.aqi) == [42, 150] && m.favourites.map(\.aqiThreeHoursAgo) == [46, 49])
        #expect(m.favourites.map(\.trend) == ["falling", "rising"])
        #expect(m.favourites.map(\.category) == ["good", "usg"] && m.favourites.map(\.distanceKm) == [2.38, 1.45])
        #expect(m.closest?.aqi == 150)
    }

    @Test func staleAndDisabled() throws {
        let world = try F.world()
        // cy disabled PurpleAir: no sensor listed; the favourite monitor is shown, old and without an AQI.
        let cy = try NearbyScreen.build(world, F.params("cy", F.troyNow, at: F.troyUser))
        #expect(cy.closest == nil && cy.others.isEmpty)
        #expect(cy.favourites.count == 1)
        let fav = try #require(cy.favourites.first)
        #expect(fav.sensorId == "370630099" && fav.isStale && fav.aqi == nil && fav.trend == nil && fav.distanceKm == 881.35)
        // 61 minutes after the last Troy reading both are stale.
        let stale = try NearbyScreen.build(world, F.params("bo", F.troyLastReading + 3601, at: F.troyUser))
        #expect(stale.closest?.isStale == true && stale.others.allSatisfy(\.isStale) && stale.favourites.allSatisfy(\.isStale))
        // No place known: the favourites without distances, nothing by distance.
        let nowhere = try NearbyScreen.build(world, F.params("bo", F.troyNow))
        #expect(!nowhere.locationKnown && nowhere.closest == nil && nowhere.others.isEmpty
                && !nowhere.favourites.isEmpty && nowhere.favourites.allSatisfy { $0.distanceKm == nil })
    }

    @Test func rebuildingFromEventsInAnotherOrderIsByteIdentical() throws {
        let a = try F.world(), b = try F.shuffledWorld()
        for user in ["ana", "bo", "cy"] {
            let p = F.params(user, F.troyNow, at: F.troyUser)
            #expect(try Screens.json(NearbyScreen.build(a, p)) == Screens.json(NearbyScreen.build(b, p)))
        }
        let lines = NearbyScreen.render(try NearbyScreen.build(a, F.params("bo", F.troyNow, at: F.troyUser)))
        #expect(lines.contains("   42 ↓  Good                           South Troy #2"))
    }
}
