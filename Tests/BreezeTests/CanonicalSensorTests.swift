import Testing
import Breeze
import BreezeStore
import BreezeTestSupport

/// A favourite or watched sensor has one canonical id (`source:id`), unknown ids are refused, and a remove
/// takes a star off under every id it was given (issue 16, "seed semantics"), on the real Troy registry.
struct CanonicalSensorTests {
    /// The Troy sensors of the project's site list (PurpleAir), as `breeze import sensors-csv` reads them.
    static let troy = Array("""
        id,name,latitude,longitude,timezone
        149970,South Troy #2,42.7087,-73.6925,America/New_York
        87173,North Central Troy #1,42.7412,-73.6810,America/New_York

        """.utf8)

    @Test func bothFormsOfAnIdAreOneStar() throws {
        let dir = TempDir()
        let r = try Replica(path: dir.file("a.db"))
        defer { r.close() }
        _ = try r.importData(Self.troy, name: "troy.csv", format: "sensors-csv")
        let a = try r.addFavourite("149970"), b = try r.addFavourite("purpleair:149970")
        #expect(try a.body() == .favouriteAdd(sensor: "purpleair:149970") && b.body() == a.body())
        #expect(try r.state().favourites.elements == ["purpleair:149970"])
        try r.addWatch("87173")
        #expect(try r.state().watched.elements == ["purpleair:87173"])
        // The sheet's star and the removal agree whichever form the app passes.
        #expect(try r.screen(SheetScreen.self, r.parameters(sensor: "149970")).isFavourite)
        try r.removeFavourite("149970")
        #expect(try r.state().favourites.elements.isEmpty)
        #expect(try !r.screen(SheetScreen.self, r.parameters(sensor: "purpleair:149970")).isFavourite)
    }

    @Test func aStarUnderTheOldBareIdComesOffWithTheCanonicalOne() throws {
        let dir = TempDir()
        let path = dir.file("a.db")
        do {
            // An older version stored the id as typed: both forms are in the set.
            let log = try EventLog.create(at: path)
            _ = try log.append(.favouriteAdd(sensor: "149970"), to: .user("me"))
            log.close()
        }
        let r = try Replica(path: path)
        defer { r.close() }
        _ = try r.importData(Self.troy, name: "troy.csv", format: "sensors-csv")
        try r.addFavourite("purpleair:149970")
        #expect(try r.state().favourites.elements == ["149970", "purpleair:149970"])
        // The nearby screen and the widgets show it once.
        var p = r.parameters()
        p.now = 1_698_445_650
        #expect(try r.screen(WidgetsScreen.self, p).lockScreen.sensorId == "149970")
        // One remove takes off both (two events in one transaction).
        let before = try r.read { try $0.eventCount() }
        try r.removeFavourite("149970")
        #expect(try r.read { try $0.eventCount() } == before + 2)
        #expect(try r.state().favourites.elements.isEmpty)
    }

    @Test func unknownAndAmbiguousIdsAreRefusedAndNothingIsStored() throws {
        let dir = TempDir()
        let r = try Replica(path: dir.file("a.db"))
        defer { r.close() }
        _ = try r.importData(Self.troy, name: "troy.csv", format: "sensors-csv")
        let before = try r.read { try $0.eventCount() }
        do { try r.addFavourite("131075"); Issue.record("an unknown sensor was starred") } catch {
            #expect(BreezeError.invalidArgument ~= error && error.description.contains("sensor '131075' is not registered"), "\(error)")
        }
        do { try r.addWatch("airnow:149970"); Issue.record("a sensor of another source was watched") } catch {
            #expect(BreezeError.invalidArgument ~= error && error.description.contains("airnow:149970"))
        }
        // A monitor with the same id as a PurpleAir sensor: the bare id is ambiguous, `source:id` is not.
        _ = try r.importData(Array("id,name,latitude,longitude,source\n149970,Some Monitor,40.0,-75.0,airnow\n".utf8),
                             name: "monitor.csv", format: "sensors-csv")
        let registered = try r.read { try $0.eventCount() }
        do { try r.addFavourite("149970"); Issue.record("an ambiguous id was starred") } catch {
            #expect(BreezeError.invalidArgument ~= error && error.description.contains("airnow:149970, purpleair:149970"), "\(error)")
        }
        #expect(try r.read { try $0.eventCount() } == registered && registered == before + 1)
        #expect(try r.addFavourite("airnow:149970").body() == .favouriteAdd(sensor: "airnow:149970"))
        // An older bare star of an id two sources share comes off by that id.
        do {
            let log = try EventLog.open(at: dir.file("a.db"))
            _ = try log.append(.favouriteAdd(sensor: "149970"), to: .user("me"))
            log.close()
        }
        #expect(try r.state().favourites.elements.contains("149970"))
        try r.removeFavourite("149970")
        #expect(try !r.state().favourites.elements.contains("149970"))
        #expect(try r.state().favourites.elements == ["airnow:149970"])
        // Removing a sensor that is not a favourite says so.
        do { try r.removeFavourite("purpleair:87173"); Issue.record("removed nothing silently") } catch {
            #expect(BreezeError.notPresent ~= error)
        }
    }

    @Test func aReplicaWithNoCatalogueYetTakesTheIdAsGiven() throws {
        // A new phone before its first sync has no sensor registered: it cannot tell, so it stores the id.
        let dir = TempDir()
        let r = try Replica(path: dir.file("phone.db"))
        defer { r.close() }
        #expect(try r.addFavourite("131075").body() == .favouriteAdd(sensor: "131075"))
        try r.removeFavourite("131075")
        #expect(try r.state().favourites.elements.isEmpty)
    }
}
