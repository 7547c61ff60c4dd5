import Testing
@testable import Breeze
import BreezeTestSupport
@preconcurrency import Glibc

/// Sync in the app's process: a `Replica`'s node and a `breeze node` process on 127.0.0.1, edits both ways,
/// observed status.
struct SyncTests {
    @Test func editsCrossBetweenAnInProcessNodeAndANodeProcessBothWays() throws {
        let dir = TempDir()
        let cluster = authority(in: dir)
        let a = try Replica(path: dir.file("a.db"))
        defer { a.close() }
        #expect(runBreeze(["--db", dir.file("b.db"), "init"]).code == 0)
        let status = Collected(a.observeSyncStatus())
        let started = try a.startSync(try syncOptions(db: dir.file("a.db"), authority: cluster, listen: "127.0.0.1:0"))
        guard let address = started.listenAddress else { Issue.record("not listening"); return }
        #expect(address.hasPrefix("127.0.0.1:") && !address.hasSuffix(":0"))
        let (b, _) = startNode(db: dir.file("b.db"), authority: cluster, peers: [address], log: dir.file("b.log"))
        defer { b.signal(SIGTERM); b.wait() }
        // A local write reaches the peer process.
        try a.addFavourite("131075")
        #expect(waitUntil(seconds: 5) { runBreeze(["--db", dir.file("b.db"), "state", "--json"]).out.contains("131075") })
        // The peer's edit reaches this replica's observer.
        let favourites = Collected(a.observe { try $0.state(user: "me").favourites.elements })
        #expect(runBreeze(["--db", dir.file("b.db"), "favourite", "add", "149970"]).code == 0)
        #expect(favourites.wait(seconds: 5) { $0 == ["131075", "149970"] })
        // The status shows the peer connected, and nothing left to send either way on the user's stream.
        #expect(status.wait(seconds: 5) { s in
            s.running && s.connectedPeers.count == 1 && s.peers[0].lag[.user("me")] == SyncStatus.Lag(peerLacks: 0, weLack: 0)
        }, "\(status.all.last.map { "\($0)" } ?? "none")")
        #expect(status.all.first == .stopped || status.all.first?.running == true)
        a.stopSync()
        #expect(status.wait(seconds: 5) { !$0.running })
        #expect(a.currentSyncStatus.running == false)
    }

    @Test func aLocalWriteReachesThePeerWithoutWaitingForAPoll() throws {
        let dir = TempDir()
        let cluster = authority(in: dir)
        let a = try Replica(path: dir.file("a.db"))
        defer { a.close() }
        #expect(runBreeze(["--db", dir.file("b.db"), "init"]).code == 0)
        var options = try syncOptions(db: dir.file("a.db"), authority: cluster, listen: "127.0.0.1:0")
        options.pollMillis = 600_000            // the node would notice a commit of another connection in 10 minutes
        let address = try a.startSync(options).listenAddress ?? ""
        let (b, _) = startNode(db: dir.file("b.db"), authority: cluster, peers: [address], log: dir.file("b.log"))
        defer { b.signal(SIGTERM); b.wait() }
        #expect(waitUntil(seconds: 5) { a.currentSyncStatus.connectedPeers.count == 1 })
        for i in 0..<3 {
            try a.addFavourite("s\(i)")
            #expect(waitUntil(seconds: 5) { runBreeze(["--db", dir.file("b.db"), "state", "--json"]).out.contains("s\(i)") },
                    "edit \(i) reached the peer: the replica woke its node")
        }
    }

    @Test func aSecondStartOrABadAddressIsRefusedClearly() throws {
        let dir = TempDir()
        let cluster = authority(in: dir)
        let a = try Replica(path: dir.file("a.db"))
        defer { a.close() }
        var options = try syncOptions(db: dir.file("a.db"), authority: cluster, listen: "999.1.1.1:x")
        do { _ = try a.startSync(options); Issue.record("started on a bad address") } catch {
            #expect(BreezeError.sync ~= error && error.description.contains("999.1.1.1:x"), "\(error)")
        }
        options.listen = nil
        do { _ = try a.startSync(options); Issue.record("started with nothing to do") } catch {
            #expect(BreezeError.invalidArgument ~= error)
        }
        options.listen = "127.0.0.1:0"
        var wrongUser = options
        wrongUser.user = "ana"
        do { _ = try a.startSync(wrongUser); Issue.record("a cluster certificate passed for ana's") } catch {
            #expect(BreezeError.invalidArgument ~= error && error.description.contains("not user:ana"), "\(error)")
        }
        let other = CLIAuthority(breeze: breeze, keyFile: dir.file("other.key"))
        var foreign = options
        foreign.authority = String(decoding: readFileBytes(other.publicKeyFile), as: UTF8.self)
        do { _ = try a.startSync(foreign); Issue.record("a chain to another authority") } catch {
            #expect(BreezeError.invalidArgument ~= error && error.description.contains("certificate"), "\(error)")
        }
        try a.startSync(options)
        do { _ = try a.startSync(options); Issue.record("two nodes") } catch {
            #expect(BreezeError.sync ~= error && error.description.contains("already running"), "\(error)")
        }
        a.stopSync()
        a.stopSync()
        try a.startSync(options)   // restartable
        a.stopSync()
    }
}
