import BreezeCLI
/// The markdown of `breeze-bench all` (what `BENCHMARKS.md` holds): the machine and the command, the
/// Breeze benchmarks, the settings-map comparison with Yjs, Loro and pycrdt, the event-sourcing comparison
/// with `eventsourcing`, and the goals of issue 8 checked against the figures.
struct Report {
    let results: BenchAll.Results
    let sizes: BenchAll.Sizes
    let runs: Int
    let machine: Machine
    let command: String
    let minutes: Double
    let compare: Bool

    static let crdts = ["Yjs", "Loro", "pycrdt"]

    func markdown() -> String {
        var out: [String] = []
        func line(_ s: String = "") { out.append(s) }
        line("# Breeze benchmarks")
        line()
        line("Produced by `\(command)` (from the repository root; `bash tools/bench.sh` installs what is missing, builds in")
        line("release mode and runs it). Each figure is the median of \(runs) run\(runs == 1 ? "" : "s"); each ratio is taken within one run")
        line("(both sides measured in the same process or the same round), then the median of those ratios is shown.")
        line("Every benchmark runs in a process of its own, so each peak memory (peak resident set) is its own.")
        line()
        line("| machine | |")
        line("|---|---|")
        line("| CPU | \(machine.cpu), \(machine.cores) cores online |")
        line("| memory | \(f2(machine.memoryGiB)) GiB |")
        line("| OS | \(machine.os), Linux \(machine.kernel) |")
        line("| Swift | \(machine.swift) |")
        line("| SQLite | \(machine.sqlite) (linked by Breeze) |")
        if let r = results.string("Yjs", "runtime") { line("| Node (Yjs) | \(r) |") }
        if let r = results.string("eventsourcing", "runtime") ?? results.string("Loro", "runtime") {
            line("| Python (Loro, pycrdt, eventsourcing) | \(r) |")
        }
        line("| date | \(machine.date) |")
        if let l = machine.loadAverage {
            line("| load average at start | \(f2(l))\(l > Double(machine.cores) ? " (the machine was busy with other work: figures are noisy)" : "") |")
        }
        line("| wall time | \(f2(minutes)) minutes for \(runs) run\(runs == 1 ? "" : "s") of everything |")
        line()
        breeze(&out)
        fanout(&out)
        hostile(&out)
        settings(&out)
        events(&out)
        goals(&out)
        if !results.failures.isEmpty {
            line("## Not measured")
            line()
            for (name, why) in results.failures.sorted(by: { $0.key < $1.key }) { line("- \(name): \(why)") }
            line()
        }
        return out.joined(separator: "\n")
    }

    // MARK: Breeze alone

    private func breeze(_ out: inout [String]) {
        out.append("## Breeze")
        out.append("")
        out.append("Durability full (the default: the write-ahead log is synced at every commit) unless stated.")
        out.append("")
        out.append("| benchmark | size | result | baseline, same run | ratio | peak memory |")
        out.append("|---|---|---|---|---|---|")
        let r = results
        out.append("| local append vs raw SQLite (`bench append`) | \(n(sizes.append)) events, transactions of 10,000 | "
            + "\(rate(r.median("append", "engineEventsPerSecond"))) events/s | raw SQLite inserts of the same rows: "
            + "\(rate(r.median("append", "rawSQLiteRowsPerSecond"))) rows/s | \(ratio(r.median("append", "ratio"))) | "
            + "\(mib(r.median("append", "peakRSSMiB"))) |")
        out.append("| sync between two processes vs local append (`bench sync`) | \(n(sizes.sync)) events, node A to an empty node B over loopback | "
            + "\(rate(r.median("sync", "syncEventsPerSecond"))) events/s | local batched append: "
            + "\(rate(r.median("sync", "localAppendEventsPerSecond"))) events/s | \(ratio(r.median("sync", "ratio"))) | "
            + "A \(mib(r.median("sync", "peakRSSMiBNodeA"))), B \(mib(r.median("sync", "peakRSSMiBNodeB"))) |")
        out.append("| live edit latency across three replicas (`live`) | \(n(sizes.edits)) single edits through the library, x (in process) → y → z (processes) | "
            + "to z's log: median \(ms(r.median("live", "zLogMedianMs"))), p99 \(ms(r.median("live", "zLogP99Ms"))); "
            + "to z's observed sheet: median \(ms(r.median("live", "zModelMedianMs"))), p99 \(ms(r.median("live", "zModelP99Ms"))) | "
            + "the edit's own commit: median \(ms(r.median("live", "commitMedianMs"))), p99 \(ms(r.median("live", "commitP99Ms"))) | | |")
        out.append("| local commit to the observer's yield (`live`) | the same edits, x's observed sheet | "
            + "median \(ms(r.median("live", "localYieldMedianMs"))), p99 \(ms(r.median("live", "localYieldP99Ms"))) | | | |")
        out.append("| projection rebuild vs raw scan (`bench projections`) | \(n(sizes.projections)) events (readings of 200 sensors, registrations, edits) | "
            + "\(rate(r.median("projections", "rebuildEventsPerSecond"))) events/s | raw decoded scan of the same log: "
            + "\(rate(r.median("projections", "rawScanEventsPerSecond"))) events/s | \(ratio(r.median("projections", "ratio"))) | "
            + "\(mib(r.median("projections", "peakRSSMiB"))) |")
        out.append("| one new reading to every screen (`bench projections`) | 1 reading, catch-up + \(Int(r.median("projections", "screens") ?? 11)) screens | "
            + "median \(ms(r.median("projections", "newReadingMedianMs"))) | | | (as above) |")
        out.append("| import, synthetic PurpleAir CSV (`bench import`) | \(n(sizes.importRows)) rows, 200 sensors, 9 values a row | "
            + "\(rate(r.median("import", "syntheticRowsPerSecond"))) rows/s (parse, de-duplicate, store) | | | "
            + "\(mib(r.median("import", "peakRSSMiB"))) |")
        for c in sizes.cities {
            let k = "city\(c)."
            let screens = ["map (all)", "map (5 km box)", "sheet", "detail", "history", "nearby", "alerts", "widgets", "sources"]
            out.append("| a city's screens (`screens`) | \(n(c)) PurpleAir sensors, 36 h of 10-minute rows (\(n(r.median("screens", k + "rows")))), warm median of 20 calls | "
                + screens.map { "\($0) \(ms(r.median("screens", k + "screens.\($0).warmMs")))" }.joined(separator: ", ")
                + "; first call after opening: map (all) \(ms(r.median("screens", k + "screens.map (all).coldMs"))) | | | |")
            out.append("| a city's storage (`screens`) | the same \(n(r.median("screens", k + "rows"))) rows of 9 values, on disk with every index | "
                + "\(f2(r.median("screens", k + "bytesPerRow"))) bytes per row; import \(rate(r.median("screens", k + "importRowsPerSecond"))) rows/s | "
                + "plain SQLite table of the same rows: \(f2(r.median("screens", k + "rawBytesPerRow"))) bytes per row, "
                + "\(rate(r.median("screens", k + "rawRowsPerSecond"))) rows/s | size \(ratio(r.median("screens", k + "sizeRatio"))), "
                + "import rate \(ratio(r.median("screens", k + "importRateRatio"))) | |")
            out.append("| one new reading to every screen's observer (`screens`) | \(n(c))-sensor city, 10 late readings, 8 observed screens | "
                + "median \(ms(r.median("screens", k + "newReadingMedianMs"))), max \(ms(r.median("screens", k + "newReadingMaxMs"))) | | | |")
        }
        if r.median("import", "troyRowsPerSecond") != nil {
            out.append("| import, real Troy NY batches (`bench import`) | \(n(Int(r.median("import", "troyRows") ?? 0))) rows in 29 overlapping files | "
                + "\(rate(r.median("import", "troyRowsPerSecond"))) rows/s | | | (as above) |")
        }
        out.append("")
        out.append("Sizes: sync uses the issue's 1,000,000 events by default; the other sizes are `bench all`'s defaults (or its")
        out.append("`--*-count` options), chosen so that everything finishes in a few minutes on 2 cores; the single benchmarks")
        out.append("(`breeze-bench append|sync|import|projections`) default to 1,000,000.")
        out.append("")
    }

    // MARK: A city of devices

    private func fanout(_ out: inout [String]) {
        guard !sizes.fanout.isEmpty else { return }
        let r = results
        out.append("## A city of devices on one server (`fanout`)")
        out.append("")
        out.append("`breeze-bench fanout --devices D`: one `breeze node` holding a city of 2,000 sensors with its last hour of readings")
        out.append("(one every 2 minutes each, as a live feed writes them) and D device sessions in the bench's process (`DeviceSwarm`:")
        out.append("one libuv loop, a certificate and a subscription each: the sensors within 2 km of a random point, about 15),")
        out.append("node and devices on the same machine. One run each (not the median of several). Load is the 1-minute load average")
        out.append("when the phase ended. The CPU of a reading no device wants is measured twice in each run, with the first")
        out.append("10 devices connected before the others dial and with all of them, at 2,000 times a city's rate beside idle windows;")
        out.append("its ratio is the run's own (the same machine, minutes apart).")
        out.append("")
        out.append("| devices | all authenticated (handshakes/s) | all caught up | node memory a session | node CPU idle | city's rate: commit to device p50 / p99 / max | 10x: p99 | CPU a reading no device wants, beyond idle: all devices / 10 devices | restart: all current | load |")
        out.append("|---|---|---|---|---|---|---|---|---|---|")
        for d in sizes.fanout {
            let j = "fanout\(d)"
            out.append("| \(n(d)) | \(secs(r.median(j, "lastAuthenticatedSeconds"))) (\(rate(r.median(j, "handshakesPerSecond")))) | "
                + "\(secs(r.median(j, "allCaughtUpSeconds"))) (\(n(r.median(j, "catchUpBytesPerDevice"))) bytes a device) | "
                + "\(f2(r.median(j, "residentKiBPerSession"))) KiB | \(pct(r.median(j, "idleCPUShare"))) of a core | "
                + "\(ms(r.median(j, "feed1P50Millis"))) / \(ms(r.median(j, "feed1P99Millis"))) / \(ms(r.median(j, "feed1MaxMillis"))) | "
                + "\(ms(r.median(j, "feed10P99Millis"))) | \(f2(r.median(j, "unwantedCPUMicrosPerReading"))) ± \(f2(r.median(j, "unwantedCPUMicrosStandardError"))) µs / "
                + "\(f2(r.median(j, "unwantedBaselineCPUMicrosPerReading"))) ± \(f2(r.median(j, "unwantedBaselineCPUMicrosStandardError"))) µs: \(ratio(r.median(j, "unwantedRatio")))x | "
                + "\(secs(r.median(j, "restartCurrentSeconds"))) | \(r.string(j, "feed1Load") ?? "-") |")
        }
        out.append("")
        guard let big = sizes.fanout.max(), big >= 10_000 else { return }
        let jb = "fanout\(big)"
        out.append("| goal (issue 31), \(n(big)) devices | measured | met |")
        out.append("|---|---|---|")
        let caught = r.median(jb, "allCaughtUpSeconds"), back = r.median(jb, "restartCurrentSeconds")
        let kib = r.median(jb, "residentKiBPerSession"), idle = r.median(jb, "idleCPUShare"), p99 = r.median(jb, "feed1P99Millis")
        let ub = r.median(jb, "unwantedCPUMicrosPerReading"), us = r.median(jb, "unwantedBaselineCPUMicrosPerReading")
        let eb = r.median(jb, "unwantedCPUMicrosStandardError") ?? 0, es = r.median(jb, "unwantedBaselineCPUMicrosStandardError") ?? 0
        let unwanted = r.median(jb, "unwantedRatio")
        out.append("| all authenticated and caught up within 120 s of dialling together | \(secs(caught)) | \(atMost(caught, 120)) |")
        out.append("| after a restart, all back and current within 60 s | \(secs(back)) | \(atMost(back, 60)) |")
        out.append("| node memory at most 64 KiB per idle session | \(f2(kib)) KiB | \(atMost(kib, 64)) |")
        out.append("| node CPU with every session idle at most 5% of a core | \(pct(idle)) | \(atMost(idle.map { $0 * 100 }, 5)) |")
        out.append("| every subscribed device has each reading within p99 250 ms of the commit (city's rate) | \(ms(p99)) | \(atMost(p99, 250)) |")
        out.append("| CPU per reading within 1.3x of 10 devices, where only interested sessions cost (readings no device wants, beyond idle, both in the same run) | \(f2(ub)) ± \(f2(eb)) µs against \(f2(us)) ± \(f2(es)) µs: \(ratio(unwanted))x | \(atMost(unwanted, 1.3)) |")
        out.append("")
    }

    private func hostile(_ out: inout [String]) {
        let r = results
        guard r.runs["hostile"] != nil else { return }
        out.append("## An honest phone while one device attacks (`hostile`)")
        out.append("")
        out.append("`breeze-bench hostile`: one `breeze node`; one enrolled device attacks it for 8 s each way while honest phones")
        out.append("(each its own replica) connect one after another, each timed from its connect to the server's `vectors`. Median")
        out.append("of the runs. Goal (issue 29): p99 under 100 ms under every attack (1.7-2.4 s under reconnect loops before).")
        out.append("")
        out.append("| attack | handshake p50 | p99 | max | failed | node CPU | node peak memory | goal met |")
        out.append("|---|---|---|---|---|---|---|---|")
        let names = [("quiet", "none (baseline)"), ("conflicts", "its own id re-sent with new content, 300 a batch"),
                     ("origins", "vectorsPart of 60,000 made-up origins each"), ("sessions", "40 sessions, then 4 reconnect loops"),
                     ("subscriptions", "two 50,000-stream subscriptions alternated 10 times a second")]
        for (key, what) in names {
            let p99 = r.median("hostile", key + ".p99Millis"), failed = r.median("hostile", key + ".failed")
            out.append("| \(what) | \(ms(r.median("hostile", key + ".p50Millis"))) | \(ms(p99)) | \(ms(r.median("hostile", key + ".maxMillis"))) | "
                + "\(n(failed)) | \(pct(r.median("hostile", key + ".nodeCPUShare"))) of a core | \(f2(r.median("hostile", key + ".nodePeakMiB"))) MiB | "
                + "\((failed ?? 1) == 0 ? atMost(p99, 100) : "no") |")
        }
        out.append("")
    }

    private func secs(_ v: Double?) -> String { v.map { BenchCommand.fmt2($0) + " s" } ?? "-" }
    private func pct(_ v: Double?) -> String { v.map { BenchCommand.fmt2($0 * 100) + "%" } ?? "-" }

    // MARK: Settings map

    private func settings(_ out: inout [String]) {
        let r = results
        out.append("## A settings map: Breeze, Yjs, Loro, pycrdt")
        out.append("")
        out.append("The same workload for each: \(n(sizes.settings)) last-writer-wins writes over 100 keys (key k<i mod 100>, value v<i>),")
        out.append("each write its own transaction and its own update; a peer applies every update; then \(n(sizes.writers)) writers (each")
        out.append("its own replica or document) each write one key concurrently and their updates are merged into one.")
        out.append("**Breeze's figures include durable storage in SQLite; Yjs, Loro and pycrdt keep everything in memory and persist")
        out.append("nothing.**")
        out.append("")
        out.append("| system | version | durability | write, µs/op | wire bytes/update | peer apply, updates/s | stored state, bytes | merge of \(n(sizes.writers)) writers, ms | peak memory |")
        out.append("|---|---|---|---|---|---|---|---|---|")
        if let _ = r.runs["settings"] {
            out.append("| Breeze | this build | SQLite; writes: normal, peer: full | \(f2(r.median("settings", "writeMicrosPerOp"))) | "
                + "\(f2(r.median("settings", "wireBytesPerUpdate"))) | \(rate(r.median("settings", "peerAppliesPerSecond"))) | "
                + "\(n(r.median("settings", "dbBytes"))) (database, all \(n(sizes.settings)) events); \(n(r.median("settings", "stateBytes"))) (state) | "
                + "\(f2(r.median("settings", "mergeMillis"))) | \(mib(r.median("settings", "peakRSSMiB"))) |")
        }
        for name in Report.crdts where r.runs[name] != nil {
            out.append("| \(name) | \(r.string(name, "version") ?? "?") | in memory, not persisted | \(f2(r.median(name, "writeMicrosPerOp"))) | "
                + "\(f2(r.median(name, "wireBytesPerUpdate"))) | \(rate(r.median(name, "peerAppliesPerSecond"))) | "
                + "\(n(r.median(name, "stateBytes"))) | \(f2(r.median(name, "mergeMillis"))) | \(mib(r.median(name, "peakRSSMiB"))) |")
        }
        out.append("")
        out.append("What each figure measures:")
        out.append("")
        out.append("- Write: Yjs `Y.Map.set`, Loro `LoroMap.insert` + `commit`, pycrdt `Map[key] = value`, each producing its update")
        out.append("  (captured by the update subscription). Breeze: `EventLog.append` of one `source.correct` event (the per-source")
        out.append("  correction map of the user state, a last-writer-wins map), one SQLite transaction per write, with durability")
        out.append("  normal (WAL, survives a crash of the process; the row above): \(f2(r.median("settings", "writeMicrosPerOp"))) µs; with durability full")
        out.append("  (an fsync per commit, survives power loss): \(f2(r.median("settings", "writeMicrosPerOpFull"))) µs per write (over the first "
            + "\(n(r.median("settings", "fullSample"))) writes). A device writing")
        out.append("  several settings at once pays one commit for all of them.")
        out.append("- Wire bytes: the update bytes of each write. Breeze: the frames one `SyncSession` sends another over one")
        out.append("  connection (protocol version 3, `packed` events: stream, type and origin sent once per connection and then")
        out.append("  as an index, counter and clock as differences, no hash on the wire but a 4-byte check per frame; every frame")
        out.append("  sealed, which adds 13 bytes a frame: the 16-byte Poly1305 tag and the sealed message's type, less the CRC; the")
        out.append("  others' update bytes are neither encrypted nor authenticated), one frame per")
        out.append("  write after the first: \(f2(r.median("settings", "wireBytesPerUpdate"))) bytes; in catch-up, batches of up to 2,048 events: \(f2(r.median("settings", "wireBytesPerUpdateBatched"))) bytes per update.")
        out.append("  Version 1's self-describing frames (each event in its canonical form of \(f2(r.median("settings", "eventBytes"))) bytes, with names, ids, clock and")
        out.append("  a 16-byte BLAKE2b hash) take \(f2(r.median("settings", "selfDescribingBytesPerUpdate"))) and \(f2(r.median("settings", "selfDescribingBytesPerUpdateBatched"))) bytes per update.")
        out.append("- Peer apply: the others apply each update to an in-memory document. Breeze decodes each frame (checksum, hash of")
        out.append("  every event) and stores it with `EventLog.ingest`, one transaction per batch of up to 2,048 events as a")
        out.append("  node receives and commits them in catch-up, durability full (the row above); one frame and one transaction per event,")
        out.append("  durability normal: \(rate(r.median("settings", "peerAppliesPerSecondLiveNormal"))) events/s; a real second `breeze node` process catching up over TCP")
        out.append("  (handshake included): \(rate(r.median("settings", "tcpCatchUpEventsPerSecond"))) events/s.")
        out.append("- Stored state: Yjs `encodeStateAsUpdate`, Loro snapshot, pycrdt `get_update` of the writer (the CRDT's own")
        out.append("  compaction of the history). Breeze keeps every event: the peer's database file after checkpoint (events,")
        out.append("  indexes, version vectors); the merged state itself (the map with the stamp that decided each key, canonical")
        out.append("  bytes) is the second figure.")
        out.append("- Merge: each writer's update since the empty state, applied to one fresh document in one transaction (Loro:")
        out.append("  `import_batch`). Breeze: \(n(sizes.writers)) events of \(n(sizes.writers)) origins ingested into a fresh database in one transaction")
        out.append("  (durability full), then the user state folded from the log.")
        out.append("")
    }

    // MARK: Event sourcing

    private func events(_ out: inout [String]) {
        let r = results
        out.append("## Event sourcing: Breeze and `eventsourcing` (Python) on SQLite")
        out.append("")
        out.append("The same workload for each: \(n(sizes.events)) events of one user's settings (key k<i mod 100>, value v<i>) appended in")
        out.append("transactions of 1,000 events, then replayed (read back and folded into the settings). Both use SQLite in WAL mode")
        out.append("with synchronous=FULL. `eventsourcing`: one aggregate, `save` every 1,000 events, replay by `repository.get`.")
        out.append("Breeze: `EventLog.append` of 1,000 events at a time, replay by `EventLog.userState` (decode, hash check, fold).")
        out.append("")
        out.append("| system | version | durability | append, events/s | replay, events/s | append, CPU µs/event | replay, CPU µs/event | peak memory |")
        out.append("|---|---|---|---|---|---|---|---|")
        for (name, job, version) in [("Breeze", "events", "this build"), ("eventsourcing", "eventsourcing", r.string("eventsourcing", "version") ?? "?")]
            where r.runs[job] != nil {
            out.append("| \(name) | \(version) | \(r.string(job, "durability") ?? "?") | \(rate(r.median(job, "appendEventsPerSecond"))) | "
                + "\(rate(r.median(job, "replayEventsPerSecond"))) | \(f2(r.median(job, "appendCPUMicrosPerEvent"))) | "
                + "\(f2(r.median(job, "replayCPUMicrosPerEvent"))) | \(mib(r.median(job, "peakRSSMiB"))) |")
        }
        let cpuAppend = ratioPerRun("eventsourcing", "events", "appendCPUMicrosPerEvent")
        let cpuReplay = ratioPerRun("eventsourcing", "events", "replayCPUMicrosPerEvent")
        out.append("| Breeze / eventsourcing (speed-up) | | | \(ratio(appendRatio)) | \(ratio(replayRatio)) | \(ratio(cpuAppend)) | \(ratio(cpuReplay)) | |")
        out.append("")
        out.append("Events per second are wall-clock rates (what the goal is stated in); CPU time (user + system, SQLite")
        out.append("included, waiting for the disk or for a CPU excluded) shows the work each side does per event.")
        if let mine = r.median("events", "pageSize"), let theirs = r.median("eventsourcing", "pageSize") {
            out.append("Each runs with its own defaults: SQLite pages of \(n(mine)) bytes for Breeze (a new log's page size, chosen")
            out.append("for appends: fewer WAL frames per event) and of \(n(theirs)) bytes for `eventsourcing` (SQLite's default).")
        }
        if let raw = r.median("events", "rawAppendEventsPerSecond"), let oneRow = r.median("events", "rawAppendOneRowEventsPerSecond") {
            out.append("")
            out.append("The ceiling for any log that stores one SQLite row per event, measured in the same runs: the same rows inserted")
            out.append("straight into SQLite (same table, index, pragmas and transactions of 1,000, `RawBaseline`) reach \(rate(raw)) rows/s")
            out.append("with \(n(r.median("events", "rawRowsPerStatement"))) rows per `INSERT`, as Breeze writes them (\(ratio(rawCeiling("rawAppendEventsPerSecond")))x `eventsourcing`), and")
            out.append("\(rate(oneRow)) rows/s with one row per `INSERT` (\(ratio(rawCeiling("rawAppendOneRowEventsPerSecond")))x). Breeze's append is \(ratio(ratioWithin("events", "appendEventsPerSecond", "rawAppendEventsPerSecond"))) of the first.")
        }
        out.append("")
    }

    /// Per run: raw SQLite's rate (`key` of the events job) over `eventsourcing`'s append rate; median.
    func rawCeiling(_ key: String) -> Double? {
        results.perRun { run in
            guard let x = results.value("events", key, run: run), let y = results.value("eventsourcing", "appendEventsPerSecond", run: run),
                  y > 0 else { return nil }
            return x / y
        }
    }

    /// Per run: two figures of one job, `a / b`; median.
    func ratioWithin(_ job: String, _ a: String, _ b: String) -> Double? {
        results.perRun { run in
            guard let x = results.value(job, a, run: run), let y = results.value(job, b, run: run), y > 0 else { return nil }
            return x / y
        }
    }

    var appendRatio: Double? { ratioPerRun("events", "eventsourcing", "appendEventsPerSecond") }
    var replayRatio: Double? { ratioPerRun("events", "eventsourcing", "replayEventsPerSecond") }

    func ratioPerRun(_ a: String, _ b: String, _ key: String) -> Double? {
        results.perRun { run in
            guard let x = results.value(a, key, run: run), let y = results.value(b, key, run: run), y > 0 else { return nil }
            return x / y
        }
    }

    // MARK: Goals

    private func goals(_ out: inout [String]) {
        let r = results
        out.append("## Goals (issues 8, 13 and 14)")
        out.append("")
        // Per run: Breeze against the best of the others in that run.
        func best(_ key: String, run: Int, highest: Bool) -> (String, Double)? {
            let values = Report.crdts.compactMap { name in r.value(name, key, run: run).map { (name, $0) } }
            return highest ? values.max { $0.1 < $1.1 } : values.min { $0.1 < $1.1 }
        }
        let apply = r.perRun { run in
            guard let b = r.value("settings", "peerAppliesPerSecond", run: run),
                  let o = best("peerAppliesPerSecond", run: run, highest: true) else { return nil }
            return b / o.1
        }
        let bytes = r.perRun { run in
            guard let b = r.value("settings", "wireBytesPerUpdate", run: run),
                  let o = best("wireBytesPerUpdate", run: run, highest: false) else { return nil }
            return o.1 / b
        }
        let bestApply = best("peerAppliesPerSecond", run: 0, highest: true)?.0 ?? "?"
        let bestBytes = best("wireBytesPerUpdate", run: 0, highest: false)?.0 ?? "?"
        out.append("| goal | measured (median of per-run ratios) | met |")
        out.append("|---|---|---|")
        out.append("| peer apply rate at least the best of Yjs, Loro, pycrdt, while persisting | Breeze / best (\(bestApply) in run 1): \(ratio(apply)) | \(met(apply, 1)) |")
        out.append("| bytes per update at most the best of them | best (\(bestBytes) in run 1) / Breeze: \(ratio(bytes)) (one sealed frame per update, 13 bytes of it the tag and framing that encryption adds; batched frames in the notes above) | \(met(bytes, 1)) |")
        out.append("| append at least 10x `eventsourcing` | \(ratio(appendRatio))x | \(met(appendRatio, 10)) |")
        out.append("| replay at least 10x `eventsourcing` | \(ratio(replayRatio))x | \(met(replayRatio, 10)) |")
        out.append("")
        out.append("| goal (issue 13) | measured (median of per-run p99s) | met |")
        out.append("|---|---|---|")
        let chain = r.median("live", "zModelP99Ms"), local = r.median("live", "localYieldP99Ms")
        out.append("| live edit across three replicas, p99 at most 5 ms | edit to z's observed sheet: \(ms(chain)) (to z's log: \(ms(r.median("live", "zLogP99Ms")))) | \(atMost(chain, 5)) |")
        out.append("| local commit to observer yield, p99 at most 2 ms | \(ms(local)) | \(atMost(local, 2)) |")
        out.append("")
        out.append("| goal (issue 14) | measured (median of runs) | met |")
        out.append("|---|---|---|")
        for c in sizes.cities {
            let k = "city\(c)."
            let map = r.median("screens", k + "screens.map (all).warmMs"), box = r.median("screens", k + "screens.map (5 km box).warmMs")
            let nearby = r.median("screens", k + "screens.nearby.warmMs"), widgets = r.median("screens", k + "screens.widgets.warmMs")
            let reading = r.median("screens", k + "newReadingMedianMs"), bytes = r.median("screens", k + "bytesPerRow")
            if c <= 2000 { out.append("| map of \(n(c)) sensors at most 10 ms | \(ms(map)) | \(atMost(map, 10)) |") }
            out.append("| map of a 5 km box in a \(n(c))-sensor city at most 10 ms | \(ms(box)) | \(atMost(box, 10)) |")
            out.append("| nearby and widgets at most 5 ms (\(n(c)) sensors) | nearby \(ms(nearby)), widgets \(ms(widgets)) | \(atMost(max(nearby ?? .infinity, widgets ?? .infinity), 5)) |")
            out.append("| one new reading to every screen's observer at most 5 ms (\(n(c)) sensors) | median \(ms(reading)) | \(atMost(reading, 5)) |")
            out.append("| storage at most 150 bytes per 9-value row (\(n(c)) sensors) | \(f2(bytes)) | \(atMost(bytes, 150)) |")
        }
        let rebuild = r.median("projections", "ratio")
        out.append("| projection rebuild at least 0.5 of a raw decoded scan | \(ratio(rebuild)) | \(met(rebuild, 0.5)) |")
        out.append("")
        var causes: [String] = []
        if let b = bytes, b < 1 {
            causes.append("- Bytes per update: a live frame of one packed event carries 9 bytes of framing (4-byte length, type, 4-byte")
            causes.append("  CRC-32C), a 4-byte end-to-end check, and the event's key index, counter and clock differences and payload.")
        }
        if let a = apply, a < 1 {
            causes.append("- Peer apply: Breeze stores what it receives before acknowledging it: each catch-up batch of up to 2,048 events")
            causes.append("  is one transaction with an fsync (a fixed cost per batch), and each event's id, counter and hash are checked")
            causes.append("  before its row goes into the log's indexes; the others update memory only.")
        }
        if let a = appendRatio, a < 10 {
            causes.append("- Append against `eventsourcing`: both sides wait for the same fsync at every commit of 1,000 events")
            causes.append("  (`synchronous=FULL`), which narrows the wall-clock ratio; the CPU columns show the work per event. Most of")
            causes.append("  Breeze's time is SQLite's own insert of the row into the log and its unique index: the raw-SQLite ceiling")
            causes.append("  above bounds what any log storing one row per event can reach on this machine.")
        }
        if !causes.isEmpty {
            out.append("Where a goal is not met, the causes seen in Breeze:")
            out.append("")
            out += causes
        }
        out.append("")
    }

    private func atMost(_ v: Double?, _ goal: Double) -> String {
        guard let v else { return "not measured" }
        return v <= goal ? "yes" : "**no**"
    }

    private func met(_ v: Double?, _ goal: Double) -> String {
        guard let v else { return "not measured" }
        return v >= goal ? "yes" : "**no**"
    }

    // MARK: Formatting

    private func n(_ v: Int) -> String { BenchCommand.fmt(Double(v)) }
    private func n(_ v: Double?) -> String { v.map(BenchCommand.fmt) ?? "-" }
    private func rate(_ v: Double?) -> String { v.map(BenchCommand.fmt) ?? "-" }
    private func f2(_ v: Double?) -> String { v.map(BenchCommand.fmt2) ?? "-" }
    private func ratio(_ v: Double?) -> String { v.map(BenchCommand.fmt2) ?? "-" }
    private func ms(_ v: Double?) -> String { v.map { BenchCommand.fmt2($0) + " ms" } ?? "-" }
    private func mib(_ v: Double?) -> String { v.map { BenchCommand.fmt2($0) + " MiB" } ?? "-" }
}
