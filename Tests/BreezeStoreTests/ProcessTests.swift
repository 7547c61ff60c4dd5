import Testing
import BreezeCore
@testable import BreezeStore
@preconcurrency import Glibc

/// Real processes against one database file: concurrent writers, and kill -9 in the middle of appends.
struct ProcessTests {
    let torture = productsDirectory() + "/breeze-torture"
    let breeze = productsDirectory() + "/breeze"

    /// `breeze verify` (the built binary) on a database after a crash: exit 0 and a clean report.
    func expectVerifies(_ path: String, _ comment: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let r = runProgram(breeze, ["--db", path, "verify"])
        #expect(r.code == 0 && r.out.contains("\nclean: "), "\(comment): \(r.out)", sourceLocation: sourceLocation)
    }

    @Test func twoProcessesAppendingToOneDatabaseNeverIssueTheSameID() throws {
        let dir = TempDir()
        let path = dir.file("shared.db")
        try EventLog.create(at: path).close()
        let children = (0..<3).map { i in
            Child(torture, ["append", "--db", path, "--count", "300", "--batch", String(1 + i * 4), "--durability", "normal"])
        }
        var acked: [String] = []
        for c in children {
            while let line = c.readLine() { acked.append(line) }
            #expect(c.wait() == 0)
        }
        #expect(acked.count == 900)
        let ids = acked.map { $0.split(separator: " ")[2] }
        #expect(Set(ids).count == 900)
        let log = try EventLog.open(at: path)
        #expect(try log.count() == 900)
        let vv = try log.versionVector(of: .user("torture"))
        #expect(vv.total == 900 && vv.counters.count == 1)
        #expect(try log.integrityCheck().isEmpty)
        expectVerifies(path, "three writers")
    }

    @Test(arguments: [("full", 1), ("normal", 7), ("full", 50)])
    func killNineDuringAppendsLosesNoAcknowledgedEvent(durability: String, batch: Int) throws {
        var rng = SystemRandomNumberGenerator()
        for round in 0..<10 {
            let dir = TempDir()
            let path = dir.file("crash.db")
            let child = Child(torture, ["append", "--db", path, "--count", "100000", "--batch", String(batch),
                                        "--durability", durability])
            let killAfter = Int.random(in: 1...400, using: &rng)
            var acked: [(id: String, hash: String)] = []
            while acked.count < killAfter, let line = child.readLine() {
                let f = line.split(separator: " ")
                acked.append((String(f[2]), String(f[3])))
            }
            child.kill9()
            child.wait()
            expectVerifies(path, "\(durability) batch \(batch) round \(round), killed")
            let log = try EventLog.open(at: path)
            #expect(try log.integrityCheck().isEmpty, "round \(round)")
            var stored: [String: String] = [:]
            try log.forEach { stored[$0.event.id.description] = $0.event.hashHex; return true }
            let lost = acked.filter { stored[$0.id] != $0.hash }
            #expect(lost.isEmpty, "\(durability) batch \(batch) round \(round): \(lost.count) acknowledged events lost")
            // Counters are contiguous: the vector covers exactly what is stored.
            #expect(try log.versionVector(of: .user("torture")).total == UInt64(stored.count))
            // And the log keeps working after the crash.
            let next = try log.append(.favouriteAdd(sensor: "after"), to: .user("torture"))
            #expect(next.id.counter == UInt64(stored.count) + 1)
        }
    }
}
