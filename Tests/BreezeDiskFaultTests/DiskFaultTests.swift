import Testing
import BreezeCore
import BreezeStore
@preconcurrency import Glibc

/// Issue 7, scenario 8: disk full and write/fsync errors, injected below SQLite by the fault VFS
/// (Sources/CFaultVFS) through a control file the running process re-reads: `quota N` (then SQLITE_FULL),
/// `write-error K`, `fsync-error K`. Removing the file is "space returns".
@Suite(.serialized) struct DiskFaultTests {
    let torture = productsDirectory() + "/breeze-torture"
    let breeze = productsDirectory() + "/breeze"

    func write(_ path: String, _ text: String) {
        writeFileBytes(path + ".tmp", Array(text.utf8))
        rename(path + ".tmp", path)
    }

    /// A writer appending in batches meets a fault, reports each failed batch, retries, and goes on when the
    /// fault is lifted, without a restart. Nothing acknowledged is lost; nothing stored was not acknowledged.
    @Test func writerSurvivesDiskFullAndWriteAndFsyncErrors() throws {
        var run = FaultRun(scenario: 8)
        let rounds = run.size(ci: 9, soak: 90)
        var fired = 0, lost = 0, duplicated = 0, unexpected = 0, failures = 0, acks = 0, recovered = 0, roundsFailed = 0
        var byKind: [String: Int] = [:]
        var unclear: [String] = []
        for round in 0..<rounds {
            let dir = TempDir()
            let path = dir.file("w.db"), ctl = dir.file("faults"), stats = dir.file("stats")
            try EventLog.create(at: path).close()
            let kind = ["quota", "write-error", "fsync-error"][round % 3]
            let amount = switch kind {
            case "quota": Int.random(in: 0...150_000, using: &run.rng)
            case "write-error": Int.random(in: 1...300, using: &run.rng)
            default: Int.random(in: 1...40, using: &run.rng)
            }
            write(ctl, "\(kind) \(amount)\n")
            let count = 1500, batch = Int.random(in: 1...25, using: &run.rng)
            let child = Child(torture, ["append", "--db", path, "--count", String(count), "--batch", String(batch),
                                        "--keep-going", "yes", "--fault-control", ctl, "--fault-stats", stats],
                              stderrPath: dir.file("err"))
            var acked: [String: String] = [:]
            var failed = 0, ackedAfterFailure = 0
            while let line = child.readLine() {
                switch TortureLine(line) {
                case .ack(let id, let hash, _)?:
                    if acked.updateValue(hash, forKey: id) != nil { duplicated += 1 }
                    if failed > 0 { ackedAfterFailure += 1 }
                case .fail(let message)?:
                    failed += 1
                    // A clear error: names the database and says what happened.
                    if !(message.hasPrefix(path) && (message.contains("disk full") || message.contains("I/O error"))) {
                        unclear.append(message)
                    }
                    // Space returns a little later (quota): the writer must go on by itself.
                    if failed == 3 || kind != "quota" { unlink(ctl) }
                case nil:
                    break
                }
            }
            #expect(child.wait() == 0, "round \(round): the writer gave up")
            let s = FaultStats(path: stats)
            let firedNow = s.firedFull + s.firedWrite + s.firedFsync
            if firedNow > 0 { fired += 1; byKind[kind, default: 0] += firedNow }
            failures += failed
            acks += acked.count
            if failed > 0 { roundsFailed += 1 }
            if failed > 0 && ackedAfterFailure > 0 { recovered += 1 }

            let log = try EventLog.open(at: path)
            defer { log.close() }
            #expect(try log.integrityCheck().isEmpty, "round \(round)")
            let report = try EventLog.verify(at: path)          // what `breeze verify` runs: hashes, gaps, heads, projection
            #expect(report.isClean, "round \(round): \(report.problems.prefix(5).map(\.description))")
            var stored: [String: String] = [:]
            try log.forEach { stored["\($0.event.id)"] = $0.event.hashHex; return true }
            lost += acked.filter { stored[$0.key] != $0.value }.count
            unexpected += stored.keys.filter { acked[$0] == nil }.count
            #expect(acked.count == count, "round \(round): every batch is eventually acknowledged")
            #expect(try log.versionVector(of: .user("torture")).total == UInt64(stored.count))
        }
        run.report(["fired": "\(fired)/\(rounds)", "lost": lost, "duplicated": duplicated, "unexpected": unexpected,
                    "acked": acks, "failed_batches": failures, "recovered_without_restart": "\(recovered)/\(roundsFailed)",
                    "full": byKind["quota"] ?? 0, "write_errors": byKind["write-error"] ?? 0,
                    "fsync_errors": byKind["fsync-error"] ?? 0])
        #expect(unclear.isEmpty, "unclear errors: \(unclear.prefix(3))")
        #expect(fired >= rounds * 2 / 3, "most injected faults must fire")
        #expect(recovered == roundsFailed && roundsFailed >= rounds / 2)
        #expect(lost == 0 && duplicated == 0 && unexpected == 0)
    }

    /// The CLI under a full disk or a failed fsync: exit 1, a one-line error naming the database, nothing
    /// stored; once space returns the same command works.
    @Test func cliAppendFailsClearlyAndStoresNothing() throws {
        let run = FaultRun(scenario: 8)
        let dir = TempDir()
        let db = dir.file("cli.db"), ctl = dir.file("faults"), stats = dir.file("stats")
        #expect(runProgram(breeze, ["--db", db, "init"]).code == 0)
        var fired = 0
        for (i, fault) in ["quota 0", "fsync-error 1", "write-error 1"].enumerated() {
            write(ctl, fault + "\n")
            let errFile = dir.file("err\(i)")
            let c = Child(torture, ["cli", "--fault-control", ctl, "--fault-stats", stats, "--", "--db", db,
                                    "favourite", "add", "10\(i)"], stderrPath: errFile)
            while c.readLine() != nil {}
            let code = c.wait()
            let err = String(decoding: readFileBytes(errFile), as: UTF8.self)
            let s = FaultStats(path: stats)
            fired += s.firedFull + s.firedFsync + s.firedWrite
            #expect(code == 1, "\(fault): exit \(code), stderr \(err)")
            #expect(err.contains(db) && (err.contains("disk full") || err.contains("I/O error")), "\(fault): \(err)")
            #expect(err.split(separator: "\n").count == 1, "one line: \(err)")
            let log = try EventLog.open(at: db)
            #expect(try log.count() == i, "\(fault): the failed append was stored")
            log.close()
            unlink(ctl)
            let ok = runProgram(torture, ["cli", "--fault-control", ctl, "--", "--db", db, "favourite", "add", "10\(i)"])
            #expect(ok.code == 0, "after the fault is lifted the command works")
            let after = try EventLog.open(at: db)
            #expect(try after.count() == i + 1)
            #expect(try after.integrityCheck().isEmpty)
            after.close()
        }
        run.report(["fired": fired, "lost": 0, "duplicated": 0, "unexpected": 0, "cli_exit1_clear": 3])
        #expect(fired == 3)
    }

    /// A node whose disk fills while a peer sends: it refuses to acknowledge what it could not store, keeps
    /// running, and catches up by itself once space returns.
    @Test func nodeRecoversWhenSpaceReturns() throws {
        let run = FaultRun(scenario: 8)
        let dir = TempDir()
        let a = dir.file("a.db"), b = dir.file("b.db"), ctl = dir.file("faults"), stats = dir.file("stats")
        #expect(runProgram(breeze, ["--db", a, "init"]).code == 0)
        #expect(runProgram(breeze, ["--db", b, "init"]).code == 0)
        let authority = CLIAuthority(breeze: breeze, keyFile: dir.file("authority.key"))
        let nodeA = Child(breeze, ["--db", a, "node", "--listen", "127.0.0.1:0"] + authority.nodeArguments(db: a),
                          stderrPath: dir.file("a.log"))
        let first = nodeA.readLine() ?? ""
        let addressA = first.hasPrefix("listening on ") ? String(first.dropFirst("listening on ".count)) : ""
        #expect(!addressA.isEmpty)
        let nodeB = Child(torture, ["cli", "--fault-control", ctl, "--fault-stats", stats, "--",
                                    "--db", b, "node", "--peer", addressA] + authority.nodeArguments(db: b),
                          stderrPath: dir.file("b.log"))
        defer {
            for n in [nodeA, nodeB] { n.signal(SIGTERM); while n.readLine() != nil {}; n.wait() }
        }
        func count(_ path: String) -> Int {
            guard let log = try? EventLog.open(at: path) else { return -1 }
            defer { log.close() }
            return (try? log.count()) ?? -1
        }
        // Warm up: both connected and in sync.
        #expect(runProgram(torture, ["append", "--db", a, "--count", "50", "--batch", "10"]).code == 0)
        #expect(waitUntil(seconds: 10) { count(b) == 50 })
        // The disk fills up while A receives 4,000 more events.
        write(ctl, "quota 0\n")
        #expect(runProgram(torture, ["append", "--db", a, "--count", "4000", "--batch", "100"]).code == 0)
        let filled = waitUntil(seconds: 10) { FaultStats(path: stats).firedFull > 0 }
        #expect(filled, "the quota must be hit")
        usleep(500_000)
        let during = count(b)
        #expect(during < 4050, "B cannot have stored everything with a full disk")
        // Space returns: no restart, B catches up.
        unlink(ctl)
        let caughtUp = waitUntil(seconds: 20) { count(b) == 4050 }
        #expect(caughtUp, "B did not catch up after space returned (has \(count(b)))")
        let logB = String(decoding: readFileBytes(dir.file("b.log")), as: UTF8.self)
        #expect(logB.contains("disk full"), "B logs the failure: \(logB.suffix(500))")
        let la = try EventLog.open(at: a), lb = try EventLog.open(at: b)
        defer { la.close(); lb.close() }
        let ea = try eventsByID(la), eb = try eventsByID(lb)
        let lost = ea.filter { eb[$0.key] != $0.value }.count
        let unexpected = eb.filter { ea[$0.key] == nil }.count
        #expect(lost == 0 && unexpected == 0 && eb.count == 4050)
        #expect(try lb.integrityCheck().isEmpty)
        let s = FaultStats(path: stats)
        run.report(["fired": s.firedFull, "lost": lost, "duplicated": 0, "unexpected": unexpected,
                    "stored_while_full": during, "recovered_without_restart": caughtUp ? 1 : 0])
    }

    /// The real thing, where the machine allows it (root, mounts permitted; CI may not): a 512 KiB tmpfs fills
    /// up under a writer, which reports the full disk and goes on by itself once the tmpfs is remounted larger.
    @Test(.enabled(if: DiskFaultTests.canMountTmpfs(), "needs permission to mount a tmpfs"))
    func realTmpfsFillsUpAndTheWriterRecoversAfterItGrows() throws {
        let run = FaultRun(scenario: 8)
        let mountDir = TempDir()
        #expect(system("mount -t tmpfs -o size=512k tmpfs '\(mountDir.path)'") == 0)
        defer { _ = system("umount '\(mountDir.path)'") }
        let path = mountDir.file("full.db")
        try EventLog.create(at: path).close()
        let count = 20_000
        let child = Child(torture, ["append", "--db", path, "--count", String(count), "--batch", "50", "--keep-going", "yes"],
                          stderrPath: "/dev/null")
        var acked: [String: String] = [:]
        var failed = 0, ackedAfterGrowth = 0
        var messages: Set<String> = []
        while let line = child.readLine() {
            switch TortureLine(line) {
            case .ack(let id, let hash, _)?:
                acked[id] = hash
                if failed >= 3 { ackedAfterGrowth += 1 }
            case .fail(let message)?:
                failed += 1
                messages.insert(message)
                if failed == 3 { #expect(system("mount -o remount,size=64m '\(mountDir.path)'") == 0) }
            case nil:
                break
            }
        }
        #expect(child.wait() == 0)
        #expect(failed >= 3, "the tmpfs must fill up")
        #expect(messages.allSatisfy { $0.hasPrefix(path) && $0.contains("disk full") }, "\(messages)")
        let log = try EventLog.open(at: path)
        defer { log.close() }
        var stored: [String: String] = [:]
        try log.forEach { stored["\($0.event.id)"] = $0.event.hashHex; return true }
        let lost = acked.filter { stored[$0.key] != $0.value }.count
        let unexpected = stored.keys.filter { acked[$0] == nil }.count
        #expect(acked.count == count && lost == 0 && unexpected == 0)
        #expect(try log.integrityCheck().isEmpty)
        run.report(["fired": failed, "lost": lost, "duplicated": 0, "unexpected": unexpected, "tmpfs": "512k->64m",
                    "acked_after_growth": ackedAfterGrowth])
    }

    /// True when this process may mount a tmpfs (tried once on a scratch directory).
    static func canMountTmpfs() -> Bool {
        let dir = TempDir()
        guard system("mount -t tmpfs -o size=64k tmpfs '\(dir.path)' 2>/dev/null") == 0 else { return false }
        _ = system("umount '\(dir.path)'")
        return true
    }
}

