import Testing
import BreezeAirQuality

struct BreakpointTableTests {
    /// Parses "0.0–4.4, 4.5–9.4" (en dashes, as in domain.md) into ranges.
    private func ranges(_ text: String) -> [(Double, Double)] {
        text.split(separator: ",").map { part in
            let ends = part.split(separator: "–").map { Double($0.filter { $0 != " " }) }
            return (ends[0] ?? .nan, ends[1] ?? .nan)
        }
    }

    private func concentrations(_ table: BreakpointTable) -> [(Double, Double)] {
        table.rows.map { ($0.cLo, $0.cHi) }
    }

    private func same(_ a: [(Double, Double)], _ b: [(Double, Double)]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
    }

    @Test func tablesMatchTheBreakpointsAsWrittenInTheDomainReference() {
        // Copied from shared/docs/domain.md section 1.2 (Table 6 columns and the "Other pollutants" lines).
        #expect(same(concentrations(.pm25Daily2024),
                     ranges("0.0–9.0, 9.1–35.4, 35.5–55.4, 55.5–125.4, 125.5–225.4, 225.5–325.4")))
        #expect(same(concentrations(.pm10Daily2024), ranges("0–54, 55–154, 155–254, 255–354, 355–424, 425–604")))
        #expect(same(concentrations(.ozone8Hour2024),
                     ranges("0.000–0.054, 0.055–0.070, 0.071–0.085, 0.086–0.105, 0.106–0.200")))
        #expect(same(concentrations(.ozone1Hour2024),
                     ranges("0.125–0.164, 0.165–0.204, 0.205–0.404, 0.405–0.604")))
        #expect(same(concentrations(.co8Hour2024),
                     ranges("0.0–4.4, 4.5–9.4, 9.5–12.4, 12.5–15.4, 15.5–30.4, 30.5–50.4")))
        #expect(same(concentrations(.so2OneHour2024), ranges("0–35, 36–75, 76–185, 186–304, 305–604, 605–1004")))
        #expect(same(concentrations(.no2OneHour2024),
                     ranges("0–53, 54–100, 101–360, 361–649, 650–1249, 1250–2049")))
        #expect(same(concentrations(.pm25DailyPre2012),
                     ranges("0.0–15.4, 15.5–40.4, 40.5–65.4, 65.5–150.4, 150.5–250.4, 250.5–350.4, 350.5–500.4")))
        #expect(BreakpointTable.pm25DailyPre2012.rows.map(\.iHi) == [50, 100, 150, 200, 300, 400, 500])
    }

    @Test func everyTableIsContiguousAtItsPrecisionAndReproducesItsOwnBreakpoints() throws {
        for table in BreakpointTable.all2024 + [.pm25DailyPre2012] {
            let step = table.truncationStep
            for (row, next) in zip(table.rows, table.rows.dropFirst()) {
                #expect(table.truncate(row.cHi + step) == next.cLo, "\(table.id) after \(row.cHi)")
                #expect(next.iLo == row.iHi + 1, "\(table.id) after \(row.iHi)")
                #expect(next.category >= row.category, "\(table.id)")
            }
            for row in table.rows {
                let low = try #require(table.aqi(concentration: row.cLo), "\(table.id) \(row.cLo)")
                let high = try #require(table.aqi(concentration: row.cHi), "\(table.id) \(row.cHi)")
                #expect(low.aqi == row.iLo && low.category == row.category, "\(table.id) \(row.cLo)")
                #expect(high.aqi == row.iHi && high.category == row.category, "\(table.id) \(row.cHi)")
                #expect(AQILevel(aqi: row.iLo) == row.category && AQILevel(aqi: row.iHi) == row.category)
            }
        }
    }

    @Test func precisionFollowsThePollutant() {
        // domain.md section 1.1: PM2.5 0.1 µg/m³, PM10 1 µg/m³, O3 0.001 ppm, CO 0.1 ppm, SO2 and NO2 1 ppb.
        let steps = BreakpointTable.all2024.map { ($0.pollutant, $0.truncationStep) }
        let expected: [Pollutant: Double] = [.pm25: 0.1, .pm10: 1, .o3: 0.001, .co: 0.1, .so2: 1, .no2: 1]
        for (pollutant, step) in steps { #expect(step == expected[pollutant], "\(pollutant)") }
        #expect(BreakpointTable.ozone8Hour2024.truncate(0.0709999) == 0.070)
        #expect(BreakpointTable.co8Hour2024.truncate(4.46) == 4.4)
        #expect(BreakpointTable.no2OneHour2024.truncate(53.99) == 53)
    }

    @Test func theDefaultTableForEachPollutantIsA2024Table() {
        for pollutant in Pollutant.allCases {
            let table = BreakpointTable.current(for: pollutant)
            #expect(table.pollutant == pollutant)
            #expect(BreakpointTable.all2024.contains(table))
        }
        #expect(BreakpointTable.current(for: .o3).averaging == .eightHour)
    }
}
