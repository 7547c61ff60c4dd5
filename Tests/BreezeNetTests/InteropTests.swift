import Testing
import BreezeCore
import BreezeSync
import BreezeTestSupport
@preconcurrency import Glibc
import Foundation

/// "An implementation written from the spec alone interoperates" (`Protocol/sync.md`, preamble), checked:
/// `tools/interop/breeze_peer.py` is an independent peer in Python written from `Protocol/` only (libsodium
/// through ctypes for the primitives). It must reproduce every golden file, then sync with a real `breeze node`
/// as a device of ana: the sealed handshake, `vectors`, its own signed `favourite.add` (once as `events`, once
/// as `packed`), the node's `ack`, and the node's events (ana's favourite, and the peer's own earlier event
/// relayed with its origin signature).
@Suite(.serialized)
struct InteropTests {
    static var root: String {
        var dir = #filePath
        for _ in 0..<3 { dir = String(dir[..<dir.lastIndex(of: "/")!]) }
        return dir
    }

    static var script: String { root + "/tools/interop/breeze_peer.py" }

    /// Runs the Python peer; its stdout, and its stderr (kept in `dir`) for the failure messages.
    static func python(_ args: [String], in dir: TempDir, _ name: String) -> (code: Int32, out: String, err: String) {
        let errPath = dir.file(name + ".stderr")
        let child = Child("/usr/bin/env", ["python3", script] + args, stderrPath: errPath)
        var lines: [String] = []
        while let l = child.readLine() { lines.append(l) }
        let code = child.wait()
        return (code, lines.joined(separator: "\n"), String(decoding: readFileBytes(errPath), as: UTF8.self))
    }

    /// The JSON summary line `breeze_peer.py sync` prints last.
    static func summary(_ out: String) -> [String: Any]? {
        guard let line = out.split(separator: "\n").last,
              let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) else { return nil }
        return object as? [String: Any]
    }

    /// The received `favourite.add` events of a summary: sensor -> (signed, id).
    static func favourites(_ s: [String: Any]) -> [String: (signed: Bool, id: String)] {
        var out: [String: (signed: Bool, id: String)] = [:]
        for case let e as [String: Any] in s["received"] as? [Any] ?? [] where e["type"] as? String == "favourite.add" {
            if let sensor = (e["payload"] as? [String: Any])?["sensor"] as? String {
                out[sensor] = (e["signed"] as? Bool ?? false, e["id"] as? String ?? "")
            }
        }
        return out
    }

    @Test func thePythonPeerReproducesEveryGoldenFile() {
        let dir = TempDir()
        let r = Self.python(["selftest"], in: dir, "selftest")
        print(r.out)
        #expect(r.code == 0, "selftest failed:\n\(r.out)\n\(r.err)")
        #expect(r.out.contains(" 0 failed") && r.out.contains("golden files covered: 23/23"), "\(r.out)")
    }

    @Test func aPeerWrittenFromTheSpecAloneSyncsWithARealNode() throws {
        let c = Cluster()
        _ = c.cli("server", ["init"])
        let server = c.start("server")
        #expect(!server.isEmpty, "the node did not start: \(c.logText("server"))")
        #expect(c.cli("server", ["--user", "ana", "favourite", "add", "111"]).code == 0)

        // The Python peer's identity: a database made only for its key file, enrolled as ana's device.
        #expect(c.cli("py", ["init"]).code == 0)
        let cert = c.enrol("py", scope: .user("ana"))
        let common = ["--address", server, "--key", c.db("py") + ".key", "--cert", cert,
                      "--authority", c.authority.publicKeyFile, "--timeout", "20", "--verbose"]

        // 1: its favourite as an `events` batch; it receives ana's favourite 111, signed by the server.
        let first = Self.python(["sync"] + common + ["--favourite", "py-events", "--expect-favourite", "111"], in: c.dir, "py1")
        print("INTEROP run=events \(first.out)\n\(first.err)")
        #expect(first.code == 0, "breeze_peer.py sync failed:\n\(first.err)\nnode log:\n\(c.logText("server"))")
        let s1 = try #require(Self.summary(first.out), "no JSON summary: \(first.out)")
        #expect((s1["acked"] as? [String: Any])?["inserted"] as? Int == 1, "\(s1)")
        #expect((s1["server"] as? [String: Any])?["scope"] as? String == "cluster")
        let got1 = Self.favourites(s1)
        #expect(got1["111"] != nil, "ana's favourite 111 did not reach the Python peer: \(s1)")
        #expect(got1["111"]?.signed == true, "the server's own event came without a signature that holds")
        #expect(got1["py-events"] == nil, "the node echoed the peer's own event back")

        // 2: the same device again (a new epoch), as `packed`: the node relays run 1's event with its signature.
        let second = Self.python(["sync"] + common + ["--packed", "--favourite", "py-packed",
                                                      "--expect-favourite", "111", "--expect-favourite", "py-events"],
                                 in: c.dir, "py2")
        print("INTEROP run=packed \(second.out)\n\(second.err)")
        #expect(second.code == 0, "breeze_peer.py sync --packed failed:\n\(second.err)\nnode log:\n\(c.logText("server"))")
        let s2 = try #require(Self.summary(second.out), "no JSON summary: \(second.out)")
        #expect((s2["acked"] as? [String: Any])?["inserted"] as? Int == 1, "\(s2)")
        let got2 = Self.favourites(s2)
        #expect(got2["111"] != nil && got2["py-events"]?.signed == true, "\(s2)")
        #expect(got2["py-events"]?.id.hasPrefix(c.deviceKey("py").replica + ".") == true, "\(s2)")

        // The node stored both and merged them into ana's state; its database checks out.
        let state = c.cli("server", ["--user", "ana", "state", "--json"]).out
        #expect(state.contains("\"111\"") && state.contains("\"py-events\"") && state.contains("\"py-packed\""), "\(state)")
        #expect(c.verify("server").code == 0, "\(c.verify("server").out)")
        #expect(c.logText("server").contains("authenticated replica \(c.deviceKey("py").replica), scope user:ana"), "\(c.logText("server"))")
    }
}
