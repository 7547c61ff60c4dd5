// Shared conventions of the storage fault tests (issue 7, scenarios 2, 8 and 9): a logged, reproducible
// seed, CI or soak sizes, the fault VFS's counters, and the one-line FAULT report per scenario.
import BreezeCore
import BreezeStore
@_exported import BreezeTestSupport
@preconcurrency import Glibc

/// One scenario run: its seed (from `BREEZE_SEED`, else random; always printed), its size tier
/// (`BREEZE_SOAK=1` for the long soak) and its report line.
struct FaultRun {
    let scenario: Int
    let seed: UInt64
    let soak: Bool
    var rng: SeededRandom

    init(scenario: Int) {
        self.scenario = scenario
        if let s = getenv("BREEZE_SEED").map({ String(cString: $0) }), let v = UInt64(s) {
            seed = v
        } else {
            var sys = SystemRandomNumberGenerator()
            seed = sys.next() >> 1
        }
        soak = getenv("BREEZE_SOAK").map { String(cString: $0) } == "1"
        rng = SeededRandom(seed: seed)
        print("FAULT scenario=\(scenario) seed=\(seed) soak=\(soak ? 1 : 0) (reproduce with BREEZE_SEED=\(seed))")
    }

    /// `ci` normally, `soak` under BREEZE_SOAK=1.
    func size(ci: Int, soak s: Int) -> Int { soak ? s : ci }

    /// Prints the scenario's result line: `FAULT scenario=N seed=S key=value ...`.
    func report(_ fields: KeyValuePairs<String, CustomStringConvertible>) {
        let body = fields.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        print("FAULT scenario=\(scenario) seed=\(seed) \(body)")
    }
}

/// The fault VFS's counters, read from its shared stats file (see Sources/CFaultVFS/include/fault_vfs.h).
struct FaultStats {
    var writes = 0, syncs = 0, unsyncedWrites = 0, droppedWrites = 0, firedFull = 0, firedWrite = 0,
        firedFsync = 0, reloads = 0

    init(path: String) {
        let b = readFileBytes(path)
        func at(_ i: Int) -> Int {
            guard b.count >= (i + 1) * 8 else { return 0 }
            var v: UInt64 = 0
            for k in 0..<8 { v |= UInt64(b[i * 8 + k]) << (8 * k) }
            return Int(Int64(bitPattern: v))
        }
        (writes, syncs, unsyncedWrites, droppedWrites) = (at(0), at(1), at(2), at(3))
        (firedFull, firedWrite, firedFsync, reloads) = (at(4), at(5), at(6), at(7))
    }
}

/// One line of `breeze-torture append` output.
enum TortureLine {
    case ack(id: String, hash: String, event: Event?)
    case fail(String)

    init?(_ line: String) {
        let f = line.split(separator: " ", maxSplits: 4)
        if f.first == "fail" {
            self = .fail(String(line.dropFirst(5)))
        } else if f.first == "ack", f.count >= 4 {
            let event = f.count == 5 ? try? Event(decoding: hexBytes(String(f[4]))) : nil
            self = .ack(id: String(f[2]), hash: String(f[3]), event: event)
        } else {
            return nil
        }
    }
}

func hexBytes(_ s: String) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(s.utf8.count / 2)
    var hi: UInt8?
    for c in s.utf8 {
        let v: UInt8 = c >= 97 ? c - 87 : c - 48
        if let h = hi { out.append(h << 4 | v); hi = nil } else { hi = v }
    }
    return out
}

/// Every event of a log, by id, with its hash, read the way the sync path reads (`EventLog.page`).
func eventsByID(_ log: EventLog) throws -> [String: String] {
    var out: [String: String] = [:]
    var after: Int64 = 0
    while true {
        let rows = try log.page(afterSeq: after, limit: 512)
        guard let last = rows.last else { return out }
        for r in rows { out[r.event.id.description + "@" + r.event.stream.description] = r.event.hashHex }
        after = last.seq
    }
}

/// Sends `from`'s events that `to` lacks, stream by stream, as a sync session would (page, then ingest).
@discardableResult
func syncOnce(from: EventLog, to: EventLog) throws -> (inserted: Int, conflicts: Int) {
    var inserted = 0, conflicts = 0
    for stream in try from.streams() {
        let have = try to.versionVector(of: stream)
        var after: Int64 = 0
        while true {
            let (events, next) = try from.events(in: stream, notIn: have, afterSeq: after, limit: 1000)
            let r = try to.ingest(events, source: "test-sync")
            inserted += r.inserted
            conflicts += r.conflicts
            guard let next else { break }
            after = next
        }
    }
    return (inserted, conflicts)
}

/// Monotonic seconds.
func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}
