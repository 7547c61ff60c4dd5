import Testing
import BreezeTestSupport
import Foundation
@preconcurrency import Glibc

/// The inspector's page in a real headless Chromium: each screen's drawing holds the values of its read model
/// (the model as `breeze replay` computes it from the same options), the scrubber replays every screen, a CLI
/// edit reaches the open page within a second, explain is one click, the timeline filters and decodes, and two
/// databases are compared. One browser at a time (`.serialized`): each is a few processes on a 2-core machine.
@Suite(.serialized, .enabled(if: Chromium.installed, "needs Debian's chromium (tools/test.sh installs it)"))
struct InspectorPageTests {
    /// `breeze replay --until SEQ --screen NAME OPTIONS --json`, parsed.
    static func replay(_ db: String, until: Int, _ screen: String, _ options: [String: String]) -> [String: Any] {
        var args = ["--db", db, "--user", options["user"] ?? "ana", "replay", "--until", String(until), "--screen", screen, "--json"]
        for (k, v) in options.sorted(by: { $0.key < $1.key }) where k != "user" { args += ["--\(k)", v] }
        return json(InspectFixture.cli(args)) as? [String: Any] ?? [:]
    }

    /// The options the page shows a screen was built with.
    static func options(_ page: Chromium, _ screen: String) throws -> [String: String] {
        json(try page.evaluate("document.querySelector('[data-screen=\(screen)]').dataset.options")) as? [String: String] ?? [:]
    }

    static func drawn(_ page: Chromium, _ selector: String, _ fields: [String]) throws -> [[String: String]] {
        let f = fields.map { "'\($0)': (e.getAttribute('\($0)') || '')" }.joined(separator: ", ")
        return try page.evaluateJSON("[...document.querySelectorAll(\"\(selector)\")].map(e => ({\(f)}))") as? [[String: String]] ?? []
    }

    static func number(_ x: Any?) -> String {
        guard let d = x as? Double ?? (x as? Int).map(Double.init) ?? (x as? NSNumber)?.doubleValue else { return "" }
        return d == d.rounded() ? String(Int(d)) : String(d)
    }

    /// The 24 hourly bars as drawn, against the detail model: one bar per hour, its colour the hour's EPA
    /// colour, its height the AQI over the chart's top (`max(100, highest rounded up to 50)`) times the height.
    static func checkBars(_ page: Chromium, _ model: [String: Any], _ context: String) throws {
        let hourly = model["hourly"] as? [[String: Any]] ?? []
        let bars = try drawn(page, "[data-screen=detail] rect.bar", ["data-hour", "data-aqi", "fill", "height"])
        let svg = try drawn(page, "[data-screen=detail] svg.hourly", ["data-top", "data-height"]).first ?? [:]
        #expect(bars.count == 24 && hourly.count == 24, "\(context)")
        let highest = hourly.compactMap { $0["aqi"] as? Int }.max() ?? 0
        let top = max(100, (highest + 49) / 50 * 50)
        let H = Double(svg["data-height"] ?? "") ?? 0
        #expect(svg["data-top"] == String(top), "\(context)")
        for (bar, hour) in zip(bars, hourly) {
            #expect(bar["data-hour"] == hour["hour"] as? String, "\(context)")
            if let aqi = hour["aqi"] as? Int {
                #expect(bar["data-aqi"] == String(aqi) && bar["fill"] == hour["colour"] as? String, "\(context) \(bar) \(hour)")
                let expected = (Double(aqi) / Double(top) * H * 100).rounded() / 100
                #expect(abs((Double(bar["height"] ?? "") ?? -1) - expected) < 0.011, "\(context) \(bar) expected height \(expected)")
            } else {
                #expect(bar["data-aqi"] == "" && hour["missing"] as? Bool == true, "\(context)")
            }
        }
    }

    @Test func everyScreenIsDrawnWithTheValuesOfItsReadModel() throws {
        let dir = TempDir()
        let db = InspectFixture.database(dir)
        let p = InspectProcess(db: db)
        let page = try Chromium()
        try page.open(p.page())
        let until = Int(try page.evaluate("document.documentElement.dataset.until")) ?? -1
        #expect(until == InspectFixture.lastSeq(db))
        func model(_ s: String) throws -> [String: Any] { Self.replay(db, until: until, s, try Self.options(page, s)) }

        try Self.checkBars(page, try model("detail"), "detail at the end")

        let map = try model("map")
        let pins = try Self.drawn(page, "[data-screen=map] g.pin", ["data-sensor", "data-label", "data-colour"])
        let modelPins = map["pins"] as? [[String: Any]] ?? []
        #expect(pins.count == modelPins.count && pins.count == 2)
        for (d, m) in zip(pins, modelPins) {
            #expect(d["data-sensor"] == "\(m["source"]!):\(m["sensorId"]!)" && d["data-label"] == m["label"] as? String
                    && d["data-colour"] == m["colour"] as? String, "\(d) \(m)")
        }
        let circles = try Self.drawn(page, "[data-screen=map] g.pin circle[r='16']", ["fill"])
        #expect(circles.map { $0["fill"] } == modelPins.map { $0["colour"] as? String })

        let sheet = try model("sheet"), badge = sheet["badge"] as? [String: Any] ?? [:]
        let round = try Self.drawn(page, "[data-screen=sheet] svg.round-badge", ["data-aqi", "data-colour"]).first ?? [:]
        #expect(round["data-aqi"] == Self.number(badge["aqi"]) && round["data-colour"] == badge["colour"] as? String)
        #expect(try page.evaluate("document.querySelector('[data-screen=sheet] svg.round-badge circle').getAttribute('fill')") == badge["colour"] as? String)
        #expect(try page.evaluate("document.querySelector('[data-screen=sheet] .star').dataset.favourite") == "true" && sheet["isFavourite"] as? Bool == true)
        let current = (sheet["legend"] as? [[String: Any]] ?? []).first { $0["isCurrent"] as? Bool == true }?["category"] as? String
        #expect(try page.evaluate("document.querySelector('[data-screen=sheet] [data-current=true]').dataset.category") == current)

        let history = try model("history")
        let days = try Self.drawn(page, "[data-screen=history] rect.day[data-week=this]", ["data-date", "data-aqi", "fill"])
        let week = history["thisWeek"] as? [[String: Any]] ?? []
        #expect(days.count == 7 && week.count == 7)
        for (d, m) in zip(days, week) {
            #expect(d["data-date"] == m["date"] as? String && d["data-aqi"] == Self.number(m["aqi"]), "\(d) \(m)")
            if let c = m["colour"] as? String { #expect(d["fill"] == c) }
        }
        let today = (history["today"] as? [[String: Any]] ?? []).filter { $0["pm25"] != nil }
        let points = try Self.drawn(page, "[data-screen=history] circle.pt", ["data-hour", "data-pm25"])
        #expect(points.map { $0["data-pm25"] } == today.map { Self.number($0["pm25"]) } && !points.isEmpty)

        let nearby = try model("nearby")
        let rows = try Self.drawn(page, "[data-screen=nearby] .row", ["data-kind", "data-sensor", "data-aqi"])
        let expected = [("closest", nearby["closest"] as? [String: Any])].compactMap { k, v in v.map { (k, $0) } }
            + (nearby["others"] as? [[String: Any]] ?? []).map { ("other", $0) } + (nearby["favourites"] as? [[String: Any]] ?? []).map { ("favourite", $0) }
        #expect(rows.map { "\($0["data-kind"]!) \($0["data-sensor"]!) \($0["data-aqi"]!)" }
                == expected.map { "\($0.0) \($0.1["source"]!):\($0.1["sensorId"]!) \(Self.number($0.1["aqi"]))" })

        let alerts = try model("alerts")
        #expect(try page.evaluate("document.querySelector('[data-screen=alerts] [data-selected=true]').dataset.category")
                == (alerts["threshold"] as? [String: Any])?["name"] as? String)
        #expect(try Self.drawn(page, "[data-screen=alerts] [data-watched]", ["data-watched"]).map { $0["data-watched"] }
                == (alerts["watched"] as? [[String: Any]] ?? []).map { "\($0["source"]!):\($0["sensorId"]!)" })

        let widgets = try model("widgets")
        #expect(try page.evaluate("document.querySelector('[data-screen=widgets] [data-widget=tile]').dataset.background")
                == (widgets["tile"] as? [String: Any])?["background"] as? String)
        #expect(try page.evaluate("document.querySelector('[data-screen=widgets] svg.lock').dataset.aqi")
                == Self.number((widgets["lockScreen"] as? [String: Any])?["aqi"]))

        let sources = try model("sources")
        #expect(try Self.drawn(page, "[data-screen=sources] [data-source]", ["data-source", "data-enabled"]).map { "\($0["data-source"]!) \($0["data-enabled"]!)" }
                == (sources["sources"] as? [[String: Any]] ?? []).map { "\($0["id"]!) \($0["enabled"] as? Bool == true)" })

        let pollen = try model("pollen")
        let cards = try Self.drawn(page, "[data-screen=pollen] [data-pollen]", ["data-pollen", "data-value", "data-colour"])
        let items = pollen["items"] as? [[String: Any]] ?? []
        #expect(cards.count == items.count && items.count > 4)
        for (c, i) in zip(cards, items) {
            #expect(c["data-pollen"] == i["id"] as? String && c["data-value"] == Self.number(i["value"]) && c["data-colour"] == (i["colour"] as? String ?? ""), "\(c) \(i)")
        }
        let widths = try page.evaluateJSON("[...document.querySelectorAll('[data-screen=pollen] [data-pollen] .bar-fg')].map(e => e.style.width)") as? [String] ?? []
        #expect(widths == items.map { i in "\(Self.number(Double(i["value"] as? Int ?? 0) / 5 * 100))%" })
        #expect(try page.evaluate("document.querySelector('[data-screen=pollen] [data-active=true]').dataset.level") == Self.number(pollen["activeLevel"]))

        let climate = try model("climate")
        let bars = try Self.drawn(page, "[data-screen=climate] rect.year", ["data-year", "data-temperature", "data-class", "fill"])
        let data = climate["data"] as? [[String: Any]] ?? []
        let colours = ["warming-strong": "#FF3B30", "warming": "#FF9500", "neutral": "#8E8E93", "cooling": "#007AFF"]
        #expect(bars.count == data.count && data.count > 5)
        for (b, d) in zip(bars, data) {
            #expect(b["data-year"] == Self.number(d["year"]) && b["data-temperature"] == Self.number(d["displayTemperature"])
                    && b["data-class"] == d["barClass"] as? String && b["fill"] == colours[d["barClass"] as? String ?? ""], "\(b) \(d)")
        }

        let biomarker = try model("biomarker")
        let gauges = try Self.drawn(page, "[data-screen=biomarker] svg.gauge", ["data-type", "data-count", "data-max", "data-progress"])
        #expect(gauges.map { "\($0["data-type"]!) \($0["data-count"]!)/\($0["data-max"]!) \($0["data-progress"]!)" }
                == (biomarker["biomarkers"] as? [[String: Any]] ?? []).map { "\($0["readingType"]!) \(Self.number($0["readingCount"]))/\(Self.number($0["maxReading"])) \(Self.number($0["progress"]))" })
        #expect(!gauges.isEmpty)
    }

    @Test func movingTheScrubberReplaysEveryScreenAsReplaySays() throws {
        let dir = TempDir()
        let db = InspectFixture.database(dir)
        let favourite = InspectFixture.lastSeq(db, type: "favourite.add")
        let p = InspectProcess(db: db)
        let page = try Chromium()
        try page.open(p.page())
        // Before the favourite, halfway through the readings, and at it.
        let middle = InspectFixture.lastSeq(db, type: "reading.block") / 2
        for cut in [favourite - 1, max(2, middle), favourite] {
            try page.evaluate("(() => { const s = document.getElementById('scrub'); s.value = \(cut); s.dispatchEvent(new Event('input')); return ''; })()")
            #expect(try page.waitFor("document.documentElement.dataset.until == '\(cut)'", seconds: 10), "cut \(cut)")
            let sheet = Self.replay(db, until: cut, "sheet", try Self.options(page, "sheet"))
            #expect(try page.evaluate("String(document.querySelector('[data-screen=sheet] .star').dataset.favourite)") == String(sheet["isFavourite"] as? Bool ?? false),
                    "cut \(cut)")
            try Self.checkBars(page, Self.replay(db, until: cut, "detail", try Self.options(page, "detail")), "detail at seq \(cut)")
            let map = Self.replay(db, until: cut, "map", try Self.options(page, "map"))
            #expect(try Self.drawn(page, "[data-screen=map] g.pin", ["data-label"]).map { $0["data-label"] }
                    == (map["pins"] as? [[String: Any]] ?? []).map { $0["label"] as? String })
            // The log's rows after the cut are marked as not replayed.
            let after = try page.evaluateJSON("[...document.querySelectorAll('.tl .ev.after')].map(e => Number(e.dataset.seq))") as? [Int] ?? []
            #expect(after.allSatisfy { $0 > cut })
        }
        let sheetBefore = Self.replay(db, until: favourite - 1, "sheet", try Self.options(page, "sheet"))
        #expect(sheetBefore["isFavourite"] as? Bool == false)
        // Scrubbing changed what is drawn: at seq 2500 the import had not reached the last hours.
        try page.evaluate("document.getElementById('follow').click()")
        #expect(try page.waitFor("document.documentElement.dataset.until == '\(InspectFixture.lastSeq(db))'", seconds: 10))
    }

    @Test func aStillPageOpenedAtASeqShowsThatPoint() throws {
        let dir = TempDir()
        let db = InspectFixture.database(dir)
        let favourite = InspectFixture.lastSeq(db, type: "favourite.add")
        let p = InspectProcess(db: db)
        let dom = Chromium.dumpDOM(p.page("until=\(favourite - 1)&live=0"))
        #expect(dom.contains("data-until=\"\(favourite - 1)\""), "\(dom.prefix(400))")
        #expect(dom.contains("data-favourite=\"false\"") && !dom.contains("data-favourite=\"true\""))
        let end = Chromium.dumpDOM(p.page("live=0"))
        #expect(end.contains("data-favourite=\"true\""))
    }

    @Test func anEditMadeWithTheCLIAppearsOnTheOpenPageWithinOneSecond() throws {
        let dir = TempDir()
        let db = InspectFixture.database(dir)
        let p = InspectProcess(db: db)
        let page = try Chromium()
        try page.open(p.page())
        #expect(try page.waitFor("document.documentElement.dataset.stream === 'open'", seconds: 10))
        #expect(try page.evaluate("document.querySelector('[data-screen=sheet] .star').dataset.favourite") == "true")
        var worst = 0.0
        for (verb, shown) in [("remove", "false"), ("add", "true"), ("remove", "false")] {
            InspectFixture.cli(["--db", db, "--user", "ana", "favourite", verb, "149970"])
            let committed = page.now()
            let seen = try page.waitFor("document.querySelector('[data-screen=sheet] .star').dataset.favourite === '\(shown)'", seconds: 30)
            let elapsed = page.now() - committed
            worst = max(worst, elapsed)
            #expect(seen, "favourite \(verb) took \(elapsed) s to reach the page")
        }
        print("INSPECT live edit to page: worst \(Int(worst * 1000)) ms")
        #expect(try page.waitFor("document.documentElement.dataset.lastSeq === '\(InspectFixture.lastSeq(db))'", seconds: 2))
    }

    @Test func explainOfASettingIsOneClick() throws {
        let dir = TempDir()
        let db = InspectFixture.database(dir)
        InspectFixture.cli(["--db", db, "--user", "ana", "alert", "set", "--category", "unhealthy"])
        let p = InspectProcess(db: db)
        let page = try Chromium()
        try page.open(p.page())
        for (field, args) in [("alert category", ["alert", "category"]), ("favourite 149970", ["favourite", "149970"])] {
            try page.evaluate("document.querySelector('[data-explain=\"\(field)\"]').click()")
            #expect(try page.waitFor("document.getElementById('explain').dataset.field === '\(field)'", seconds: 5))
            let shown = try page.evaluate("document.getElementById('explain').textContent")
            let cli = InspectFixture.cli(["--db", db, "--user", "ana", "explain"] + args)
            #expect(shown == cli, "\(shown)\n---\n\(cli)")
        }
        #expect(try page.evaluate("document.getElementById('explain').textContent").contains("present because add"))
    }

    @Test func theTimelineFiltersDecodesAndShowsTwoDatabasesWithTheFirstDivergence() throws {
        let dir = TempDir()
        let db = InspectFixture.database(dir)
        // B: a copy of A, then an edit A does not have.
        _ = system("cp '\(db)' '\(dir.file("b.db"))'")
        let b = dir.file("b.db")
        InspectFixture.cli(["--db", b, "--user", "ana", "unit", "set", "fahrenheit"])
        let divergence = InspectFixture.lastSeq(b)
        let p = InspectProcess(db: db, ["--compare", b])
        let page = try Chromium()
        try page.open(p.page())
        #expect(try page.waitFor("document.querySelector('[data-first=b]') !== null", seconds: 10))
        #expect(try page.evaluate("document.querySelector('[data-first=b]').dataset.seq") == String(divergence))
        #expect(try page.evaluate("document.querySelector('[data-first=a]').dataset.seq") == "")
        #expect(try page.evaluate("document.querySelector('.tl[data-db=b] .ev.first-divergence').dataset.seq") == String(divergence))
        #expect(try page.evaluate("document.querySelectorAll('.tl[data-db=a] .ev.first-divergence').length") == "0")
        #expect(try page.evaluate("document.querySelector('[data-stream=\"user:ana\"]').textContent").contains("DIFFERENT"))
        let diff = runProgram(InspectFixture.breeze, ["diff", db, b, "--json"])
        #expect(diff.code == 1 && diff.out.contains("\"onlyB\":{\"count\":1"))

        // Filter A's log by type: exactly what `breeze log --type` lists; a click decodes the event.
        try page.evaluate("(() => { const s = document.getElementById('f-type'); s.value = 'watch.add'; s.dispatchEvent(new Event('change')); return ''; })()")
        #expect(try page.waitFor("[...document.querySelectorAll('.tl[data-db=a] .ev')].every(e => e.dataset.type === 'watch.add')", seconds: 10))
        let rows = try page.evaluateJSON("[...document.querySelectorAll('.tl[data-db=a] .ev')].map(e => Number(e.dataset.seq))") as? [Int] ?? []
        let cli = InspectFixture.cli(["--db", db, "log", "--type", "watch.add", "--json"]).split(separator: "\n").compactMap { (json(String($0)) as? [String: Any])?["seq"] as? Int }
        #expect(rows == cli && rows.count == 1)
        try page.evaluate("document.querySelector('.tl[data-db=a] .ev').click()")
        #expect(try page.waitFor("document.getElementById('event').dataset.seq === '\(rows.first ?? -1)'", seconds: 5))
        let decoded = try page.evaluate("document.getElementById('event').textContent")
        #expect(decoded.contains("\"type\": \"watch.add\"") && decoded.contains("\"sensor\": \"purpleair:149970\""), "\(decoded)")
    }
}
