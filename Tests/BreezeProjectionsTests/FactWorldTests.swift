import Testing
import BreezeCore
import BreezeProjections

/// The in-memory world (replay, explain, diff) must hold what the SQLite projection holds (screens).
struct FactWorldTests {
    @Test func aQuantityGivenTwiceInOneEventKeepsItsLastValueAsTheSQLiteProjectionDoes() throws {
        let e = Event(stream: .public, id: EventID(origin: Origin(replica: ReplicaID(rawValue: 7), epoch: 1), counter: 1),
                      hlc: HLC(physicalMillis: 1_000, logical: 0),
                      body: .reading(Reading(source: "purpleair", sensor: "1", time: 7200,
                                             values: [Measurement("pm25", 1), Measurement("humidity", 40), Measurement("pm25", 3)])))
        let rows = try FactWorld(events: [e, e]).readings(source: "purpleair", sensor: "1", from: 0, to: .max)
        #expect(rows.count == 1)
        #expect(rows.first?.values == ["pm25": 3, "humidity": 40])
    }
}
