// breeze-proxy: a frame-level fault-injecting TCP proxy for Breeze's fault tests (not for users).
//
//   breeze-proxy --target HOST:PORT [--listen 127.0.0.1:0] [--control 127.0.0.1:0] [--seed N]
//                [--reset P] [--drop P] [--duplicate P] [--reorder P] [--delay P] [--delay-max-ms MS]
//                [--attack KIND,... [--attack-after N] [--attack-window-ms MS]] [--capture FILE]
//
// Forwards every connection made to the listen address to the target. It splits each direction into
// Breeze frames (Protocol/sync.md section 2) and, per frame, with the given probabilities (seeded), resets
// the connection, drops the frame, sends it twice, lets the next frame overtake it, or delays it. Prints
// "listening on ADDR", "control on ADDR" and "seed N" on standard output, then serves until killed. The
// control address takes one command per connection: cut, heal, faults off, faults on, stats.
// --attack makes one attack per connection (kinds in turn: flip, drop, duplicate, reorder, replay, splice,
// inject, inject-sealed, downgrade, downgrade-hello) on frame N of one direction (default 3, after the
// handshake; the downgrades always on the client's first frame) and counts it as detected when the connection
// is closed within the window (default 3000 ms); --capture appends every byte forwarded to FILE.
@preconcurrency import Glibc

func fail(_ message: String, code: Int32 = 2) -> Never {
    fputs("breeze-proxy: \(message)\n", stderr)
    exit(code)
}

let usage = "usage: breeze-proxy --target HOST:PORT [--listen ADDR] [--control ADDR] [--seed N] [--reset P] [--drop P] "
    + "[--duplicate P] [--reorder P] [--delay P] [--delay-max-ms MS] [--attack KIND,...] [--attack-after N] [--attack-window-ms MS] [--capture FILE]"
var args = Array(CommandLine.arguments.dropFirst())
var parsed: [String: String] = [:]
while args.count >= 2, args[0].hasPrefix("--") {
    parsed[String(args[0].dropFirst(2))] = args[1]
    args.removeFirst(2)
}
let options = parsed
guard args.isEmpty else { fail("unexpected argument '\(args[0])'\n\(usage)") }
let known: Set<String> = ["target", "listen", "control", "seed", "reset", "drop", "duplicate", "reorder", "delay", "delay-max-ms",
                          "attack", "attack-after", "attack-window-ms", "capture"]
if let bad = options.keys.first(where: { !known.contains($0) }) { fail("unknown option --\(bad)\n\(usage)") }
guard let target = options["target"], Sockets.address(target) != nil else { fail("--target HOST:PORT is required\n\(usage)") }

func probability(_ name: String, _ options: [String: String]) -> Double {
    guard let text = options[name] else { return 0 }
    guard let p = Double(text), p >= 0, p <= 1 else { fail("--\(name) '\(text)': expected a probability between 0 and 1") }
    return p
}
var rates = FaultRates()
rates.reset = probability("reset", options)
rates.drop = probability("drop", options)
rates.duplicate = probability("duplicate", options)
rates.reorder = probability("reorder", options)
rates.delay = probability("delay", options)
if let m = options["delay-max-ms"] {
    guard let v = Int(m), v >= 1, v <= 60_000 else { fail("--delay-max-ms '\(m)': expected 1 ... 60000") }
    rates.delayMaxMillis = v
}
guard rates.reset + rates.drop + rates.duplicate + rates.reorder + rates.delay <= 1 else {
    fail("the fault probabilities add up to more than 1")
}
var attacks: [AttackKind] = []
if let list = options["attack"] {
    for name in list.split(separator: ",") {
        guard let k = AttackKind(rawValue: String(name)) else {
            fail("--attack '\(name)': expected \(AttackKind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        attacks.append(k)
    }
}
func whole(_ name: String, _ d: Int, _ range: ClosedRange<Int>) -> Int {
    guard let t = options[name] else { return d }
    guard let v = Int(t), range.contains(v) else { fail("--\(name) '\(t)': expected \(range.lowerBound) ... \(range.upperBound)") }
    return v
}
let attackAfter = whole("attack-after", 3, 0...1_000_000), attackWindow = whole("attack-window-ms", 3000, 1...600_000)
let seed: UInt64
if let s = options["seed"] {
    guard let v = UInt64(s) else { fail("--seed '\(s)': expected an unsigned integer") }
    seed = v
} else {
    seed = UInt64.random(in: 0...UInt64.max)
}
signal(SIGPIPE, SIG_IGN)
guard let listener = Sockets.listen(options["listen"] ?? "127.0.0.1:0") else {
    fail("cannot listen on \(options["listen"] ?? "127.0.0.1:0"): \(String(cString: strerror(errno)))", code: 1)
}
guard let control = Sockets.listen(options["control"] ?? "127.0.0.1:0") else {
    fail("cannot listen on \(options["control"] ?? "127.0.0.1:0") for control: \(String(cString: strerror(errno)))", code: 1)
}
print("listening on \(listener.bound)")
print("control on \(control.bound)")
print("seed \(seed)")
fflush(stdout)
FaultProxy(target: target, seed: seed, rates: rates, attacks: attacks, attackAfter: attackAfter, attackWindowMillis: Double(attackWindow),
           capture: options["capture"]).serve(listenFD: listener.fd, controlFD: control.fd)
