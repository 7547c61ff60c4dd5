import Testing
import BreezeCore
import BreezeStore
import BreezeTestSupport
@testable import BreezeCLI

/// `breeze explain` on every kind of field, with edits from two replicas merged by ingest.
struct ExplainCLITests {
    /// Copies every event of `from` that `to` lacks (what a sync does).
    static func sync(_ from: String, _ to: String) throws {
        let a = try EventLog.open(at: from), b = try EventLog.open(at: to)
        defer { a.close(); b.close() }
        var events: [Event] = []
        try a.forEach { events.append($0.event); return true }
        _ = try b.ingest(events)
    }

    static func object(_ v: JSONValue?, _ key: String) -> JSONValue? {
        guard case .object(let p)? = v else { return nil }
        return p.first { $0.0 == key }?.1
    }

    static func string(_ v: JSONValue?, _ key: String) -> String? {
        if case .string(let s)? = object(v, key) { return s }
        return nil
    }

    static func array(_ v: JSONValue?, _ key: String) -> [JSONValue] {
        if case .array(let a)? = object(v, key) { return a }
        return []
    }

    /// The ids of the events of `user:me` in `db`, by type, in log order.
    static func ids(_ h: Harness, _ db: String, type: String) -> [String] {
        h.run(["--db", db, "log", "--json", "--stream", "user:me"]).out
            .filter { ReplayCLITests.field($0, "type") == type }.map { ReplayCLITests.field($0, "id") }
    }

    @Test func everyFieldNamesTheEventsThatDecidedItAndWhy() throws {
        let h = Harness()
        let a = h.db, b = h.dir + "/second.db"
        #expect(h.run(["init"]).code == 0 && h.run(["--db", b, "init"]).code == 0)
        // a adds the favourite; b sees it, removes it; meanwhile a adds it again (not seen by b's remove).
        #expect(h.run(["favourite", "add", "149970"]).code == 0)
        try Self.sync(a, b)
        #expect(h.run(["--db", b, "favourite", "remove", "149970"]).code == 0)
        #expect(h.run(["favourite", "add", "149970"]).code == 0)
        // Registers: a writes first, b later (b wins on the clock), except the correction, written last on a.
        #expect(h.run(["unit", "set", "fahrenheit"]).code == 0)
        #expect(h.run(["--db", b, "unit", "set", "celsius"]).code == 0)
        #expect(h.run(["alert", "set", "--category", "unhealthy", "--on-clear", "silent"]).code == 0)
        #expect(h.run(["--db", b, "alert", "set", "--enabled", "false"]).code == 0)
        #expect(h.run(["--db", b, "source", "disable", "airnow"]).code == 0)
        #expect(h.run(["--db", b, "source", "correct", "purpleair", "lrapa"]).code == 0)
        #expect(h.run(["source", "correct", "purpleair", "aqandu"]).code == 0)
        #expect(h.run(["watch", "add", "131075"]).code == 0)
        let log = try EventLog.open(at: b)
        try log.append(.biomarkerTarget(BiomarkerTarget(readingType: "Blood Glucose", minReading: 0, maxReading: 4, icon: "drop")), to: .user("me"))
        log.close()
        try Self.sync(a, b)
        try Self.sync(b, a)
        // Both replicas explain the same way.
        for db in [a, b] {
            let fav = h.run(["--db", db, "explain", "favourite", "149970", "--json"])
            #expect(fav.code == 0, "\(fav.err)")
            let f = Self.array(try JSONReader.parse(fav.out.joined()), "fields")[0]
            let adds = Self.ids(h, db, type: "favourite.add"), removes = Self.ids(h, db, type: "favourite.remove")
            #expect(adds.count == 2 && removes.count == 1)
            #expect(Self.object(f, "present") == .bool(true))
            let addList = Self.array(f, "adds")
            #expect(addList.count == 2)
            let first = addList.first { Self.string($0, "dot") == adds[0] }, second = addList.first { Self.string($0, "dot") == adds[1] }
            #expect(Self.object(first, "removedBy") == .array([.string(removes[0])]) && Self.object(first, "live") == .bool(false))
            #expect(Self.object(second, "removedBy") == .array([]) && Self.object(second, "live") == .bool(true))
            #expect(Self.object(Self.array(f, "removes").first, "observed") == .array([.string(adds[0])]))
            let text = h.run(["--db", db, "explain", "favourite", "149970"]).out
            #expect(text.contains("  why: present because add \(adds[1]) was not observed by remove \(removes[0])"), "\(text)")

            let unit = Self.array(try JSONReader.parse(h.run(["--db", db, "explain", "unit", "--json"]).out.joined()), "fields")[0]
            let units = Self.ids(h, db, type: "unit.set")
            let celsius = h.run(["--db", db, "log", "--json", "--stream", "user:me"]).out
                .first { $0.contains(#""unit":"celsius""#) }.map { ReplayCLITests.field($0, "id") }
            #expect(Self.string(unit, "value") == "celsius" && Self.string(Self.object(unit, "winner"), "id") == celsius)
            let loser = Self.array(unit, "losers").first
            #expect(Self.string(loser, "id") == units.first { $0 != celsius } && Self.string(loser, "lostOn") == "hlc")
            #expect(Self.object(loser, "sameReplicaAsWinner") == .bool(false))
            // b wrote the winner before a's write arrived there: concurrent; a cannot tell.
            #expect(Self.string(loser, "relation") == (db == b ? "concurrent" : "unknown"))

            let alert = h.run(["--db", db, "explain", "alert"]).out
            #expect(alert.contains("alert category (user me): unhealthy, 1 write(s)"), "\(alert)")
            #expect(alert.contains("alert on-clear (user me): silent, 1 write(s)"))
            #expect(alert.contains("alert enabled (user me): false, 1 write(s)"))
            #expect(h.run(["--db", db, "explain", "alert", "enabled"]).out.first == "alert enabled (user me): false, 1 write(s)")
            let source = h.run(["--db", db, "explain", "source", "purpleair"]).out
            #expect(source.contains("source purpleair enabled (user me): true (default: no event has set it)"))
            #expect(source.contains("source purpleair correction (user me): aqandu, 2 write(s)"), "\(source)")
            #expect(source.contains { $0.hasPrefix("  lost  lrapa: source.correct event ") })
            #expect(h.run(["--db", db, "explain", "source", "airnow", "enabled"]).out.first == "source airnow enabled (user me): false, 1 write(s)")
            let target = h.run(["--db", db, "explain", "target", "Blood", "Glucose"]).out
            #expect(target.first == "target Blood Glucose (user me): 0-4 readings/day (drop), 1 write(s)", "\(target)")
            let watch = h.run(["--db", db, "explain", "watch", "131075"]).out
            #expect(watch.first == "watch 131075 (user me): present" && watch.contains("          live: observed by no remove"))
            #expect(h.run(["--db", db, "explain", "watch", "999"]).out == ["watch 999 (user me): absent", "  no event has added 999"])
        }
        // a writes the unit again, having received b's celsius: that one is overwritten, a's first an earlier write.
        #expect(h.run(["unit", "set", "fahrenheit"]).code == 0)
        let again = Self.array(try JSONReader.parse(h.run(["explain", "unit", "--json"]).out.joined()), "fields")[0]
        #expect(Self.array(again, "losers").compactMap { Self.string($0, "relation") } == ["overwritten", "earlier-write"])
        #expect(h.run(["explain", "unit"]).out.contains { $0.hasSuffix("(another replica; overwritten: the winner was written here after this write arrived)") })
    }

    @Test func anAbsentFavouriteSaysWhichRemoveObservedEachAdd() throws {
        let h = Harness()
        #expect(h.run(["init"]).code == 0)
        #expect(h.run(["favourite", "add", "x"]).code == 0)
        #expect(h.run(["favourite", "remove", "x"]).code == 0)
        let add = Self.ids(h, h.db, type: "favourite.add")[0], rem = Self.ids(h, h.db, type: "favourite.remove")[0]
        let out = h.run(["explain", "favourite", "x"]).out
        #expect(out.first == "favourite x (user me): absent")
        #expect(out.contains("  why: absent because every add was observed by a remove: \(add) by \(rem)"), "\(out)")
        // Test alerts: a grow-only set; every request is listed.
        #expect(h.run(["alert", "test", "--sensor", "131075"]).code == 0)
        #expect(h.run(["alert", "test"]).code == 0)
        let tests = Self.ids(h, h.db, type: "alert.test")
        let t = h.run(["explain", "alert", "test"]).out
        #expect(t.first == "alert test (user me): 2 request(s)")
        #expect(t[1].hasPrefix("  request 131075: alert.test event \(tests[0]) ") && t[2].hasPrefix("  request (any sensor): alert.test event \(tests[1]) "), "\(t)")
        // Another user's stream is separate.
        #expect(h.run(["--user", "bo", "explain", "favourite", "x"]).out.first == "favourite x (user bo): absent")
    }

    @Test func badExplainArgumentsFailClearly() throws {
        let h = Harness()
        #expect(h.run(["init"]).code == 0)
        let cases: [([String], Int32, String)] = [
            (["explain"], 2, "missing FIELD"),
            (["explain", "colour"], 2, "unknown field 'colour'"),
            (["explain", "favourite"], 2, "missing SENSOR"),
            (["explain", "unit", "x"], 2, "unexpected argument 'x'"),
            (["explain", "alert", "volume"], 2, "alert field 'volume'"),
            (["explain", "source", "nope"], 1, "source 'nope' is unknown"),
            (["explain", "source", "purpleair", "colour"], 2, "source field 'colour'"),
            (["explain", "favourite", "has space"], 1, "sensor 'has space'"),
            (["--db", h.dir + "/missing.db", "explain", "unit"], 1, "no Breeze database here"),
        ]
        for (args, code, text) in cases {
            let r = h.run(args)
            #expect(r.code == code && r.err.joined(separator: "\n").contains(text), "\(args): \(r.code) \(r.err)")
        }
    }
}
