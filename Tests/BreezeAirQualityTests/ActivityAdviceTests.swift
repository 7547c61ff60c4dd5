import Testing
import BreezeAirQuality

struct ActivityAdviceTests {
    @Test func goodDaysAreGreatForEveryone() {
        let advice = AQILevel.good.particleAdvice
        #expect(advice.sensitiveGroups == "It's a great day to be active outside.")
        #expect(advice.everyoneElse == advice.sensitiveGroups)
    }

    @Test func moderateAdviceIsForUnusuallySensitivePeopleOnly() {
        let advice = AQILevel.moderate.particleAdvice
        #expect(advice.sensitiveAudience == "Unusually sensitive people")
        #expect(advice.sensitiveGroups.hasPrefix("Consider reducing prolonged or heavy exertion."))
        #expect(advice.everyoneElse == "It's a good day to be active outside.")
    }

    @Test func unhealthyForSensitiveGroupsHasNoActionForEveryoneElseAndConditionNotes() {
        let advice = AQILevel.usg.particleAdvice
        #expect(advice.everyoneElse == nil)
        #expect(advice.notes.count == 2)
        #expect(advice.notes.contains { $0.contains("asthma action plans") })
        #expect(advice.notes.contains { $0.hasPrefix("If you have heart disease") })
        #expect(!advice.notes.joined().contains("heath"))
    }

    @Test func adviceTightensWithEachCategory() {
        let all = AQILevel.allCases.map(\.particleAdvice)
        // Every category says something different to sensitive groups, and from Moderate up to everyone else.
        #expect(Set(all.map(\.sensitiveGroups)).count == AQILevel.allCases.count)
        #expect(Set(all.dropFirst().compactMap(\.everyoneElse)).count == AQILevel.allCases.count - 2)
        #expect(AQILevel.hazardous.particleAdvice.everyoneElse == "Avoid all physical activity outdoors.")
        let veryUnhealthy = AQILevel.veryUnhealthy.particleAdvice, unhealthy = AQILevel.unhealthy.particleAdvice
        #expect(veryUnhealthy.sensitiveGroups.hasPrefix("Avoid all physical activity outdoors."))
        #expect(unhealthy.everyoneElse?.hasPrefix("Reduce prolonged or heavy exertion.") == true)
    }

    @Test func everyCategoryHasItsLevelOfConcernSentence() {
        #expect(AQILevel.good.levelOfConcern
                == "Air quality is considered satisfactory, and air pollution poses little or no risk.")
        #expect(AQILevel.veryUnhealthy.levelOfConcern
                == "Health alert: everyone may experience more serious health effects.")
        #expect(AQILevel.moderate.levelOfConcern.contains("acceptable; however, for some pollutants"))
        #expect(Set(AQILevel.allCases.map(\.levelOfConcern)).count == AQILevel.allCases.count)
        for level in AQILevel.allCases { #expect(level.levelOfConcern.hasSuffix(".")) }
    }
}
