import BreezeCLI
import Breeze
@preconcurrency import Glibc

/// `breeze-bench import`: import throughput (parse, de-duplicate by natural key, store) for a synthetic
/// PurpleAir CSV of N rows and, when the folder is found, the real Troy NY batches (29 overlapping files).
enum ImportBench {
    static let defaultTroy = "Tests/BreezeImportTests/Fixtures/purpleair/ajl_troy_ny_10min_batches"

    static func run(_ a: Arguments, _ ctx: Context) throws(CLIError) {
        let count = try BenchCommand.positive(a.options["count"], "--count", default: 1_000_000)
        let troy = a.options["troy"] ?? defaultTroy
        let dir = try BenchCommand.temporaryDirectory()
        defer { _ = system("rm -rf '\(dir)'") }
        var o = Replica.Options()
        o.durability = ctx.durability == .full ? .full : .normal
        var lines: [(String, Int, Double)] = []
        do {
            // Synthetic: N rows of 200 sensors every 2 minutes, all nine PurpleAir columns.
            let csv = dir + "/synthetic.csv"
            guard let f = fopen(csv, "w") else { throw CLIError.failure("cannot write \(csv)") }
            fputs("id,time_stamp,pm2.5_alt_a,pm2.5_alt_b,pm2.5_atm_a,pm2.5_atm_b,pm2.5_cf_1_a,pm2.5_cf_1_b,temperature,humidity,pressure\n", f)
            var g = ReadingGenerator()
            var buffer = ""
            for i in 0..<count {
                let a = (g.random() * 4000).rounded() / 100, b = (g.random() * 4000).rounded() / 100
                buffer += "\(100_000 + i % 200),\(1_698_000_000 + (i / 200) * 120),\(a),\(b),\(a),\(b),\(a),\(b),"
                    + "\((400 + g.random() * 400).rounded() / 10),\((200 + g.random() * 700).rounded() / 10),\((9900 + g.random() * 300).rounded() / 10)\n"
                if buffer.utf8.count > 1 << 20 { fputs(buffer, f); buffer = "" }
            }
            fputs(buffer, f)
            fclose(f)
            let replica = try Replica(path: dir + "/bench.db", options: o)
            defer { replica.close() }
            var t0 = SystemClock.monotonicSeconds()
            let r = try replica.importFile(csv, format: PurpleAirCSVImporter.format)
            lines.append(("synthetic PurpleAir CSV", r.rowsRead, SystemClock.monotonicSeconds() - t0))
            if access(troy, F_OK) == 0 {
                let files = try listCSV(troy)
                var rows = 0
                t0 = SystemClock.monotonicSeconds()
                for file in files { rows += try replica.importFile(file, format: PurpleAirCSVImporter.format).rowsRead }
                lines.append(("Troy NY batches (\(files.count) files)", rows, SystemClock.monotonicSeconds() - t0))
            }
        } catch let e as CLIError { throw e } catch { throw .failure("bench import: \(error)") }
        let mem = peakResidentMiB()
        if ctx.json {
            ctx.console.out(JSONValue.object([("benchmark", .string("import")),
                ("results", .array(lines.map { .object([("input", .string($0.0)), ("rows", .int(Int64($0.1))),
                                                        ("rowsPerSecond", .double((Double($0.1) / $0.2).rounded()))]) })),
                ("peakRSSMiB", .double(mem))]).text)
        } else {
            ctx.console.out("import benchmark (parse, de-duplicate by natural key, store; durability \(ctx.durability.rawValue))")
            for (name, rows, s) in lines {
                ctx.console.out("  \(pad(name, 34)) \(BenchCommand.fmt(Double(rows) / s)) rows/s (\(rows) rows in \(BenchCommand.fmt2(s)) s)")
            }
            ctx.console.out("  peak resident memory               \(BenchCommand.fmt2(mem)) MiB")
        }
    }

    static func listCSV(_ dir: String) throws(CLIError) -> [String] {
        guard let d = opendir(dir) else { throw .failure("--troy \(dir): cannot read the folder") }
        defer { closedir(d) }
        var out: [String] = []
        while let e = readdir(d) {
            let name = withUnsafeBytes(of: e.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasSuffix(".csv") { out.append(dir + "/" + name) }
        }
        return out.sorted()
    }
}
