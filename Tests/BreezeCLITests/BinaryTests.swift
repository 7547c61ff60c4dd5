import Testing
@preconcurrency import Glibc
import BreezeTestSupport

/// End-to-end: the built `breeze` executable, real arguments, real exit codes.
struct BinaryTests {
    static func binary(_ name: String = "breeze") -> String { productsDirectory() + "/" + name }

    /// Runs the binary (`breeze`, or `executable` beside it); returns exit code, stdout and stderr.
    static func run(_ args: [String], env: [String] = [], executable: String = "breeze") -> (Int32, String, String) {
        var t = Array("/tmp/breeze-bin-XXXXXX".utf8CString)
        let dir = String(cString: mkdtemp(&t)!)
        defer { _ = system("rm -rf '\(dir)'") }
        let quoted = args.map { "'" + $0.replacingOccurrences("'", "'\\''") + "'" }.joined(separator: " ")
        let code = system("\(env.joined(separator: " ")) '\(binary(executable))' \(quoted) > '\(dir)/out' 2> '\(dir)/err'")
        return ((code >> 8) & 0xff, read(dir + "/out"), read(dir + "/err"))
    }

    static func read(_ path: String) -> String {
        guard let f = fopen(path, "r") else { return "" }
        defer { fclose(f) }
        var s = ""
        var buf = [CChar](repeating: 0, count: 4096)
        while fgets(&buf, 4096, f) != nil { s += String(cString: buf) }
        return s
    }

    @Test func theBinaryRunsATourAndExitsWithTheDocumentedCodes() {
        var t = Array("/tmp/breeze-e2e-XXXXXX".utf8CString)
        let dir = String(cString: mkdtemp(&t)!)
        defer { _ = system("rm -rf '\(dir)'") }
        let env = ["BREEZE_DB='\(dir)/tour.db'"]
        #expect(Self.run(["init"], env: env).0 == 0)
        let add = Self.run(["favourite", "add", "131075"], env: env)
        #expect(add.0 == 0 && add.1.contains("added favourite 131075"))
        let state = Self.run(["state", "--json"], env: env)
        #expect(state.0 == 0 && state.1.contains(#""favourites":["131075"]"#))
        let bad = Self.run(["unit", "set", "rankine"], env: env)
        #expect(bad.0 == 1 && bad.2 == "breeze unit: unit 'rankine': expected celsius or fahrenheit\n")
        let usage = Self.run(["unit"], env: env)
        #expect(usage.0 == 2 && usage.2.contains("usage: breeze unit set"))
        let log = Self.run(["log", "--json"], env: env)
        #expect(log.0 == 0 && log.1.split(separator: "\n").count == 1)
    }

    @Test func randomArgumentsNeverCrashTheTool() {
        let words = ["init", "favourite", "watch", "alert", "unit", "source", "state", "log", "add", "remove", "set",
                     "--category", "--db", "--json", "--user", "--limit", "--stream", "--enabled", "x", "", "--", "-",
                     "correct", "purpleair", "\u{7}", "user:", "public", "--help=3", "--db=", "list"]
        var state: UInt64 = 12345
        for _ in 0..<60 {
            var args: [String] = []
            for _ in 0..<Int(state % 5) {
                state = state &* 6364136223846793005 &+ 1442695040888963407
                args.append(words[Int(state >> 33) % words.count])
            }
            state = state &* 6364136223846793005 &+ 1442695040888963407
            let (code, _, _) = Self.run(args, env: ["BREEZE_DB=/nonexistent/dir/x.db", "HOME=/nonexistent"])
            #expect([0, 1, 2].contains(code), "\(args) exited \(code)")
        }
    }
}

extension String {
    func replacingOccurrences(_ a: String, _ b: String) -> String {
        split(separator: Character(a), omittingEmptySubsequences: false).joined(separator: b)
    }
}
