import Testing
import BreezeCore
@testable import BreezeStore

/// `EventLog.userState` reads the user's stream in pages along the id index, not in arrival order: the
/// state must equal the fold of the same events in arrival order, across page boundaries and origins.
struct UserStatePagingTests {
    @Test func pagesAlongTheIdIndexGiveTheStateOfTheArrivalOrder() throws {
        let dir = TempDir()
        let a = try EventLog.create(at: dir.file("a.db"), options: testOptions(boot: "a"))
        let b = try EventLog.create(at: dir.file("b.db"), options: testOptions(boot: "b", wall: 1_700_000_000_500))
        let stream = StreamID.user("ana")
        var random = SeededRandom(seed: 8)
        // Two replicas write interleaved edits of every kind the state folds; b's arrive at a in three batches.
        var fromB: [Event] = []
        for i in 0..<60 {
            let key = "k\(random.next() % 7)"
            let body: EventBody
            switch i % 6 {
            case 0: body = .sourceCorrect(source: key, correction: "c\(i)")
            case 1: body = .favouriteAdd(sensor: key)
            case 2: body = .unitSet(i % 4 == 1 ? .fahrenheit : .celsius)
            case 3: body = .sourceDisable(source: key)
            case 4: body = .alertSet(AlertChange(category: .unhealthy, onClear: nil, enabled: i % 8 == 4))
            default: body = .watchAdd(sensor: key)
            }
            if random.next() % 2 == 0 { try a.append(body, to: stream) } else { fromB.append(try b.append(body, to: stream)) }
            if i % 20 == 19 { _ = try a.ingest(fromB); fromB = [] }
        }
        _ = try a.ingest(fromB)
        var arrival: [Event] = []
        try a.forEach(stream: stream) { arrival.append($0.event); return true }
        #expect(arrival.count == 60)
        let expected = UserState(events: arrival)
        for pageSize in [1, 7, 59, 60, 61, 2048] {
            #expect(try a.userState(user: "ana", pageSize: pageSize) == expected, "page size \(pageSize)")
        }
        #expect(try a.userState(user: "ana").stateHash == expected.stateHash)
        #expect(try a.userState(user: "nobody") == UserState())
    }
}
