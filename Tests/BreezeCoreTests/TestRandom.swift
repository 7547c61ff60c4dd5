@_exported import BreezeTestSupport
import BreezeCore


/// A simulated replica that writes user events the way the CLI does (removes carry observed dots).
struct SimReplica {
    let origin: Origin
    var counter: UInt64 = 0
    var clock = HybridClock()
    var state = UserState()
    var seen: [Event] = []
    var seenIDs: Set<EventID> = []
    let stream = StreamID.user("u")

    init(replica: UInt64) { origin = Origin(replica: ReplicaID(rawValue: replica), epoch: 1) }

    mutating func receive(_ e: Event, wall: UInt64) {
        clock.observe(e.hlc, wallMillis: wall)
        state.apply(e)
        if seenIDs.insert(e.id).inserted { seen.append(e) }
    }

    /// A random local edit; `wall` may repeat or go backwards between replicas (ties must still resolve).
    mutating func edit<R: RandomNumberGenerator>(_ rng: inout R, wall: UInt64) -> Event {
        let sensors = ["a", "b", "c", "d"]
        let body: EventBody
        switch Int.random(in: 0..<10, using: &rng) {
        case 0, 1: body = .favouriteAdd(sensor: sensors.randomElement(using: &rng)!)
        case 2:
            let s = sensors.randomElement(using: &rng)!
            body = .favouriteRemove(sensor: s, observed: state.favourites.liveDots(of: s))
        case 3: body = .watchAdd(sensor: sensors.randomElement(using: &rng)!)
        case 4:
            let s = sensors.randomElement(using: &rng)!
            body = .watchRemove(sensor: s, observed: state.watched.liveDots(of: s))
        case 5: body = .alertSet(AlertChange(category: AQICategory.allCases.randomElement(using: &rng),
                                             onClear: Bool.random(using: &rng) ? .notify : nil,
                                             enabled: Bool.random(using: &rng) ? Bool.random(using: &rng) : nil))
        case 6: body = .unitSet(Bool.random(using: &rng) ? .celsius : .fahrenheit)
        case 7: body = Bool.random(using: &rng) ? .sourceEnable(source: "purpleair") : .sourceCorrect(
            source: "purpleair", correction: ["epa-2021", "lrapa", "aqandu"].randomElement(using: &rng)!)
        // A test alert is keyed by its event id: its content follows from the id, as one event's content does
        // (states generated apart reuse ids).
        case 8: body = Bool.random(using: &rng) ? .testAlert(sensor: sensors[Int(counter % 4)])
            : .alertDelivered(key: ["purpleair:a|2023-10-27T21:00:00Z|fired", "test|x"].randomElement(using: &rng)!)
        default: body = .biomarkerTarget(BiomarkerTarget(readingType: "Blood Glucose", minReading: 0,
                                                         maxReading: Double(Int.random(in: 1...6, using: &rng)), icon: "drop"))
        }
        counter += 1
        let e = Event(stream: stream, id: EventID(origin: origin, counter: counter),
                      hlc: clock.tick(wallMillis: wall), body: body)
        receive(e, wall: wall)
        return e
    }
}
