import Testing
import BreezeTestSupport
import Foundation
@preconcurrency import Glibc

/// `breeze inspect` as a server, without a browser: the token, the loopback default, the errors, the API's
/// answers against the CLI's, the event stream.
struct InspectServerTests {
    @Test func everyRequestWithoutTheTokenIsForbidden() throws {
        let dir = TempDir()
        let db = InspectFixture.database(dir)
        let p = InspectProcess(db: db)
        #expect(p.port > 0 && p.token.count == 32, "\(p.lines)")
        for target in ["/", "/api/info", "/api/screens", "/api/log", "/api/events", "/api/screen/detail?token=", "/?token=0123456789abcdef0123456789abcdef",
                       "/api/info?token=\(p.token.dropLast())", "/api/info?token=\(p.token)x"] {
            let r = httpGet(port: p.port, target)
            #expect(r.status == 403, "\(target): \(r.status)")
            #expect(!r.body.contains("South Troy"), "\(target) leaked data")
        }
        let page = httpGet(port: p.port, "/?token=\(p.token)")
        #expect(page.status == 200 && page.body.contains("<title>Breeze inspector</title>"))
        #expect(page.headers.contains("Content-Security-Policy") && page.headers.contains("Referrer-Policy: no-referrer"))
        let info = httpGet(port: p.port, "/api/info?token=\(p.token)")
        #expect(info.status == 200 && info.body.contains("\"users\":[\"ana\"]"), "\(info.body.prefix(300))")
    }

    @Test func itListensOnLoopbackByDefaultAndRefusesAnotherAddressUnlessAsked() throws {
        let dir = TempDir()
        let db = InspectFixture.database(dir)
        let p = InspectProcess(db: db)
        #expect(p.url.hasPrefix("http://127.0.0.1:"), "\(p.url)")
        // The kernel's table of listening sockets: this port is bound to 127.0.0.1 (0100007F), not to any address.
        let table = String(decoding: readFileBytes("/proc/net/tcp"), as: UTF8.self)
        let port = String(format: "%04X", p.port)
        #expect(table.contains("0100007F:\(port) 00000000:0000 0A"), "port \(port) is not listening on 127.0.0.1")
        #expect(!table.contains("00000000:\(port) 00000000:0000 0A"))
        let remote = runProgram(InspectFixture.breeze, ["--db", db, "inspect", "--listen", "0.0.0.0:0"])
        #expect(remote.code == 1)
    }

    @Test func badInputIsOneLineAndExitOne() throws {
        let dir = TempDir()
        let db = InspectFixture.database(dir)
        let p = InspectProcess(db: db)
        for (args, message) in [(["--db", db, "inspect", "--listen", "127.0.0.1:\(p.port)"], "address already in use"),
                                (["--db", dir.file("missing.db"), "inspect"], "no Breeze database here"),
                                (["--db", db, "inspect", "--compare", dir.file("other.db")], "no Breeze database here"),
                                (["--db", db, "inspect", "--listen", "127.0.0.1"], "expected HOST:PORT"),
                                (["--db", db, "inspect", "--listen", "0.0.0.0:0"], "not a loopback address")] {
            let c = Child(InspectFixture.breeze, args, stderrPath: dir.file("err"))
            #expect(c.wait() == 1, "\(args)")
            let err = String(decoding: readFileBytes(dir.file("err")), as: UTF8.self)
            let lines = err.split(separator: "\n")
            #expect(lines.count == 1 && err.contains(message), "\(args): \(err)")
            unlink(dir.file("err"))
        }
    }

    @Test func theScreensItServesAreWhatReplaySaysAtEveryCut() throws {
        let dir = TempDir()
        let db = InspectFixture.database(dir)
        let p = InspectProcess(db: db)
        let favourite = InspectFixture.lastSeq(db, type: "favourite.add")
        for until in [favourite - 1, favourite, InspectFixture.lastSeq(db)] {
            let r = httpGet(port: p.port, "/api/screens?token=\(p.token)&until=\(until)")
            let screens = try #require((json(r.body) as? [String: Any])?["screens"] as? [String: [String: Any]])
            #expect(screens.count == 11)
            for (name, entry) in screens {
                let options = entry["options"] as! [String: String]
                var args = ["--db", db, "--user", options["user"]!, "replay", "--until", String(until), "--screen", name, "--json"]
                for (k, v) in options.sorted(by: { $0.key < $1.key }) where k != "user" { args += ["--\(k)", v] }
                let cli = runProgram(InspectFixture.breeze, args)
                let model = entry["model"] as! [String: Any]
                if model["error"] != nil { #expect(cli.code == 1, "\(name) at \(until)"); continue }
                #expect(NSDictionary(dictionary: model) == NSDictionary(dictionary: json(cli.out) as? [String: Any] ?? [:]), "\(name) at \(until)")
            }
        }
    }

    @Test func theEventStreamSaysWhenAnotherProcessCommits() throws {
        let dir = TempDir()
        let db = InspectFixture.database(dir)
        let p = InspectProcess(db: db)
        let c = try #require(TCPConnection(port: p.port))
        c.send("GET /api/events?token=\(p.token) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let first = String(decoding: c.read(until: Array("retry: 1000".utf8)) ?? [], as: UTF8.self)
        #expect(first.contains("text/event-stream"), "\(first)")
        let events = InspectFixture.lastSeq(db)
        InspectFixture.cli(["--db", db, "--user", "ana", "unit", "set", "fahrenheit"])
        // (the observation's first value, the count before the edit, may arrive after the subscription)
        var seen: [String] = []
        for _ in 0..<3 {
            let next = String(decoding: c.read(until: Array("}".utf8)) ?? [], as: UTF8.self)
            seen.append(next)
            if next.contains("\"events\":\(events + 1)") { break }
        }
        #expect(seen.last?.contains("event: log") == true && seen.last?.contains("\"db\":\"a\",\"events\":\(events + 1)") == true, "\(seen)")
    }
}
