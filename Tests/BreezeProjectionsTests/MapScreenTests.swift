import Testing
import BreezeCore
import BreezeAirQuality
@testable import BreezeProjections

/// Expected values computed with python3 from the raw files per domain.md (see `AQScreenFixtures`).
struct MapScreenTests {
    typealias F = AQScreenFixtures

    static func params(_ user: String, _ now: Int64, metric: String = "aqi", at: (latitude: Double, longitude: Double)? = nil,
                       bbox: (south: Double, west: Double, north: Double, east: Double)? = nil) -> ScreenParameters {
        var p = F.params(user, now, at: at)
        p.metric = metric
        p.bbox = bbox
        return p
    }

    @Test func aqiPinsAndTheMedianHeader() throws {
        let m = try MapScreen.build(try F.world(), Self.params("ana", F.troyNow))
        // 166653 has no location and the 2019 monitor is hidden (> 7 days old): neither is a pin.
        #expect(m.pins.map(\.sensorId) == ["149970", "87173"])
        #expect(m.metric == "aqi" && m.unit == "AQI")
        let south = m.pins[0], north = m.pins[1]
        #expect(south == MapScreen.Pin(sensorId: "149970", source: "purpleair", name: "South Troy #2", latitude: 42.7087,
                                       longitude: -73.6925, value: 37, label: "37", category: "good", colour: "#00E400",
                                       isStale: false))
        #expect(north.value == 93 && north.category == "moderate" && north.colour == "#FFFF00" && north.label == "93")
        // Median of [37, 93] (the higher middle): 93, Moderate.
        #expect(m.header.basis == "median" && m.header.title == "The air is moderate")
        #expect(m.header.subtitle == "Median AQI 93 of 2 sensors in view" && m.header.sensorCount == 2)
        #expect(m.header.badge.aqi == 93 && m.header.badge.colour == "#FFFF00")
    }

    @Test func theHeaderUsesTheNearestSensorToTheUser() throws {
        let world = try F.world()
        let near87173 = try MapScreen.build(world, Self.params("ana", F.troyNow, at: F.troyUser))
        #expect(near87173.header.basis == "nearest" && near87173.header.sensor == "purpleair:87173")
        #expect(near87173.header.distanceKm == 1.45)
        #expect(near87173.header.subtitle == "AQI 93 at North Central Troy #1, 1.4 km away")
        let near149970 = try MapScreen.build(world, Self.params("ana", F.troyNow, at: (42.7087, -73.6925)))
        #expect(near149970.header.title == "The air is good" && near149970.header.sensor == "purpleair:149970")
        #expect(near149970.header.distanceKm == 0)
    }

    @Test func theBoundingBoxSelectsPins() throws {
        let m = try MapScreen.build(try F.world(), Self.params("ana", F.troyNow, bbox: (42.73, -73.70, 42.76, -73.67)))
        #expect(m.pins.map(\.sensorId) == ["87173"])
        #expect(m.header.subtitle == "Median AQI 93 of 1 sensor in view")
        let none = try MapScreen.build(try F.world(), Self.params("ana", F.troyNow, bbox: (40, -75, 41, -74)))
        #expect(none.pins.isEmpty && none.header.basis == "none")
    }

    @Test func otherMetricsInTheUsersUnitAndCorrection() throws {
        let world = try F.world()
        // PM2.5 at 21:00, EPA-corrected (python3): 87173 56.115 -> AQI 151 Unhealthy; 149970 6.5586 Good.
        let pm = try MapScreen.build(world, Self.params("ana", F.troyNow, metric: "pm25"))
        #expect(pm.unit == "µg/m³")
        // Shown truncated to 0.1, as the AQI uses it (domain.md 1.1): 6.5586 -> 6.5, 56.115 -> 56.1.
        #expect(pm.pins.map(\.value) == [6.5, 56.1] && pm.pins.map(\.label) == ["6.5", "56.1"])
        #expect(pm.pins.map(\.category) == ["good", "unhealthy"] && pm.pins.map(\.colour) == ["#00E400", "#FF0000"])
        // Uncorrected (bo): 149970 7.5858, 87173 102.62; AQI 42 and 150.
        let pmRaw = try MapScreen.build(world, Self.params("bo", F.troyNow, metric: "pm25"))
        #expect(pmRaw.pins.map(\.value) == [7.5, 102.6])
        let aqiRaw = try MapScreen.build(world, Self.params("bo", F.troyNow))
        #expect(aqiRaw.pins.map(\.value) == [42, 150] && aqiRaw.pins.map(\.category) == ["good", "usg"])
        // Temperature: 24.72 C and 24.06 C (housing - 8 F), 76.5 F and 75.3 F; band "warm" (24-30 C).
        let c = try MapScreen.build(world, Self.params("ana", F.troyNow, metric: "temperature"))
        let f = try MapScreen.build(world, Self.params("bo", F.troyNow, metric: "temperature"))
        #expect(c.unit == "°C" && f.unit == "°F")
        #expect(c.pins.map(\.value) == [24.7, 24.1] && c.pins.map(\.label) == ["25", "24"])
        #expect(f.pins.map(\.value) == [76.5, 75.3] && f.pins[1].label == "75")
        #expect(f.pins.allSatisfy { $0.category == "warm" && $0.colour == "#F59E0B" })
        // Humidity: 40.73 % and 43.53 % (housing + 4): comfortable (30-50).
        let rh = try MapScreen.build(world, Self.params("ana", F.troyNow, metric: "humidity"))
        #expect(rh.unit == "%" && rh.pins.map(\.value) == [40.7, 43.5] && rh.pins.map(\.label) == ["41", "44"])
        #expect(rh.pins.allSatisfy { $0.category == "comfortable" && $0.colour == "#2A9D8F" })
        // The header speaks of AQI whatever the metric.
        #expect(rh.header.title == "The air is moderate")
        #expect(throws: ScreenError.self) { try MapScreen.build(world, Self.params("ana", F.troyNow, metric: "ozone")) }
    }

    @Test func bandsOfTheNonEPAScales() {
        #expect(MapScreen.band(-0.1, MapScreen.temperatureBands).name == "freezing")
        #expect(MapScreen.band(0, MapScreen.temperatureBands).name == "cold")
        #expect(MapScreen.band(35, MapScreen.temperatureBands).name == "very-hot")
        #expect(MapScreen.band(29.9, MapScreen.humidityBands).name == "dry")
        #expect(MapScreen.band(60, MapScreen.humidityBands).name == "humid")
    }

    @Test func disabledSourcesStaleAndHiddenSensors() throws {
        let world = try F.world()
        // cy disabled PurpleAir; in 2023 the monitor is hidden: nothing to show.
        let cy = try MapScreen.build(world, Self.params("cy", F.troyNow))
        #expect(cy.pins.isEmpty && cy.header.title == "No current readings")
        // In 2019 the monitor is a pin (NowCast at 10:00, python3: 9.93 -> 9.9 -> AQI 52) and Troy is not.
        let y2019 = try MapScreen.build(world, Self.params("cy", F.t("2019-08-19T11:30")))
        #expect(y2019.pins.count == 1)
        #expect(y2019.pins.first.map { ($0.sensorId, $0.name, $0.value, $0.category, $0.isStale) } ?? ("", "", nil, nil, true)
                == ("370630099", "Burdens Creek", 52, "moderate", false))
        // 61 minutes after the last Troy reading: pins stale; the median header uses fresh sensors only.
        let stale = try MapScreen.build(world, Self.params("ana", F.troyLastReading + 3601))
        #expect(stale.pins.count == 2 && stale.pins.allSatisfy(\.isStale))
        #expect(stale.header.basis == "none" && stale.header.sensorCount == 0)
        // The nearest-sensor header still says what the stale sensor's NowCast is (00:00 hour incomplete,
        // 23:00 and 22:00 valid, python3: 1.93 -> AQI 11).
        let staleNear = try MapScreen.build(world, Self.params("ana", F.troyLastReading + 3601, at: F.troyUser))
        #expect(staleNear.header.subtitle == "AQI 11 at North Central Troy #1, 1.4 km away (stale)")
        // After 7 days: hidden, no pins.
        let hidden = try MapScreen.build(world, Self.params("ana", F.troyLastReading + 7 * 86400 + 1))
        #expect(hidden.pins.isEmpty)
    }

    @Test func rebuildingFromEventsInAnotherOrderIsByteIdentical() throws {
        let a = try F.world(), b = try F.shuffledWorld()
        for user in ["ana", "bo", "cy"] {
            for metric in MapScreen.metrics {
                let p = Self.params(user, F.troyNow, metric: metric, at: F.troyUser)
                #expect(try Screens.json(MapScreen.build(a, p)) == Screens.json(MapScreen.build(b, p)))
            }
        }
        let lines = MapScreen.render(try MapScreen.build(a, Self.params("ana", F.troyNow)))
        #expect(lines[0] == "The air is moderate" && lines.count == 5)
    }
}
