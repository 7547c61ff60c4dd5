import Testing
import Foundation
import Breeze
import BreezeTestSupport
@preconcurrency import Glibc

/// Issue 30, "SwiftUI's own idioms": what an app keys, stores and iterates, on the real Troy registry. (That
/// `import Observation` and an `@Observable` view model build beside `import Breeze`, and that every list model
/// is `Identifiable`, is compiled in `Examples/Favourites/Sources/favourites/ViewModels.swift`.)
struct SwiftUIIdiomsTests {
    /// A user's state stored as JSON comes back equal, with the same hash, and merges as the original.
    @Test func aUserStateStoredAsJSONComesBackWhole() throws {
        let dir = TempDir()
        let r = try Replica(path: dir.file("a.db"))
        defer { r.close() }
        _ = try r.importData(CanonicalSensorTests.troy, name: "troy.csv", format: "sensors-csv")
        try r.addFavourite("149970")
        try r.addFavourite("87173")
        try r.removeFavourite("87173")
        try r.addWatch("87173")
        try r.setUnit(.fahrenheit)
        try r.setAlerts(category: .unhealthy, onClear: .notify, enabled: true)
        try r.setCorrection("none", for: "purpleair")
        try r.setBiomarkerTarget(BiomarkerTarget(readingType: "Blood Glucose", minReading: 0, maxReading: 4, icon: "drop"))
        let state = try r.state()
        let data = try JSONEncoder().encode(state)
        let back = try JSONDecoder().decode(UserState.self, from: data)
        #expect(back == state)
        #expect(back.stateHash == state.stateHash)
        #expect(back.favourites.elements == ["purpleair:149970"])
        #expect(back.unit?.value == .fahrenheit)
        // A value that is not a state is refused with the decoder's error, not taken as an empty state.
        #expect(throws: Swift.DecodingError.self) { try JSONDecoder().decode(UserState.self, from: Data("{\"favourites\":3}".utf8)) }
    }

    /// Parameters key `.task(id:)`: equal when every field is, different when any one (a tuple's member too) is.
    @Test func screenParametersAreEqualFieldByField() throws {
        var a = ScreenParameters(user: "ana", now: 1_754_200_000)
        a.at = (42.7, -73.69)
        a.sensor = "purpleair:149970"
        a.timeZone = "America/New_York"
        var b = a
        #expect(a == b && a.hashValue == b.hashValue)
        #expect(Set([a, b]).count == 1)
        b.at = (42.7, -73.7)
        #expect(a != b)
        b = a
        b.bbox = (42, -74, 43, -73)
        #expect(a != b)
        b = a
        b.metric = "pm25"
        #expect(a != b)
    }

    /// A sync status and an import summary encode as JSON objects (a stream-keyed lag map becomes an object
    /// keyed by the stream's text form) and decode equal.
    @Test func statusAndImportSummaryRoundTrip() throws {
        var peer = SyncStatus.Peer(address: "10.0.0.2:7070", isOutbound: true, connected: true)
        peer.lag = [.user("ana"): .init(peerLacks: 3, weLack: 0), .sensor(source: "purpleair", sensor: "149970"): .init(peerLacks: 0, weLack: 7)]
        let status = SyncStatus(running: true, listenAddress: nil, peers: [peer])
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(status)) as? [String: Any]
        let lag = ((json?["peers"] as? [[String: Any]])?.first?["lag"]) as? [String: Any]
        #expect(Set(lag?.keys.map { $0 } ?? []) == ["user:ana", StreamID.sensor(source: "purpleair", sensor: "149970").description])
        #expect(try JSONDecoder().decode(SyncStatus.self, from: JSONEncoder().encode(status)) == status)
        #expect(status.peers.map(\.id) == ["outbound 10.0.0.2:7070"])

        let dir = TempDir()
        let r = try Replica(path: dir.file("a.db"))
        defer { r.close() }
        let summary = try r.importData(CanonicalSensorTests.troy, name: "troy.csv", format: "sensors-csv")
        #expect(try JSONDecoder().decode(Replica.ImportSummary.self, from: JSONEncoder().encode(summary)) == summary)
    }

    /// An observation's loop throws a `BreezeError` (typed: caught without a cast), here for a date the
    /// screen refuses.
    @Test func anObservationsLoopThrowsABreezeError() async throws {
        let dir = TempDir()
        let r = try Replica(path: dir.file("a.db"))
        defer { r.close() }
        _ = try await r.importData(CanonicalSensorTests.troy, name: "troy.csv", format: "sensors-csv")
        var values = 0
        var caught: BreezeError?
        do {
            for try await _ in r.observe(BiomarkerScreen.self, r.parameters(date: "2025-02-30")) { values += 1 }
        } catch {
            caught = error          // `error` is a BreezeError: no `as?`
        }
        #expect(values == 0)
        #expect(caught?.description.contains("2025-02-30") == true, "\(String(describing: caught))")
    }

    /// The sheet of a sensor this replica does not hold yet (a deep link before the first sync) waits for it:
    /// no value and no error until the sensor arrives, then its sheet. `screen` itself still throws at once.
    @Test func anObservedSheetWaitsForItsSensorToArrive() throws {
        let dir = TempDir()
        let r = try Replica(path: dir.file("a.db"))
        defer { r.close() }
        #expect(throws: BreezeError.self) { try r.screen(SheetScreen.self, r.parameters(sensor: "149970")) }
        let values = Collected(r.observe(SheetScreen.self, r.parameters(sensor: "149970")))
        defer { values.cancel() }
        _ = try r.importData(Array("id,name,latitude,longitude,timezone\n87173,North Central Troy #1,42.7412,-73.6810,America/New_York\n".utf8),
                             name: "other.csv", format: "sensors-csv")
        try r.addFavourite("87173")
        usleep(300_000)
        #expect(values.all.isEmpty && values.failure == nil, "\(values.all.count) values, \(String(describing: values.failure))")
        _ = try r.importData(CanonicalSensorTests.troy, name: "troy.csv", format: "sensors-csv")
        #expect(values.wait(seconds: 30) { $0.name == "South Troy #2" })
        #expect(values.failure == nil)
    }

    /// The lists the designs iterate have ids that are unique within their list, on the real registry.
    @Test func listIdsAreUniqueOnTheRealRegistry() throws {
        let dir = TempDir()
        let r = try Replica(path: dir.file("a.db"))
        defer { r.close() }
        _ = try r.importData(CanonicalSensorTests.troy, name: "troy.csv", format: "sensors-csv")
        var p = r.parameters()
        p.at = (42.72, -73.69)
        try r.addFavourite("149970")
        try r.addFavourite("87173")
        let nearby = try r.screen(NearbyScreen.self, p)
        #expect(Set(nearby.favourites.map(\.id)) == ["purpleair:149970", "purpleair:87173"])
        let sheet = try r.screen(SheetScreen.self, r.parameters(sensor: "149970"))
        #expect(Set(sheet.legend.map(\.id)).count == sheet.legend.count && !sheet.legend.isEmpty)
    }
}
