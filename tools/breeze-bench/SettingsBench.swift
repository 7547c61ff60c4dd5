import BreezeCLI
import BreezeCore
import BreezeCrypto
import BreezeStore
import BreezeSync
@preconcurrency import Glibc

/// `breeze-bench settings`: the settings-map workload of the comparison with Yjs, Loro and pycrdt
/// (`tools/bench/`). N last-writer-wins writes over K keys (`source.correct` events: the per-source
/// correction map of `UserState`, an `LWWMap`) appended to the log one transaction each; the same events
/// sent by one `SyncSession` to another over one in-memory connection (protocol version 3: packed events, sealed),
/// counting the frames' bytes; a peer database that decodes those frames through its session and stores
/// them with `EventLog.ingest` (durably); a real second node process that
/// catches up over TCP; the stored size; and W concurrent writers (W origins) merged into one state.
enum SettingsBench {
    struct Result {
        var writes = 0, keys = 0, writers = 0
        /// One transaction per write, durability normal (WAL, no fsync per commit).
        var writeMicrosNormal = 0.0
        /// One transaction per write, durability full (fsync per commit), over `fullSample` writes.
        var writeMicrosFull = 0.0, fullSample = 0
        /// Wire bytes per event sent by a session (packed and sealed): one frame per write (live, dictionaries
        /// warm after the first write), and a node's catch-up batches (`SyncSession.Config.batchEvents`, 2,048).
        var bytesPerUpdateLive = 0.0, bytesPerUpdateBatched = 0.0
        /// The same with version 1's self-describing `events` frames (every event in its canonical form).
        var selfDescribingLive = 0.0, selfDescribingBatched = 0.0
        /// Peer apply: decode + verify + `EventLog.ingest`, one transaction per frame.
        var applyBatchedFull = 0.0, applyLiveNormal = 0.0
        /// Two node processes over TCP: B catches up on the N events.
        var tcpRate = 0.0
        var dbBytes = 0, stateBytes = 0, eventBytes = 0
        var mergeMillis = 0.0
        var peakMiB = 0.0
    }

    static let stream = StreamID.user("bench")

    static func run(_ a: Arguments, _ ctx: Context) throws(CLIError) {
        let count = try BenchCommand.positive(a.options["count"], "--count", default: 100_000)
        let keys = try BenchCommand.positive(a.options["keys"], "--keys", default: 100)
        let writers = try BenchCommand.positive(a.options["writers"], "--writers", default: 2000)
        let sample = min(count, try BenchCommand.positive(a.options["full-sample"], "--full-sample", default: 200))
        let dir = try BenchCommand.temporaryDirectory()
        defer { _ = system("rm -rf '\(dir)'") }
        let r = try measure(count: count, keys: keys, writers: writers, fullSample: sample, dir: dir, console: ctx.console)
        let c = ctx.console
        if ctx.json {
            c.out(JSONValue.object([
                ("benchmark", .string("settings")), ("system", .string("Breeze")),
                ("writes", .int(Int64(count))), ("keys", .int(Int64(keys))), ("writers", .int(Int64(writers))),
                ("writeMicrosPerOp", .double(round3(r.writeMicrosNormal))),
                ("writeMicrosPerOpFull", .double(round3(r.writeMicrosFull))), ("fullSample", .int(Int64(r.fullSample))),
                ("wireBytesPerUpdate", .double(round3(r.bytesPerUpdateLive))),
                ("wireBytesPerUpdateBatched", .double(round3(r.bytesPerUpdateBatched))),
                ("selfDescribingBytesPerUpdate", .double(round3(r.selfDescribingLive))),
                ("selfDescribingBytesPerUpdateBatched", .double(round3(r.selfDescribingBatched))),
                ("eventBytes", .double(Double(r.eventBytes) / Double(count))),
                ("peerAppliesPerSecond", .double(r.applyBatchedFull.rounded())),
                ("peerAppliesPerSecondLiveNormal", .double(r.applyLiveNormal.rounded())),
                ("tcpCatchUpEventsPerSecond", .double(r.tcpRate.rounded())),
                ("dbBytes", .int(Int64(r.dbBytes))), ("stateBytes", .int(Int64(r.stateBytes))),
                ("mergeMillis", .double(round3(r.mergeMillis))), ("peakRSSMiB", .double(r.peakMiB)),
                ("durability", .string("full (fsync per commit) unless stated")),
            ]).text)
        } else {
            let f = BenchCommand.fmt, f2 = BenchCommand.fmt2
            c.out("settings benchmark: \(count) last-writer-wins writes over \(keys) keys (source.correct events), \(writers) concurrent writers")
            c.out("  write, one transaction each     \(f2(r.writeMicrosNormal)) us/op (durability normal); \(f2(r.writeMicrosFull)) us/op (full, \(r.fullSample) writes)")
            c.out("  wire bytes per update           \(f2(r.bytesPerUpdateLive)) (one frame per write); \(f2(r.bytesPerUpdateBatched)) (catch-up batches of up to 2,048); packed events, protocol 2")
            c.out("  self-describing event bytes     \(f2(r.selfDescribingLive)) (one frame per write); \(f2(r.selfDescribingBatched)) (batches of up to 2,048); protocol 1")
            c.out("  peer apply (decode + ingest)    \(f(r.applyBatchedFull)) events/s (catch-up batches of up to 2,048, one transaction each, durability full); \(f(r.applyLiveNormal)) events/s (one frame each, normal)")
            c.out("  peer over TCP (second process)  \(f(r.tcpRate)) events/s (catch-up, durability full)")
            c.out("  stored                          \(f(Double(r.dbBytes))) bytes database (all \(count) events, checkpointed); state \(f(Double(r.stateBytes))) bytes")
            c.out("  merge of \(writers) writers          \(f2(r.mergeMillis)) ms (ingest + fold, durability full)")
            c.out("  peak resident memory            \(f2(r.peakMiB)) MiB")
        }
    }

    static func round3(_ v: Double) -> Double { (v * 1000).rounded() / 1000 }

    static func body(_ i: Int, keys: Int, prefix: String = "v") -> EventBody {
        .sourceCorrect(source: "k\(i % keys)", correction: "\(prefix)\(i)")
    }

    static func measure(count: Int, keys: Int, writers: Int, fullSample: Int, dir: String,
                        console: Console) throws(CLIError) -> Result {
        var r = Result()
        r.writes = count; r.keys = keys; r.writers = writers; r.fullSample = fullSample
        let progress = { (s: String) in if console.isTerminal { console.progress(s) } }
        var normal = EventLog.Options(), full = EventLog.Options()
        normal.durability = .normal
        full.durability = .full
        do {
            // 1. Writes, one transaction each. Durability normal for all N (a full commit waits for an fsync,
            // about the same on every write), and full on a sample.
            let writer = try EventLog.create(at: dir + "/a.db", options: normal)
            var t0 = SystemClock.monotonicSeconds()
            for i in 0..<count {
                try writer.append(body(i, keys: keys), to: stream)
                if i % 5000 == 0 { progress("writes: \(i)/\(count)") }
            }
            r.writeMicrosNormal = (SystemClock.monotonicSeconds() - t0) / Double(count) * 1e6
            let writerState = try writer.userState(user: "bench")
            var events: [Event] = []
            events.reserveCapacity(count)
            try writer.forEach(stream: stream) { events.append($0.event); return true }
            writer.close()
            let durable = try EventLog.create(at: dir + "/full.db", options: full)
            t0 = SystemClock.monotonicSeconds()
            for i in 0..<fullSample { try durable.append(body(i, keys: keys), to: stream) }
            r.writeMicrosFull = (SystemClock.monotonicSeconds() - t0) / Double(fullSample) * 1e6
            durable.close()

            // 2. The wire: the frames one session sends another (version 3: packed events, sealed), one write at
            // a time as a live push does, and in batches as catch-up does; and version 1's self-describing frames.
            r.eventBytes = events.reduce(0) { $0 + $1.encoded.count }
            let authority = try LocalAuthority(directory: dir)
            let (sender, receiver) = try connectedPair(authority: authority)
            var live = try send(events, perWrite: true, from: sender, to: receiver)
            r.bytesPerUpdateLive = Double(live.reduce(0) { $0 + $1.count }) / Double(count)
            var batched = try send(events, perWrite: false, from: sender, to: receiver)
            r.bytesPerUpdateBatched = Double(batched.reduce(0) { $0 + $1.count }) / Double(count)
            r.selfDescribingLive = Double(events.enumerated().reduce(0) { $0 + Frame.encode(.events(batch: UInt64($1.offset + 1), events: [$1.element])).count }) / Double(count)
            var selfDescribing = 0
            let batchEvents = SyncSession.defaultBatchEvents
            for start in stride(from: 0, to: count, by: batchEvents) {
                selfDescribing += Frame.encode(.events(batch: UInt64(start / batchEvents + 1),
                                                       events: Array(events[start..<min(count, start + batchEvents)]))).count
            }
            r.selfDescribingBatched = Double(selfDescribing) / Double(count)

            // 3. Peer apply in this process: decode each frame, ingest its events (one transaction per frame).
            r.applyBatchedFull = try apply(batched, receiver: receiver, into: dir + "/peer.db", options: full, expect: count, state: writerState)
            progress("peer apply: one frame per event")
            r.applyLiveNormal = try apply(live, receiver: receiver, into: dir + "/peer-live.db", options: normal, expect: count, state: writerState)
            live = []
            batched = []

            // 4. A real second process over TCP, then the stored size of its checkpointed database.
            r.tcpRate = try catchUp(dir: dir, count: count, state: writerState, authority: authority, progress: progress)
            r.dbBytes = fileSize(dir + "/b.db") + fileSize(dir + "/b.db-wal")
            r.stateBytes = writerState.canonicalBytes.count

            // 5. W concurrent writers: W origins each set one key at the same moment; one replica ingests
            // them all (one transaction, as a node's group commit does) and folds the merged state.
            var merged: [Event] = []
            let millis = SystemClock.nowMillis()
            for j in 0..<writers {
                let origin = Origin(replica: ReplicaID(rawValue: UInt64(j + 1) &* 0x9E37_79B9_7F4A_7C15), epoch: 1)
                merged.append(Event(stream: stream, id: EventID(origin: origin, counter: 1),
                                    hlc: HLC(physicalMillis: millis, logical: 0), body: body(j, keys: keys, prefix: "w")))
            }
            let target = try EventLog.create(at: dir + "/merge.db", options: full)
            t0 = SystemClock.monotonicSeconds()
            let report = try target.ingest(merged)
            let state = try target.userState(user: "bench")
            r.mergeMillis = (SystemClock.monotonicSeconds() - t0) * 1000
            target.close()
            guard report.inserted == writers, state.corrections.entries.count == min(keys, writers) else {
                throw CLIError.failure("bench settings: the merge of \(writers) writers stored \(report.inserted) events and \(state.corrections.entries.count) keys")
            }
        } catch let e as CLIError { throw e } catch { throw .failure("bench settings in \(dir): \(error)") }
        if console.isTerminal { console.progress("") }
        r.peakMiB = peakResidentMiB()
        return r
    }

    /// Two sessions (cluster scope) after the handshake, speaking the newest protocol version: the sender
    /// has the receiver's (empty) vectors. Each is a value: copies start from this same point.
    static func connectedPair(authority: LocalAuthority) throws(CLIError) -> (sender: SyncSession, receiver: SyncSession) {
        let now = SystemClock.nowMillis()
        var a = SyncSession(role: .server, config: SyncSession.Config(credentials: try authority.credentials(replica: ReplicaID(rawValue: 0xA))),
                            ephemeralKey: SecureRandom.bytes(32), nowMillis: now)
        var b = SyncSession(role: .client, config: SyncSession.Config(credentials: try authority.credentials(replica: ReplicaID(rawValue: 0xB))),
                            ephemeralKey: SecureRandom.bytes(32), nowMillis: now)
        func sent(_ actions: [SyncSession.Action]) -> [Message] { actions.compactMap { if case .send(let m) = $0 { m } else { nil } } }
        _ = a.start()
        var toA = sent(b.start())
        while !toA.isEmpty {
            let toB = toA.flatMap { sent(a.receive($0)) }
            toA = toB.flatMap { sent(b.receive($0)) }
        }
        for m in sent(b.sendVectors(local: [:])) { _ = a.receive(m) }
        guard a.state == .ready, b.state == .ready, a.version == SyncSession.versions.upperBound else {
            throw CLIError.failure("bench settings: the in-memory sessions did not connect")
        }
        return (a, b)
    }

    /// The frames `sender` writes to send `events` (as log rows 1, 2, ...), one row per scan (`perWrite`,
    /// a live push after each write) or as many as its window allows (catch-up); `receiver` decodes each and
    /// acknowledges it (nothing is stored), so the window keeps moving.
    static func send(_ events: [Event], perWrite: Bool, from sender: SyncSession, to receiver: SyncSession) throws(CLIError) -> [[UInt8]] {
        var a = sender, b = receiver
        var frames: [[UInt8]] = []
        frames.reserveCapacity(perWrite ? events.count : events.count / 256 + 8)
        var next = 0
        while next < events.count {
            let n = perWrite ? 1 : min(events.count - next, a.readLimit)
            let rows = (next..<(next + n)).map { (seq: Int64($0 + 1), event: events[$0]) }
            next += n
            for case .send(let m) in a.offer(rows, scannedTo: Int64(next)) {
                frames.append(Frame.encode(m))
                for case .ingest(let batch, let got, _, _) in b.receive(m) {
                    for case .send(let ack) in b.committed(batch: batch, inserted: got.count, duplicates: 0, gaps: 0) { _ = a.receive(ack) }
                }
            }
            guard a.state == .ready, b.state == .ready, a.unacknowledged == 0 else {
                throw CLIError.failure("bench settings: the in-memory session stopped (\(a.state), \(b.state))")
            }
        }
        return frames
    }

    /// Feeds `frames` through a `FrameDecoder` and a copy of `receiver` (as a node's connection does) and
    /// ingests every batch into a new database; checks the peer's state equals the writer's. Returns events
    /// per second.
    static func apply(_ frames: [[UInt8]], receiver: SyncSession, into path: String, options: EventLog.Options, expect: Int,
                      state: UserState) throws -> Double {
        let peer = try EventLog.create(at: path, options: options)
        defer { peer.close() }
        var decoder = FrameDecoder()
        var session = receiver
        var inserted = 0
        let t0 = SystemClock.monotonicSeconds()
        for frame in frames {
            for m in try decoder.feed(frame) {
                for case .ingest(let batch, let events, _, _) in session.receive(m) {
                    let report = try peer.ingest(events)
                    inserted += report.inserted
                    _ = session.committed(batch: batch, inserted: report.inserted, duplicates: report.duplicates, gaps: 0)
                }
            }
        }
        let seconds = SystemClock.monotonicSeconds() - t0
        guard inserted == expect, try peer.userState(user: "bench").stateHash == state.stateHash else {
            throw CLIError.failure("bench settings: the peer stored \(inserted) of \(expect) events or its state differs")
        }
        return Double(expect) / seconds
    }

    /// Node A serves the writer's database, an empty node B (another process) dials it; returns B's
    /// catch-up rate and checks B's state.
    static func catchUp(dir: String, count: Int, state: UserState, authority: LocalAuthority, progress: (String) -> Void) throws -> Double {
        try EventLog.create(at: dir + "/b.db").close()
        let nodeA = try Subprocess(executable: try Subprocess.breezePath(), args: ["node", "--db", dir + "/a.db", "--listen", "127.0.0.1:0"] + authority.nodeArguments(db: dir + "/a.db"),
                                   stderrPath: dir + "/a.log")
        defer { nodeA.stop() }
        let addressA = SyncBench.listenAddress(nodeA)
        guard !addressA.isEmpty else { throw CLIError.failure("bench settings: node A did not start (see \(dir)/a.log)") }
        let t0 = SystemClock.monotonicSeconds()
        let nodeB = try Subprocess(executable: try Subprocess.breezePath(), args: ["node", "--db", dir + "/b.db", "--listen", "127.0.0.1:0", "--peer", addressA]
                                       + authority.nodeArguments(db: dir + "/b.db"), stderrPath: dir + "/b.log")
        defer { nodeB.stop() }
        _ = SyncBench.listenAddress(nodeB)
        let reader = try EventLog.open(at: dir + "/b.db")
        var held: UInt64 = 0
        while held < UInt64(count) {
            usleep(2_000)
            held = (try? reader.versionVector(of: stream).total) ?? 0
            progress("node B caught up \(held)/\(count)")
            if SystemClock.monotonicSeconds() - t0 > 600 {
                throw CLIError.failure("bench settings: node B did not catch up within 10 minutes (\(held)/\(count))")
            }
        }
        let seconds = SystemClock.monotonicSeconds() - t0
        nodeB.stop()
        let same = try reader.userState(user: "bench").stateHash == state.stateHash
        reader.close()   // the last connection: SQLite checkpoints the WAL into the file and removes it
        guard same else { throw CLIError.failure("bench settings: node B's state differs from the writer's") }
        return Double(count) / seconds
    }

    static func fileSize(_ path: String) -> Int {
        var st = stat()
        return stat(path, &st) == 0 ? Int(st.st_size) : 0
    }
}
