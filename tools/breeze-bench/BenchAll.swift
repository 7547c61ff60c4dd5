import BreezeCLI
import BreezeCore
import BreezeStore
import Foundation

/// `breeze-bench all`: every benchmark, each in a child process of its own (so each peak memory is its
/// own), repeated `--runs` times, with the comparison scripts of `tools/bench/` (Yjs under Node; Loro,
/// pycrdt and `eventsourcing` under Python) in the same runs; prints `BENCHMARKS.md`-ready markdown and
/// writes it to `--write FILE`. Each figure is the median of the runs; each ratio is taken within one run,
/// then the median of those ratios is reported.
enum BenchAll {
    /// One benchmark process: this executable (`executable == nil`) or a script's interpreter.
    struct Job {
        let name: String
        let executable: String?
        let args: [String]
        var environment: [String] = []
        /// Run in the first round only (the long `fanout` runs: one each, not the median of several).
        var once = false
    }

    struct Sizes {
        var append = 1_000_000, sync = 1_000_000, edits = 1000, projections = 500_000, importRows = 200_000
        var settings = 100_000, writers = 2000, events = 100_000
        /// The cities of `screens` (sensors each; `--cities 2000,20000` adds the large one, about 6 minutes a run).
        var cities = [2000]
        /// Devices of the `fanout` runs (one run each, about 1 to 3 minutes; `--fanout-devices 0` skips them).
        var fanout = [10, 1000, 5000, 10000]
    }

    /// The per-run JSON objects of each job (nil where that run failed), and the log of each failure.
    final class Results {
        var runs: [String: [[String: Any]?]] = [:]
        var failures: [String: String] = [:]

        func values(_ job: String, _ key: String) -> [Double] {
            (runs[job] ?? []).compactMap { $0.flatMap { BenchAll.number($0[key]) } }
        }
        func median(_ job: String, _ key: String) -> Double? { BenchAll.median(values(job, key)) }
        /// The median over runs of `f(run)`, for the runs where `f` has a value.
        func perRun(_ f: (Int) -> Double?) -> Double? {
            let n = runs.values.map(\.count).max() ?? 0
            return BenchAll.median((0..<n).compactMap(f))
        }
        func value(_ job: String, _ key: String, run: Int) -> Double? {
            guard let list = runs[job], run < list.count, let d = list[run] else { return nil }
            return BenchAll.number(d[key])
        }
        func string(_ job: String, _ key: String) -> String? {
            for d in runs[job] ?? [] { if let s = d?[key] as? String { return s } }
            return nil
        }
    }

    static func run(_ a: Arguments, _ ctx: Context) throws(CLIError) {
        let runs = try BenchCommand.positive(a.options["runs"], "--runs", default: 3)
        var sizes = Sizes()
        sizes.append = try BenchCommand.positive(a.options["append-count"], "--append-count", default: sizes.append)
        sizes.sync = try BenchCommand.positive(a.options["sync-count"], "--sync-count", default: sizes.sync)
        sizes.edits = try BenchCommand.positive(a.options["edits"], "--edits", default: sizes.edits)
        sizes.projections = try BenchCommand.positive(a.options["projection-count"], "--projection-count", default: sizes.projections)
        sizes.importRows = try BenchCommand.positive(a.options["import-count"], "--import-count", default: sizes.importRows)
        sizes.settings = try BenchCommand.positive(a.options["settings-count"], "--settings-count", default: sizes.settings)
        sizes.writers = try BenchCommand.positive(a.options["writers"], "--writers", default: sizes.writers)
        sizes.events = try BenchCommand.positive(a.options["events-count"], "--events-count", default: sizes.events)
        if let c = a.options["cities"] {
            sizes.cities = try c.split(separator: ",").map { s throws(CLIError) in try BenchCommand.positive(String(s), "--cities", default: 2000) }
        }
        let fanoutSeconds = try BenchCommand.positive(a.options["fanout-seconds"], "--fanout-seconds", default: 20)
        let hostileSeconds = try BenchCommand.positive(a.options["hostile-seconds"], "--hostile-seconds", default: 8)
        if let f = a.options["fanout-devices"] {
            sizes.fanout = f == "0" ? [] : try f.split(separator: ",").map { s throws(CLIError) in
                try BenchCommand.positive(String(s), "--fanout-devices", default: 1000)
            }
        }
        let compare = a.options["no-compare"] == nil
        let scripts = a.options["scripts"] ?? "tools/bench"
        let python = a.options["python"] ?? (access(".build/bench-venv/bin/python", X_OK) == 0 ? ".build/bench-venv/bin/python" : "python3")
        let node = a.options["node"] ?? "node"
        let logs = try BenchCommand.temporaryDirectory()

        var jobs = [
            Job(name: "append", executable: nil, args: ["append", "--count", "\(sizes.append)", "--json"]),
            Job(name: "sync", executable: nil, args: ["sync", "--count", "\(sizes.sync)", "--json"]),
            Job(name: "live", executable: nil, args: ["live", "--edits", "\(sizes.edits)", "--json"]),
            Job(name: "screens", executable: nil, args: ["screens", "--sensors", sizes.cities.map(String.init).joined(separator: ","), "--json"]),
            Job(name: "projections", executable: nil, args: ["projections", "--count", "\(sizes.projections)", "--json"]),
            Job(name: "import", executable: nil, args: ["import", "--count", "\(sizes.importRows)", "--json"]),
            Job(name: "settings", executable: nil, args: ["settings", "--count", "\(sizes.settings)",
                                                          "--writers", "\(sizes.writers)", "--json"]),
            Job(name: "events", executable: nil, args: ["events", "--count", "\(sizes.events)", "--json"]),
            Job(name: "hostile", executable: nil, args: ["hostile", "--seconds", "\(hostileSeconds)", "--json"]),
        ] + sizes.fanout.map { d in
            Job(name: "fanout\(d)", executable: nil, args: ["fanout", "--devices", "\(d)", "--feed-seconds", "\(fanoutSeconds)",
                                                        "--idle-seconds", "\(max(1, fanoutSeconds / 2))", "--json"], once: true)
        }
        var missing: [String: String] = [:]
        if compare {
            let settingsArgs = ["--count", "\(sizes.settings)", "--writers", "\(sizes.writers)"]
            if let n = findExecutable(node) {
                jobs.append(Job(name: "Yjs", executable: n, args: [scripts + "/yjs_settings.js"] + settingsArgs,
                                environment: ["NODE_PATH=/usr/share/nodejs"]))
            } else { missing["Yjs"] = "\(node) not found" }
            if let p = findExecutable(python) {
                jobs.append(Job(name: "Loro", executable: p, args: [scripts + "/crdt_settings.py", "loro"] + settingsArgs))
                jobs.append(Job(name: "pycrdt", executable: p, args: [scripts + "/crdt_settings.py", "pycrdt"] + settingsArgs))
                jobs.append(Job(name: "eventsourcing", executable: p,
                                args: [scripts + "/eventsourcing_events.py", "--count", "\(sizes.events)"]))
            } else { for s in ["Loro", "pycrdt", "eventsourcing"] { missing[s] = "\(python) not found" } }
        }

        let machine = Machine.describe(loadAverage: true)
        let started = SystemClock.monotonicSeconds()
        let results = Results()
        for r in 0..<runs {
            for job in jobs where r == 0 || !job.once {
                ctx.console.err("bench all: run \(r + 1)/\(runs): \(job.name)")
                let log = "\(logs)/\(job.name)-\(r + 1).log"
                do {
                    let p = try Subprocess(executable: job.executable, args: job.args, stderrPath: log,
                                           environment: job.environment)
                    let (lines, status) = p.wait()
                    let last = lines.last(where: { $0.hasPrefix("{") }) ?? ""
                    if status == 0, let d = try? JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any] {
                        results.runs[job.name, default: []].append(flatten(d))
                        continue
                    }
                    results.failures[job.name] = "exit \(status), log \(log)"
                } catch {
                    results.failures[job.name] = "\(error.message)"
                }
                results.runs[job.name, default: []].append(nil)
                ctx.console.err("bench all: \(job.name) failed (\(results.failures[job.name]!))")
            }
        }
        for (name, why) in missing { results.failures[name] = "not run: \(why)" }
        let command = (["breeze-bench", "all"] + a.positionals.dropFirst() + a.options.sorted { $0.key < $1.key }
            .map { $0.key == "no-compare" ? "--no-compare" : "--\($0.key) \($0.value)" })
            .joined(separator: " ")
        let markdown = Report(results: results, sizes: sizes, runs: runs, machine: machine, command: command,
                              minutes: (SystemClock.monotonicSeconds() - started) / 60, compare: compare).markdown()
        ctx.console.out(markdown)
        if let file = a.options["write"] {
            do { try markdown.write(toFile: file, atomically: true, encoding: .utf8) } catch {
                throw .failure("--write \(file): cannot write the file (\(error.localizedDescription))")
            }
            ctx.console.err("bench all: wrote \(file)")
        }
        if results.failures.isEmpty {
            _ = system("rm -rf '\(logs)'")
        } else {
            throw .failure("\(results.failures.count) benchmark(s) failed or did not run: "
                + results.failures.sorted { $0.key < $1.key }.map { "\($0.key) (\($0.value))" }.joined(separator: "; "))
        }
    }

    /// `bench import` reports a list (synthetic file, Troy batches): flattened to `synthetic*` and `troy*`;
    /// nested objects (`bench screens`: `city2000` -> `screens` -> `map (all)` -> `warmMs`) to their keys joined
    /// by dots (`city2000.screens.map (all).warmMs`).
    static func flatten(_ d: [String: Any]) -> [String: Any] {
        var out = d
        func nest(_ o: [String: Any], _ prefix: String) {
            for (k, v) in o {
                if let inner = v as? [String: Any] { nest(inner, prefix + k + ".") } else { out[prefix + k] = v }
            }
        }
        for (k, v) in d { if let inner = v as? [String: Any] { nest(inner, k + ".") } }
        guard let list = d["results"] as? [Any] else { return out }
        for (item, prefix) in zip(list, ["synthetic", "troy"]) {
            guard let o = item as? [String: Any] else { continue }
            out[prefix + "RowsPerSecond"] = o["rowsPerSecond"]
            out[prefix + "Rows"] = o["rows"]
        }
        return out
    }

    static func number(_ v: Any?) -> Double? {
        if let n = v as? NSNumber { return n.doubleValue }
        return v as? Double
    }

    static func median(_ v: [Double]) -> Double? {
        guard !v.isEmpty else { return nil }
        let s = v.sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    /// `name` itself when it holds a slash, else the first executable of that name on PATH.
    static func findExecutable(_ name: String) -> String? {
        if name.contains("/") { return access(name, X_OK) == 0 ? name : nil }
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let path = "\(dir)/\(name)"
            if access(path, X_OK) == 0 { return path }
        }
        return nil
    }
}
