import Testing
import Foundation
import Breeze
import BreezeTestSupport
@preconcurrency import Glibc

/// Issue 30, "states an app meets are errors": each state below is a model (an empty state) or a clear error at
/// once, on the real Troy registry.
struct AppStatesTests {
    /// Location permission denied (no place): nearby, pollen and climate are empty states, not errors.
    @Test func withoutAPlaceNearbyPollenAndClimateAreEmptyStates() throws {
        let dir = TempDir()
        let r = try Replica(path: dir.file("a.db"))
        defer { r.close() }
        _ = try r.importData(CanonicalSensorTests.troy, name: "troy.csv", format: "sensors-csv")
        try r.addFavourite("149970")
        let p = r.parameters()          // no `at`
        let nearby = try r.screen(NearbyScreen.self, p)
        #expect(!nearby.locationKnown && nearby.closest == nil && nearby.others.isEmpty)
        #expect(nearby.favourites.map(\.id) == ["purpleair:149970"] && nearby.favourites[0].distanceKm == nil)
        let pollen = try r.screen(PollenScreen.self, p)
        #expect(pollen.isEmpty && pollen.items.isEmpty && pollen.message?.contains("Location unknown") == true)
        #expect(pollen.scale.count == 6)
        let climate = try r.screen(ClimateScreen.self, p)
        #expect(climate.status == "no-station" && climate.data.isEmpty && climate.message?.contains("Location unknown") == true)
        // With a place, nearby knows it and gives distances.
        var here = p
        here.at = (42.71, -73.69)
        let located = try r.screen(NearbyScreen.self, here)
        #expect(located.locationKnown && located.favourites[0].distanceKm != nil)
    }

    /// A misspelt time zone is refused when the replica opens, naming it; a real one opens.
    @Test func aMisspeltTimeZoneIsRefusedAtOnce() throws {
        let dir = TempDir()
        var o = Replica.Options()
        o.timeZone = "America/New_Yrok"
        do {
            _ = try Replica(path: dir.file("a.db"), options: o)
            Issue.record("opened with a misspelt zone")
        } catch BreezeError.invalidArgument {
        } catch {
            Issue.record("wrong error: \(error)")
        }
        do {
            _ = try Replica(path: dir.file("a.db"), options: o)
        } catch {
            #expect(error.description.contains("America/New_Yrok") && error.description.contains("time-zone database"), "\(error)")
        }
        o.timeZone = "America/New_York"
        let r = try Replica(path: dir.file("a.db"), options: o)
        r.close()
    }

    /// A database where none can be made fails with the reason, not as a missing database: under a path whose
    /// directory is a file ("Not a directory", even for root), and in a directory this process may not write
    /// ("Permission denied"; not tried as root, who may write anywhere).
    @Test func aDatabaseThatCannotBeMadeSaysWhy() throws {
        let dir = TempDir()
        let file = dir.file("not-a-directory")
        #expect(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
        var cases = [(file + "/a.db", "Not a directory")]
        let locked = dir.file("locked")
        if getuid() != 0 {
            mkdir(locked, 0o500)
            cases.append((locked + "/a.db", "Permission denied"))
        }
        defer { chmod(locked, 0o700) }
        for (path, reason) in cases {
            do {
                _ = try Replica(path: path)
                Issue.record("created a database at \(path)")
            } catch BreezeError.missing {
                Issue.record("\(path): reported as missing")
            } catch {
                #expect(error.description.contains(reason) && error.description.contains(path), "\(error)")
            }
        }
    }

    /// A call of the replica inside its own `read { }` is a clear error (it would wait for itself), and a
    /// snapshot kept after its closure returned refuses to be used, saying why.
    @Test func reEntrantCallsAndEscapedSnapshotsAreClearErrors() throws {
        let dir = TempDir()
        let r = try Replica(path: dir.file("a.db"))
        defer { r.close() }
        _ = try r.importData(CanonicalSensorTests.troy, name: "troy.csv", format: "sensors-csv")
        do {
            _ = try r.read { _ in try r.state() }
            Issue.record("a call inside read { } went through")
        } catch BreezeError.misuse {
        } catch {
            Issue.record("wrong error: \(error)")
        }
        do {
            _ = try r.read { _ in try r.addFavourite("149970") }
            Issue.record("an edit inside read { } went through")
        } catch {
            #expect(error.description.contains("inside read { }"), "\(error)")
        }
        // The replica is still usable, and the edit refused above was not made.
        #expect(try r.state().favourites.elements.isEmpty)
        let escaped = try r.read { $0 }
        do {
            _ = try escaped.eventCount()
            Issue.record("an escaped snapshot was used")
        } catch let e as BreezeError {
            #expect(BreezeError.misuse ~= e && e.description.contains("ReplicaSnapshot"), "\(e)")
        }
        #expect(try r.read { try $0.eventCount(stream: .public) } > 0)
    }

    /// The horizon an interest brings is chosen where it is added: 14 days by default (stated), every reading
    /// with `.all`, `n` days with `.days(n)`; days out of range are refused naming them.
    @Test func anInterestStatesTheHorizonItBrings() throws {
        let dir = TempDir()
        let r = try Replica(path: dir.file("a.db"))
        defer { r.close() }
        #expect(try r.horizonDays() == nil)
        let near = Interest.near(latitude: 42.73, longitude: -73.69, km: 5)
        try r.addInterest(near)
        #expect(try r.horizonDays() == Replica.ReadingHorizon.standardDays && Replica.ReadingHorizon.standardDays == 14)
        try r.addInterest(near, keeping: .all)
        #expect(try r.horizonDays() == nil)
        try r.addInterest(.near(latitude: 42.0, longitude: -73.0, km: 2), keeping: .days(30))
        #expect(try r.horizonDays() == 30)
        do {
            try r.addInterest(.near(latitude: 41.0, longitude: -73.0, km: 2), keeping: .days(0))
            Issue.record("a horizon of 0 days was taken")
        } catch {
            #expect(BreezeError.invalidArgument ~= error && error.description.contains("0 days"), "\(error)")
        }
        #expect(try r.interests().count == 2 && r.horizonDays() == 30)
        // The command line says it where the interest is added too.
        let db = dir.file("cli.db")
        #expect(runBreeze(["init", "--db", db]).code == 0)
        let added = runBreeze(["--db", db, "interest", "add", "near", "42.73,-73.69", "5"])
        #expect(added.code == 0 && added.out.contains("keeps 14 days of readings"), "\(added.out)")
    }
}
