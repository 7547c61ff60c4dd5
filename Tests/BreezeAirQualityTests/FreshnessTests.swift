import Testing
import BreezeAirQuality

struct FreshnessTests {
    @Test func purpleAirReadingsGoStaleAfterSixtyMinutes() {
        #expect(Freshness(ageSeconds: 0, kind: .purpleAir) == .fresh)
        #expect(Freshness(ageSeconds: 60 * 60, kind: .purpleAir) == .fresh)
        #expect(Freshness(ageSeconds: 60 * 60 + 1, kind: .purpleAir) == .stale)
    }

    @Test func monitorReadingsGoStaleAfterThreeHours() {
        #expect(Freshness(ageSeconds: 60 * 60 + 1, kind: .monitor) == .fresh)
        #expect(Freshness(ageSeconds: 3 * 60 * 60, kind: .monitor) == .fresh)
        #expect(Freshness(ageSeconds: 3 * 60 * 60 + 1, kind: .monitor) == .stale)
    }

    @Test func everythingIsHiddenAfterSevenDays() {
        for kind in Freshness.SourceKind.allCases {
            #expect(Freshness(ageSeconds: 7 * 86_400, kind: kind) == .stale)
            #expect(Freshness(ageSeconds: 7 * 86_400 + 1, kind: kind) == .hidden)
            #expect(Freshness(ageSeconds: 400 * 86_400, kind: kind) == .hidden)
        }
    }

    @Test func readingsFromTheFutureAreFresh() {
        #expect(Freshness(ageSeconds: -120, kind: .purpleAir) == .fresh)
        #expect(Freshness.fresh < .stale && Freshness.stale < .hidden)
    }
}
