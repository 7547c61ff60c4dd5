// breeze-torture: a load generator for crash and concurrency tests (not for users).
//
//   breeze-torture append --db PATH [--count N] [--batch B] [--durability full|normal] [--stream S]
//
// Appends N events (favourite adds to user:torture by default) in batches of B and, after each batch has
// committed, prints one line per event: "ack <stream> <event id> <hash>". A test kills the process at a random
// moment and checks that every acknowledged event is in the database.
import BreezeCore
import BreezeStore
@preconcurrency import Glibc

func fail(_ message: String) -> Never {
    fputs("breeze-torture: \(message)\n", stderr)
    exit(1)
}

var args = Array(CommandLine.arguments.dropFirst())
guard args.first == "append" else { fail("usage: breeze-torture append --db PATH [--count N] [--batch B] [--durability full|normal] [--stream S]") }
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

do {
    let log = try EventLog.create(at: path, options: o)
    var done = 0
    while done < count {
        let n = min(batch, count - done)
        let items = (0..<n).map { i -> (StreamID, EventBody) in
            switch stream {
            case .public:
                return (stream, .reading(Reading(source: "torture", sensor: "s\(getpid())", time: Int64(done + i),
                                                 values: [Measurement("pm25", Double(i))])))
            case .health:
                return (stream, .biomarkerReading(BiomarkerReading(readingType: "Blood Glucose", time: Int64(done + i),
                                                                   value: 100, unit: "mg/dL")))
            case .user:
                return (stream, .favouriteAdd(sensor: "p\(getpid())-\(done + i)"))
            }
        }
        let events = try log.append(items)
        var out = ""
        for e in events { out += "ack \(e.stream) \(e.id) \(e.hashHex)\n" }
        fputs(out, stdout)
        fflush(stdout)
        done += n
    }
    log.close()
} catch {
    fail("\(error)")
}
