import Testing
import Foundation
import BreezeTestSupport

/// The benchmarks end to end through the built binary, at tiny sizes (seconds): every figure is reported,
/// and `bench all` writes its tables even when the comparison scripts cannot run (this suite needs neither
/// Node nor Python packages).
struct BenchTests {
    static func json(_ text: String) -> [String: Any] {
        let line = text.split(separator: "\n").last(where: { $0.hasPrefix("{") }).map(String.init) ?? ""
        return (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]) ?? [:]
    }

    /// Runs the `breeze-bench` binary; returns exit code, stdout and stderr.
    static func bench(_ args: [String]) -> (Int32, String, String) { BinaryTests.run(args, executable: "breeze-bench") }

    static func number(_ d: [String: Any], _ key: String) -> Double {
        (d[key] as? NSNumber)?.doubleValue ?? -1
    }

    @Test func benchSettingsMeasuresEveryFigureOfTheComparison() {
        let (code, out, err) = Self.bench(["settings", "--count", "1000", "--writers", "50",
                                                "--full-sample", "5", "--json"])
        #expect(code == 0, "\(err)")
        let d = Self.json(out)
        #expect(d["system"] as? String == "Breeze" && Self.number(d, "writes") == 1000 && Self.number(d, "writers") == 50)
        for key in ["writeMicrosPerOp", "writeMicrosPerOpFull", "peerAppliesPerSecond", "peerAppliesPerSecondLiveNormal",
                    "tcpCatchUpEventsPerSecond", "mergeMillis", "peakRSSMiB"] {
            #expect(Self.number(d, key) > 0, "\(key) in \(out)")
        }
        // A version-1 frame wraps each event, so a frame of one event is larger than the event; batching shares
        // the overhead.
        let event = Self.number(d, "eventBytes"), v1Live = Self.number(d, "selfDescribingBytesPerUpdate")
        let v1Batched = Self.number(d, "selfDescribingBytesPerUpdateBatched")
        #expect(event > 40 && v1Live > event && v1Batched > event && v1Batched < v1Live, "\(out)")
        // Packed events: names once per connection, no hash. A live frame (warm after the first write) stays under
        // the 30 bytes per update aimed for, plus the 13 bytes sealing adds to every frame (a 16-byte tag and the
        // sealed message's type, less the 4-byte CRC a sealed frame does without); batched frames share them.
        let live = Self.number(d, "wireBytesPerUpdate"), batched = Self.number(d, "wireBytesPerUpdateBatched")
        #expect(live > 13 && live <= 30 + 13 && batched > 0 && batched < live, "\(out)")
        // The state is the 100 keys with their stamps; the database holds all 1,000 events.
        #expect(Self.number(d, "stateBytes") > 100 * 10 && Self.number(d, "dbBytes") > 1000 * event, "\(out)")
    }

    @Test func benchEventsAppendsAndReplays() {
        let (code, out, err) = Self.bench(["events", "--count", "1500", "--batch", "500", "--json"])
        #expect(code == 0, "\(err)")
        let d = Self.json(out)
        #expect(Self.number(d, "events") == 1500 && Self.number(d, "batch") == 500 && d["durability"] as? String == "FULL")
        #expect(Self.number(d, "appendEventsPerSecond") > 0 && Self.number(d, "replayEventsPerSecond") > 0, "\(out)")
        #expect(Self.number(d, "pageSize") == 16_384, "a new log's page size (Schema.pageSize): \(out)")
        let bad = Self.bench(["events", "--count", "-3"])
        #expect(bad.0 == 1 && bad.2.contains("--count '-3'"))
    }

    @Test func theBenchmarkToolRefusesBadArgumentsWithTheDocumentedCodes() {
        let unknown = Self.bench(["everything"])
        #expect(unknown.0 == 2 && unknown.2.contains("breeze-bench: unknown command 'everything'") && unknown.2.contains("usage: breeze-bench"), "\(unknown.2)")
        let count = Self.bench(["append", "--count", "zero"])
        #expect(count.0 == 1 && count.2.contains("breeze-bench append: --count 'zero'"), "\(count.2)")
        let help = Self.bench(["--help"])
        #expect(help.0 == 0 && help.1.contains("breeze-bench live"), "\(help.1)")
    }

    /// `app` (issue 30's goals) at tiny sizes: every screen's first value, the star with the heavy screens beside
    /// it, reads during an import (some made while it ran), and a small city's map.
    @Test func benchAppMeasuresEveryFigure() {
        let fixtures = DemoTests.root + "/Tests/BreezeImportTests/Fixtures"
        let (code, out, err) = Self.bench(["app", "--edits", "6", "--import-rows", "3000", "--sensors", "50", "--fixtures", fixtures, "--json"])
        #expect(code == 0, "\(err)")
        let d = Self.json(out)
        let firsts = d["firstValueMs"] as? [String: Any] ?? [:]
        #expect(firsts.count == 11, "\(out)")
        let star = d["starToSheet"] as? [String: Any] ?? [:]
        #expect(Self.number(star, "besideP99Ms") > 0 && Self.number(star, "aloneP99Ms") > 0, "\(out)")
        let reads = d["readsDuringImport"] as? [String: Any] ?? [:]
        #expect(Self.number(reads, "duringReads") >= 1 && Self.number(reads, "duringP99Ms") > 0, "\(out)")
        let city = d["cityMap"] as? [String: Any] ?? [:]
        #expect(Self.number(city, "sensors") == 50 && Self.number(city, "allMs") > 0, "\(out)")
        let bad = Self.bench(["app", "--fixtures", "/nonexistent"])
        #expect(bad.0 != 0 && bad.2.contains("no fixtures at /nonexistent"), "\(bad.2)")
    }

    /// `year` (issue 28's storage goals) at tiny sizes: a live feed beside a bulk import of the same rows, the
    /// bytes per reading of each, and the growth after the raw window; bad sizes are refused.
    @Test func benchYearMeasuresLiveAgainstBulkStorage() {
        let (code, out, err) = Self.bench(["year", "--sensors", "4", "--days", "3", "--raw-days", "1", "--step", "600", "--json"])
        #expect(code == 0, "\(err)")
        let d = Self.json(out)
        #expect(Self.number(d, "readings") == 4 * 3 * 144, "\(out)")
        #expect(Self.number(d, "liveBytesPerReading") > 0 && Self.number(d, "bulkBytesPerReading") > 0, "\(out)")
        #expect(Self.number(d, "liveOverBulk") > 1, "a live feed stores more a reading than a bulk import today: \(out)")
        #expect(Self.number(d, "cityYearGrowthGB") > 0, "\(out)")
        let bad = Self.bench(["year", "--days", "5", "--raw-days", "30"])
        #expect(bad.0 != 0 && bad.2.contains("must exceed --raw-days"), "\(bad.2)")
        let step = Self.bench(["year", "--step", "7"])
        #expect(step.0 != 0 && step.2.contains("--step 7"), "\(step.2)")
    }

    @Test func benchLiveMeasuresEditsAcrossThreeReplicas() {
        let (code, out, err) = Self.bench(["live", "--edits", "20", "--json"])
        #expect(code == 0, "\(err)")
        let d = Self.json(out)
        #expect(Self.number(d, "edits") == 20, "\(out)")
        for key in ["commit", "localYield", "zLog", "zModel"] {
            #expect(Self.number(d, key + "MedianMs") > 0 && Self.number(d, key + "P99Ms") >= Self.number(d, key + "MedianMs"), "\(key) in \(out)")
        }
        // The event is in z's log before z's sheet can show it, and z lies two hops behind the commit.
        #expect(Self.number(d, "zModelMedianMs") >= Self.number(d, "zLogMedianMs") * 0.5 && Self.number(d, "zLogMedianMs") > Self.number(d, "commitMedianMs"), "\(out)")
    }

    @Test func benchFanoutMeasuresEachPhaseAgainstARealNode() {
        let (code, out, err) = Self.bench(["fanout", "--devices", "30", "--sensors", "60", "--dark-sensors", "10", "--history-minutes", "10",
                                           "--radius", "2", "--feed-seconds", "2", "--idle-seconds", "1", "--rates", "40", "--json"])
        #expect(code == 0, "\(err)")
        let d = Self.json(out)
        #expect(Self.number(d, "handshakes") == 30, "\(out)")
        #expect(Self.number(d, "allCaughtUpSeconds") > 0 && Self.number(d, "catchUpBytesPerDevice") > 0, "\(out)")
        #expect(Self.number(d, "residentKiBPerSession") < 1024 && Self.number(d, "idleCPUShare") >= 0, "\(out)")
        // A reading of the feed reached the devices subscribed to it, and each came back after the restart.
        #expect(Self.number(d, "feed40Readings") > 0 && Self.number(d, "feed40Deliveries") > 0, "\(out)")
        #expect(Self.number(d, "feed40P99Millis") >= Self.number(d, "feed40P50Millis"), "\(out)")
        #expect(Self.number(d, "restartCurrentSeconds") > 0, "\(out)")
    }

    @Test func benchAllWritesTheTablesAndNamesWhatCouldNotRun() throws {
        let dir = TempDir()
        let file = dir.path + "/BENCHMARKS.md"
        let (code, out, err) = Self.bench([
            "all", "--runs", "1", "--append-count", "2000", "--sync-count", "2000", "--edits", "3",
            "--projection-count", "1000", "--import-count", "300", "--settings-count", "300", "--writers", "20",
            "--events-count", "600", "--node", "/nonexistent/node", "--python", "/nonexistent/python", "--write", file,
            "--fanout-devices", "20", "--fanout-seconds", "1", "--hostile-seconds", "2"])
        // The comparisons could not run: the tables are still printed and written, and the exit status says so.
        #expect(code == 1 && err.contains("benchmark(s) failed or did not run") && err.contains("Yjs"), "\(err)")
        let written = try String(contentsOfFile: file, encoding: .utf8)
        #expect(written + "\n" == out)
        for row in ["| local append vs raw SQLite", "| sync between two processes vs local append", "| live edit latency",
                    "| projection rebuild vs raw scan", "| import, synthetic PurpleAir CSV", "| Breeze | this build |",
                    "| SQLite | 3.", "## Not measured", "- Loro: not run: /nonexistent/python not found",
                    "| append at least 10x `eventsourcing` | -x | not measured |", "## A city of devices on one server (`fanout`)", "| 20 | ",
                    "## An honest phone while one device attacks (`hostile`)", "| two 50,000-stream subscriptions alternated"] {
            #expect(written.contains(row), "missing \(row)")
        }
        // Every Breeze figure is there: no empty result cell in the Breeze rows.
        let breezeRows = written.split(separator: "\n").filter { $0.hasPrefix("| local append") || $0.hasPrefix("| sync between") }
        #expect(breezeRows.count == 2 && breezeRows.allSatisfy { !$0.contains("| - |") && !$0.contains(" - events/s") })
    }
}
