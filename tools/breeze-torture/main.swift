// breeze-torture: a load generator for crash and concurrency tests (not for users).
//
//   breeze-torture append --db PATH [--count N] [--batch B] [--durability full|normal] [--stream S]
//                  [--boot ID] [--keep-going yes] [--print-events yes] [--hold yes]
//                  [--power-loss yes] [--fault-control FILE] [--fault-stats FILE]
//   breeze-torture cli [--power-loss yes] [--fault-control FILE] [--fault-stats FILE] -- BREEZE-ARGS...
//
// Appends N events (favourite adds to user:torture by default) in batches of B and, after each batch has
// committed, prints one line per event: "ack <stream> <event id> <hash>" (with --print-events, the event's
// canonical bytes in hex follow). A test kills the process at a random moment and checks that every
// acknowledged event is in the database.
//
// Storage faults (see Sources/CFaultVFS): --power-loss keeps unsynced writes in memory, so kill -9 loses them
// as a power cut would; --fault-control names a file of faults (disk quota, write or fsync errors) re-read
// while running; --fault-stats names the file where the VFS counts what fired. --boot overrides the boot id
// (a new one simulates a reboot). With --keep-going, a failed batch prints "fail <error>" and is retried
// every 20 ms (the writer recovers without a restart); without it the tool prints the error and exits 1.
// --hold keeps the database open after the last batch, until the process is killed.
import BreezeCore
import BreezeStore
import CFaultVFS
@preconcurrency import Glibc

func fail(_ message: String) -> Never {
    fputs("breeze-torture: \(message)\n", stderr)
    exit(1)
}

func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef")
    var s = ""
    s.reserveCapacity(bytes.count * 2)
    for b in bytes { s.append(digits[Int(b >> 4)]); s.append(digits[Int(b & 15)]) }
    return s
}

var args = Array(CommandLine.arguments.dropFirst())
if args.first == "cli" { runCLIUnderFaults(Array(args.dropFirst())) }
guard args.first == "append" else {
    fail("usage: breeze-torture append --db PATH [--count N] [--batch B] [--durability full|normal] [--stream S] [--boot ID] [--keep-going yes] [--print-events yes] [--hold yes] [--power-loss yes] [--fault-control FILE] [--fault-stats FILE]")
}
args.removeFirst()
var options: [String: String] = [:]
while args.count >= 2, args[0].hasPrefix("--") {
    options[String(args[0].dropFirst(2))] = args[1]
    args.removeFirst(2)
}
guard args.isEmpty, let path = options["db"] else { fail("--db PATH is required; options take a value each") }
let count = Int(options["count"] ?? "1000") ?? 1000
let batch = max(1, Int(options["batch"] ?? "1") ?? 1)
var o = EventLog.Options()
if let d = options["durability"] { o.durability = EventLog.Durability(rawValue: d) ?? .full }
let stream: StreamID
do { stream = try StreamID(parsing: options["stream"] ?? "user:torture") } catch { fail("\(error)") }
if let boot = options["boot"] { o.bootID = { boot } }
let keepGoing = options["keep-going"] == "yes"
let printEvents = options["print-events"] == "yes"
if options["power-loss"] == "yes" || options["fault-control"] != nil || options["fault-stats"] != nil {
    let rc = breeze_fault_vfs_install(options["fault-control"], options["fault-stats"], options["power-loss"] == "yes" ? 1 : 0)
    guard rc == 0 else { fail("cannot install the fault VFS (SQLite error \(rc))") }
}

do {
    let log = try EventLog.create(at: path, options: o)
    var done = 0
    while done < count {
        let n = min(batch, count - done)
        let items = (0..<n).map { i -> (StreamID, EventBody) in
            switch stream {
            case .public, .sensor, .pollen, .climate:
                return (stream, .reading(Reading(source: "torture", sensor: "s\(getpid())", time: Int64(done + i),
                                                 values: [Measurement("pm25", Double(i))])))
            case .health:
                return (stream, .biomarkerReading(BiomarkerReading(readingType: "Blood Glucose", time: Int64(done + i),
                                                                   value: 100, unit: "mg/dL")))
            case .user:
                return (stream, .favouriteAdd(sensor: "p\(getpid())-\(done + i)"))
            }
        }
        let events: [Event]
        do { events = try log.append(items) } catch where keepGoing {
            fputs("fail \(error)\n", stdout)
            fflush(stdout)
            usleep(20_000)
            continue
        }
        var out = ""
        for e in events {
            out += "ack \(e.stream) \(e.id) \(e.hashHex)"
            if printEvents { out += " " + hex(e.encoded) }
            out += "\n"
        }
        fputs(out, stdout)
        fflush(stdout)
        done += n
    }
    if options["hold"] == "yes" {
        // Keep the database open (its WAL unmerged) until killed: a test snapshots a crashed writer's files.
        fputs("holding\n", stdout)
        fflush(stdout)
        while true { pause() }
    }
    log.close()
} catch {
    fail("\(error)")
}
