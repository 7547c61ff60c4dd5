import Testing
import Foundation
import BreezeTestSupport
import BreezeCLI
import BreezeCore
@preconcurrency import Glibc

/// `tools/demo.sh` end to end, short version: the debug `breeze`, smaller imports, three real node processes.
struct DemoTests {
    static var root: String {
        var dir = #filePath
        for _ in 0..<3 { dir = String(dir[..<dir.lastIndex(of: "/")!]) }
        return dir
    }

    /// Starts the demo in `dir` (quick mode, the products directory's `breeze`); stderr goes to `dir/stderr`.
    static func start(_ dir: TempDir) -> Child {
        Child("/usr/bin/env", ["BREEZE_DEMO_BIN=\(productsDirectory())", "BREEZE_DEMO_DIR=\(dir.path)/demo",
                               "BREEZE_DEMO_QUICK=1", "bash", root + "/tools/demo.sh"],
              stderrPath: dir.file("stderr"))
    }

    /// The pids the demo printed for its nodes (`server: pid 123, ...`).
    static func pids(_ lines: [String]) -> [pid_t] {
        lines.compactMap { line -> pid_t? in
            guard let r = line.range(of: ": pid "), ["server", "phone", "tablet"].contains(String(line[..<r.lowerBound])) else { return nil }
            return pid_t(line[r.upperBound...].prefix { $0.isNumber })
        }
    }

    static func gone(_ pid: pid_t) -> Bool { kill(pid, 0) == -1 && errno == ESRCH }

    /// A hang guard (generous: the quick demo takes about a minute): a demo still running after 15 minutes is
    /// stopped (SIGTERM, which its trap turns into stopping its nodes; SIGKILL 10 s later), so its output ends
    /// and the test fails instead of hanging the suite. Set `finished` when the demo is done; `stopped` says
    /// whether the guard had to stop it.
    static func hangGuard(_ demo: Child) -> (finished: Flag, stopped: Flag) {
        let pid = demo.pid
        let finished = Flag(), stopped = Flag()
        Thread {
            let deadline = SystemClock.monotonicSeconds() + 900
            while SystemClock.monotonicSeconds() < deadline && !finished.isSet { usleep(200_000) }
            guard !finished.isSet else { return }
            stopped.set()
            kill(pid, SIGTERM)
            usleep(10_000_000)
            if !finished.isSet { kill(pid, SIGKILL) }
        }.start()
        return (finished, stopped)
    }

    static func text(_ path: String) -> String { String(decoding: readFileBytes(path), as: UTF8.self) }

    @Test func theDemoConvergesShowsIdenticalScreensExplainsTheWinnerAndLeavesNoProcess() throws {
        let dir = TempDir()
        let demo = Self.start(dir)
        let (finished, stopped) = Self.hangGuard(demo)
        defer { finished.set() }
        var lines: [String] = []
        // Up to the last step's summary (not to end of file: a child another test spawns at the same instant may
        // inherit the pipe before it is marked close-on-exec and hold it open); then the script's own exit.
        while let l = demo.readLine() {
            lines.append(l)
            if l.hasPrefix("Done in ") { break }
        }
        let code = demo.wait()
        finished.set()
        #expect(!stopped.isSet, "the demo was still running after 15 minutes and was stopped")
        let all = lines.joined(separator: "\n")
        #expect(code == 0, "exit \(code)\n\(all)\n\(Self.text(dir.file("stderr")))")
        #expect(lines.filter { $0.hasPrefix("==> step ") }.count == 8)
        // Convergence: the line, and the three state hashes printed equal.
        let converged = lines.first { $0.hasPrefix("converged: server, phone and tablet hold the same events") }
        #expect(converged != nil, "\(all)")
        let hashes = lines.filter { $0.hasPrefix("          state hash ") }
        #expect(hashes.count == 3 && Set(hashes).count == 1, "\(hashes)")
        // Every screen compared, identical; and the read models written by the demo really are equal and real.
        let screens = ["map", "detail", "nearby", "alerts", "pollen", "climate", "biomarker"]
        for s in screens {
            #expect(lines.contains { $0.hasPrefix("  \(s) ") && $0.hasSuffix("identical") }, "\(s)")
            let phone = readFileBytes(dir.file("demo/screens/phone.\(s).json"))
            #expect(phone.count > 50 && phone == readFileBytes(dir.file("demo/screens/tablet.\(s).json")), "\(s)")
        }
        #expect(!all.contains("DIFFERENT"))
        #expect(all.contains("Last 24 hours") && all.contains("Burdens Creek") && all.contains("Blood Glucose"))
        // explain names the tablet's later unit write as the winner over the phone's concurrent one.
        let replicas = lines.first { $0.hasPrefix("server is replica ") } ?? ""
        let ids = replicas.split(separator: ";").map { $0.split(separator: " ").last.map(String.init) ?? "" }
        #expect(ids.count >= 3, "\(replicas)")
        if ids.count >= 3 {
            let (phone, tablet) = (ids[1], ids[2])
            // Epochs are random: each replica's is written E here.
            let shown = lines.map { Self.epochsAsE($0, replicas: [phone, tablet]) }
            #expect(shown.contains { $0.hasPrefix("  won   celsius: unit.set event \(tablet).E:") }, "\(all)")
            #expect(shown.contains { $0.hasPrefix("  lost  fahrenheit: unit.set event \(phone).E:") })
            #expect(shown.contains { $0.hasPrefix("  won   moderate: alert.set event \(tablet).E:") })
            #expect(shown.contains { $0.hasPrefix("  why: present because add \(tablet).E:1 was not observed by remove \(phone).E:1") })
        }
        // replay: the favourite is off at the sync point, on after it.
        #expect(lines.contains("☆ South Troy #2 (purpleair:149970)") && lines.contains("★ South Troy #2 (purpleair:149970)"))
        // No node left behind: each pid printed is gone and each database records a clean stop.
        let pids = Self.pids(lines)
        #expect(pids.count == 5, "\(pids)")
        for p in pids { #expect(Self.gone(p), "node pid \(p) still runs") }
        for n in ["server", "phone", "tablet"] {
            let status = runProgram(productsDirectory() + "/breeze", ["--db", dir.file("demo/\(n).db"), "status"])
            #expect(status.out.contains("stopped cleanly"), "\(n): \(status.out)")
        }
    }

    @Test func ctrlCStopsTheNodes() throws {
        let dir = TempDir()
        let demo = Self.start(dir)
        let (finished, _) = Self.hangGuard(demo)
        defer { finished.set() }
        var lines: [String] = []
        while let l = demo.readLine() {
            lines.append(l)
            if l.hasPrefix("server: pid ") { demo.signal(SIGINT); break }   // while the server imports
        }
        let code = demo.wait()
        #expect(code != 0)
        #expect(Self.text(dir.file("stderr")).contains("interrupted: stopping the nodes"))
        let pids = Self.pids(lines)
        #expect(pids.count == 1, "\(lines)")
        for p in pids { #expect(Self.gone(p), "node pid \(p) still runs") }
        let status = runProgram(productsDirectory() + "/breeze", ["--db", dir.file("demo/server.db"), "status"])
        #expect(status.out.contains("stopped cleanly"), "\(status.out)")
    }

    /// `line` with the epoch of each id of `replicas` (`replica.epoch:counter`) written `E`.
    static func epochsAsE(_ line: String, replicas: [String]) -> String {
        var out = line
        for r in replicas where !r.isEmpty {
            var result = "", rest = Substring(out)
            while let range = rest.range(of: r + ".") {
                result += rest[..<range.upperBound]
                rest = rest[range.upperBound...]
                let digits = rest.prefix { $0.isNumber }
                if !digits.isEmpty && rest.dropFirst(digits.count).first == ":" {
                    result += "E"
                    rest = rest.dropFirst(digits.count)
                }
            }
            out = result + rest
        }
        return out
    }
}
