import Testing
import Breeze
import BreezeStore
import BreezeTestSupport
@preconcurrency import Glibc

/// The `Replica` API: opening, every edit with its rules, the user state, screens, imports and errors.
struct ReplicaTests {
    @Test func aNewReplicaIsCreatedAndAMissingOneIsRefusedWhenCreationIsOff() throws {
        let dir = TempDir()
        var o = Replica.Options()
        o.create = false
        #expect(throws: BreezeError.self) { try Replica(path: dir.file("none.db"), options: o) }
        do { _ = try Replica(path: dir.file("none.db"), options: o) } catch {
            #expect(BreezeError.missing ~= error && error.description.contains("none.db"))
        }
        #expect(access(dir.file("none.db"), F_OK) != 0, "nothing was created")
        let r = try Replica(path: dir.file("new.db"))
        #expect(try r.state() == UserState())
        let id = r.id
        r.close()
        let again = try Replica(path: dir.file("new.db"), options: o)
        #expect(again.id == id, "the identity is kept")
    }

    @Test func aForeignFileIsRefusedUntouchedAndTheStoreErrorIsKept() throws {
        let dir = TempDir()
        let path = dir.file("notes.txt")
        let bytes = Array("these are not the droids you are looking for\n".utf8) + [UInt8](repeating: 7, count: 5000)
        writeFileBytes(path, bytes)
        do { _ = try Replica(path: path); Issue.record("opened a foreign file") } catch {
            #expect(BreezeError.notBreeze ~= error, "\(error)")
            #expect(error.underlying is StoreError, "the cause is kept")
        }
        #expect(readFileBytes(path) == bytes)
    }

    @Test func everyEditOfTheAppChangesTheMergedState() throws {
        let dir = TempDir()
        let r = try Replica(path: dir.file("a.db"), options: .init(user: "ana"))
        try r.addFavourite("131075")
        try r.addFavourite("purpleair:149970")
        try r.addWatch("131075")
        try r.setAlerts(category: .unhealthy, onClear: .silent)
        try r.setAlerts(enabled: false)
        try r.requestTestAlert(sensor: "131075")
        try r.setUnit(.fahrenheit)
        try r.setSource("airnow", enabled: false)
        try r.setCorrection("lrapa", for: "purpleair")
        let target = BiomarkerTarget(readingType: "Blood Glucose", minReading: 0, maxReading: 3, icon: "drop")
        try r.setBiomarkerTarget(target)
        let reading = try r.logBiomarkerReading(BiomarkerReading(readingType: "Blood Glucose", time: 1_700_000_000, value: 104, unit: "mg/dL"))
        #expect(reading.stream == .health("ana"), "a reading goes to the user's health stream")
        var s = try r.state()
        #expect(s.favourites.elements == ["131075", "purpleair:149970"] && s.watched.elements == ["131075"])
        #expect(s.effectiveAlertCategory == .unhealthy && s.effectiveOnClear == .silent && !s.effectiveAlertsEnabled)
        #expect(s.testAlerts.count == 1 && s.effectiveUnit == .fahrenheit)
        #expect(!s.isEnabled(source: "airnow") && s.isEnabled(source: "purpleair") && s.correction(for: "purpleair") == "lrapa")
        #expect(s.biomarkerTargets["Blood Glucose"] == target)
        try r.removeFavourite("131075")
        try r.removeWatch("131075")
        try r.setSource("airnow", enabled: true)
        s = try r.state()
        #expect(s.favourites.elements == ["purpleair:149970"] && s.watched.elements.isEmpty && s.isEnabled(source: "airnow"))
        // Another user's state is separate, and the default user is the one in the options.
        try r.addFavourite("87173", user: "ben")
        #expect(try r.state(user: "ben").favourites.elements == ["87173"] && !(try r.state()).favourites.contains("87173"))
    }

    @Test func editsThatBreakARuleAreRefusedWithTheirInputNamedAndNothingIsStored() throws {
        let dir = TempDir()
        let r = try Replica(path: dir.file("a.db"))
        try r.addFavourite("131075")
        let before = try r.versionVectors()
        let cases: [(String, BreezeError, String, () throws -> Void)] = [
            ("remove a sensor that is not a favourite", .notPresent, "'87173' is not a favourite", { _ = try r.removeFavourite("87173") }),
            ("remove an unwatched sensor", .notPresent, "not a watched sensor", { _ = try r.removeWatch("131075") }),
            ("a sensor id with a space", .invalidArgument, "sensor 'a b'", { _ = try r.addFavourite("a b") }),
            ("an empty sensor id", .invalidArgument, "sensor ''", { _ = try r.addWatch("") }),
            ("a test alert for a bad id", .invalidArgument, "sensor 'x\ny'", { _ = try r.requestTestAlert(sensor: "x\ny") }),
            ("an empty alert change", .invalidArgument, "nothing to set", { _ = try r.setAlerts() }),
            ("an unknown source", .invalidArgument, "source 'myspace' is unknown", { _ = try r.setSource("myspace", enabled: true) }),
            ("a correction the source lacks", .invalidArgument, "'lrapa' is not available for airnow", { _ = try r.setCorrection("lrapa", for: "airnow") }),
            ("a bad user", .invalidArgument, "user 'no way'", { _ = try r.setUnit(.celsius, user: "no way") }),
            ("a target upside down", .invalidArgument, "0 <= minimum <= maximum",
             { _ = try r.setBiomarkerTarget(BiomarkerTarget(readingType: "Blood Glucose", minReading: 5, maxReading: 3, icon: "drop")) }),
            ("a target that is not finite", .invalidArgument, "finite",
             { _ = try r.setBiomarkerTarget(BiomarkerTarget(readingType: "Blood Glucose", minReading: 0, maxReading: .infinity, icon: "drop")) }),
            ("a reading that is not a number", .invalidArgument, "not a finite number",
             { _ = try r.logBiomarkerReading(BiomarkerReading(readingType: "Blood Glucose", time: 1, value: .nan, unit: "mg/dL")) }),
            ("a reading far beyond any measurement", .invalidArgument, "outside 0...1000",
             { _ = try r.logBiomarkerReading(BiomarkerReading(readingType: "Blood Glucose", time: 1, value: 1e300, unit: "mg/dL")) }),
            ("a reading without a unit", .invalidArgument, "unit ''",
             { _ = try r.logBiomarkerReading(BiomarkerReading(readingType: "Blood Glucose", time: 1, value: 90, unit: "")) }),
        ]
        for (what, kind, message, edit) in cases {
            do { try edit(); Issue.record("\(what): accepted") } catch {
                #expect(kind ~= error, "\(what): \(error)")
                #expect("\(error)".contains(message), "\(what): \(error)")
            }
        }
        #expect(try r.versionVectors() == before, "nothing was stored")
        #expect(throws: BreezeError.self) { try Replica(path: dir.file("b.db"), options: .init(user: "")) }
    }

    @Test func aRemoveCarriesTheAddsItSawSoAConcurrentAddElsewhereWins() throws {
        let dir = TempDir()
        let phone = try Replica(path: dir.file("phone.db")), tablet = try Replica(path: dir.file("tablet.db"))
        try phone.addFavourite("131075")
        try copyEvents(from: dir.file("phone.db"), to: dir.file("tablet.db"))
        // Concurrently: the tablet adds the sensor again while the phone, which has not seen that add, removes it.
        try tablet.addFavourite("131075")
        try phone.removeFavourite("131075")
        try copyEvents(from: dir.file("phone.db"), to: dir.file("tablet.db"))
        try copyEvents(from: dir.file("tablet.db"), to: dir.file("phone.db"))
        #expect(try phone.state() == tablet.state())
        #expect(try phone.state().favourites.elements == ["131075"], "the add the remove did not observe survives")
        // A remove after seeing both adds removes it everywhere.
        try tablet.removeFavourite("131075")
        try copyEvents(from: dir.file("tablet.db"), to: dir.file("phone.db"))
        #expect(try phone.state().favourites.elements.isEmpty)
    }

    @Test func screensComeFromTheProjectionAndTheUsersState() throws {
        let dir = TempDir()
        let r = try Replica(path: dir.file("a.db"))
        let summary = try r.importFile(Fixtures.troySensors, format: "sensors-csv")
        #expect(summary.storedFacts == 11 && summary.rowsRead == 11 && summary.skipped.isEmpty)
        let p = r.parameters(now: 1_698_400_000, sensor: "149970")
        #expect(try r.screen(SheetScreen.self, p).isFavourite == false)
        try r.addFavourite("149970")
        let sheet = try r.screen(SheetScreen.self, p)
        #expect(sheet.isFavourite && sheet.name == "South Troy #2" && sheet.source == "purpleair")
        do { _ = try r.screen(SheetScreen.self, r.parameters(sensor: "nope")); Issue.record("built a sheet of no sensor") } catch {
            #expect(BreezeError.screen ~= error && error.description.contains("screen sheet"), "\(error)")
        }
        #expect(try r.screen(SourcesScreen.self, p).sources.count == DataSource.catalog.count)
    }

    @Test func anImportIsRefusedWholeWhenTheFileIsNotInItsFormat() throws {
        let dir = TempDir()
        let r = try Replica(path: dir.file("a.db"))
        do { _ = try r.importFile(Fixtures.troySensors, format: "google-pollen"); Issue.record("imported CSV as pollen JSON") } catch {
            #expect(BreezeError.importRefused ~= error && error.description.contains("ajl_sensors.csv"), "\(error)")
        }
        do { _ = try r.importFile(dir.file("missing.csv"), format: "sensors-csv"); Issue.record("imported a missing file") } catch {
            #expect(BreezeError.importRefused ~= error && error.description.contains("cannot read"), "\(error)")
        }
        do { _ = try r.importFile(Fixtures.troySensors, format: "nonsense"); Issue.record("an unknown format") } catch {
            #expect(BreezeError.invalidArgument ~= error && error.description.contains("unknown format 'nonsense'"), "\(error)")
        }
        #expect(try r.read { try $0.eventCount() } == 0)
        let again = try r.importFile(Fixtures.troySensors, format: "sensors-csv")
        let twice = try r.importFile(Fixtures.troySensors, format: "sensors-csv")
        #expect(again.storedFacts == 11 && twice.storedFacts == 0 && twice.duplicateFacts == 11)
    }

    @Test func aClosedReplicaRefusesEveryCall() throws {
        let dir = TempDir()
        let r = try Replica(path: dir.file("a.db"))
        r.close()
        r.close()
        do { _ = try r.addFavourite("131075"); Issue.record("wrote after close") } catch { #expect(BreezeError.closed ~= error) }
        do { _ = try r.state(); Issue.record("read after close") } catch { #expect(BreezeError.closed ~= error) }
    }

    @Test func callsFromManyTasksAtOnceAreSerialisedAndNoneIsLost() async throws {
        let dir = TempDir()
        let r = try Replica(path: dir.file("a.db"))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for t in 0..<8 {
                group.addTask {
                    for i in 0..<25 { try r.addFavourite("s\(t)-\(i)") }
                    _ = try r.state()
                }
            }
            try await group.waitForAll()
        }
        #expect(try await r.state().favourites.elements.count == 200)
    }
}

/// Copies every event of `source` that `target` lacks, as a sync session would (remote ingest).
func copyEvents(from source: String, to target: String) throws {
    let a = try EventLog.open(at: source), b = try EventLog.open(at: target)
    defer { a.close(); b.close() }
    for stream in try a.streams() {
        let have = try b.versionVector(of: stream)
        var after: Int64 = 0
        while true {
            let page = try a.events(in: stream, notIn: have, afterSeq: after, limit: 500)
            _ = try b.ingest(page.events)
            guard let next = page.nextSeq else { break }
            after = next
        }
    }
}
