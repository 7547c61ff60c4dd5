import Testing
import BreezeTestSupport
@preconcurrency import Glibc

/// `Examples/Favourites`, an app's use of the library in its own package (depending on this one by path):
/// built here with `swift build`, then run against a second replica, a `breeze node` process.
struct ExampleTests {
    static var examplePackage: String {
        let file = #filePath
        var dir = String(file[..<file.lastIndex(of: "/")!])
        for _ in 0..<2 { dir = String(dir[..<dir.lastIndex(of: "/")!]) }
        return dir + "/Examples/Favourites"
    }

    @Test(.timeLimit(.minutes(20)))
    func theExampleAppStarsASensorSyncsAndSeesThePeersEdit() throws {
        let package = Self.examplePackage
        let dir = TempDir()
        // Built as an app builds it (tools/test.sh builds it first, so this is quick there).
        let build = system("swift build --package-path '\(package)' --product favourites > '\(dir.file("build.log"))' 2>&1")
        #expect(build == 0, "swift build of \(package) failed: \(String(decoding: readFileBytes(dir.file("build.log")), as: UTF8.self))")
        guard build == 0 else { return }
        let bin = String(runProgram("/bin/sh", ["-c", "swift build --package-path '\(package)' --show-bin-path"]).out
            .split(separator: "\n").last ?? "") + "/favourites"
        let cluster = authority(in: dir)
        #expect(runBreeze(["--db", dir.file("peer.db"), "init"]).code == 0 && runBreeze(["--db", dir.file("app.db"), "init"]).code == 0)
        let appArgs = cluster.nodeArguments(db: dir.file("app.db"))     // the app's certificate and the authority's key
        let (peer, address) = startNode(db: dir.file("peer.db"), authority: cluster, log: dir.file("peer.log"))
        defer { peer.signal(SIGTERM); peer.wait() }
        let app = Child(bin, [dir.file("app.db"), Fixtures.troySensors, appArgs[1], appArgs[3], address], stderrPath: dir.file("app.log"))
        // A stalled app is killed, so its output ends and the test fails instead of hanging.
        let pid = app.pid
        let watchdog = Task.detached { try? await Task.sleep(nanoseconds: 60_000_000_000); kill(pid, SIGKILL) }
        defer { watchdog.cancel() }
        #expect(app.readLine() == "star false")
        #expect(app.readLine() == "star true")
        #expect(app.readLine() == "syncing with \(address)")
        // The app's star reaches the peer; the peer's user then un-stars the sensor there.
        #expect(waitUntil(seconds: 10) {
            runBreeze(["--db", dir.file("peer.db"), "--user", "ana", "state", "--json"]).out.contains(#""favourites":["purpleair:149970"]"#)   // the canonical id
        }, "the app's edit reached the peer")
        #expect(runBreeze(["--db", dir.file("peer.db"), "--user", "ana", "favourite", "remove", "149970"]).code == 0)
        #expect(app.readLine() == "star false (edit from the peer)")
        #expect(app.wait() == 0, "\(String(decoding: readFileBytes(dir.file("app.log")), as: UTF8.self))")
    }
}
