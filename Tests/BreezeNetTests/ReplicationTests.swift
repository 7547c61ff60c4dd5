import Testing
import BreezeCore
import BreezeStore
@testable import BreezeSync
import BreezeCrypto
import BreezeTestSupport
import Foundation
@preconcurrency import Glibc

/// Replication with real processes and real sockets on 127.0.0.1.
@Suite(.serialized)
struct ReplicationTests {
    @Test func threeNodesConvergeAfterAPartitionWithEditsEverywhere() throws {
        let c = Cluster()
        let a = c.start("a")
        let b = c.start("b", peers: [a])
        _ = c.start("c", peers: [b])                  // a chain: a - b - c
        #expect(c.cli("a", ["favourite", "add", "131075"]).code == 0)
        #expect(waitUntil(seconds: 10) { c.fingerprint("c") == c.fingerprint("a") }, "an edit on a reaches c through b")
        // Partition c: stop its node; everybody edits; c's edits go to its database while it is cut off.
        c.stop("c")
        #expect(c.verify("c").code == 0, "\(c.verify("c").out)")
        #expect(c.cli("a", ["unit", "set", "fahrenheit"]).code == 0)
        #expect(c.cli("b", ["alert", "set", "--category", "unhealthy"]).code == 0)
        #expect(c.cli("c", ["favourite", "add", "AQS-370630099"]).code == 0)
        #expect(c.cli("c", ["favourite", "remove", "131075"]).code == 0)
        #expect(c.cli("c", ["alert", "set", "--on-clear", "silent"]).code == 0)
        #expect(runProgram(c.torture, ["append", "--db", c.db("c"), "--count", "300", "--batch", "50", "--stream", "public"]).code == 0)
        #expect(runProgram(c.torture, ["append", "--db", c.db("a"), "--count", "200", "--batch", "50", "--stream", "public"]).code == 0)
        #expect(c.fingerprint("c") != c.fingerprint("a"))
        // Heal.
        c.start("c", peers: [b])
        let converged = waitUntil(seconds: 20) {
            let fa = c.fingerprint("a")
            return fa != nil && fa == c.fingerprint("b") && fa == c.fingerprint("c")
        }
        #expect(converged, "a \(c.fingerprint("a") ?? "-")\nb \(c.fingerprint("b") ?? "-")\nc \(c.fingerprint("c") ?? "-")")
        #expect(c.count("a") == 1 + 2 + 3 + 500)
        let state = c.cli("b", ["state", "--json"]).out
        #expect(state.contains(#""favourites":["AQS-370630099"]"#))      // c's remove of 131075 saw a's add
        #expect(state.contains(#""unit":"fahrenheit""#) && state.contains(#""category":"unhealthy","onClear":"silent""#))
        // breeze status on b shows both peers connected and nothing missing.
        var status = ""
        let shown = waitUntil(seconds: 5) {
            status = c.cli("b", ["status", "--json"]).out
            return status.components(separatedBy: #""peerLacks":0"#).count - 1 == 2
        }
        #expect(shown, "\(status)")
        #expect(status.contains(#""running":true"#))
        #expect(status.components(separatedBy: #""connected":true"#).count - 1 == 2, "\(status)")
        #expect(status.components(separatedBy: #""peerLacks":0"#).count - 1 == 2, "\(status)")
        for n in ["a", "b", "c"] { #expect(c.verify(n).code == 0, "\(n) while its node runs: \(c.verify(n).out)") }
        c.stopAll()
        let after = c.cli("b", ["status"]).out
        #expect(after.contains("node    not running"))
        for n in ["a", "b", "c"] { #expect(c.verify(n).code == 0, "\(n): \(c.verify(n).out)") }
    }

    @Test func aNodeKilledDuringALargeCatchUpConvergesWithNothingLostOrDuplicated() throws {
        let c = Cluster()
        _ = c.cli("a", ["init"])
        #expect(runProgram(c.torture, ["append", "--db", c.db("a"), "--count", "60000", "--batch", "5000", "--stream", "public"]).code == 0)
        let total = c.count("a")
        let a = c.start("a")
        c.start("b", peers: [a])
        #expect(waitUntil(seconds: 30) { let n = c.count("b"); return n > 1000 && n < total }, "b is mid catch-up")
        c.stop("b", kill: true)
        let partial = c.count("b")
        #expect(partial > 0 && partial < total)
        let afterCrash = c.verify("b")
        #expect(afterCrash.code == 0 && afterCrash.out.contains("\(partial) events"), "b after kill -9: \(afterCrash.out)")
        c.start("b", peers: [a])
        #expect(waitUntil(seconds: 60) { c.count("b") == total }, "b caught up: \(c.count("b")) of \(total)")
        #expect(c.fingerprint("b") == c.fingerprint("a"))
        let log = try EventLog.open(at: c.db("b"))
        #expect(try log.integrityCheck().isEmpty)
        #expect(try log.versionVector(of: .public).total == UInt64(total))
        log.close()
        #expect(c.verify("a").code == 0 && c.verify("b").code == 0, "both verify while their nodes run")
    }

    @Test func logFollowShowsWhatANodeReceivesFromAPeerAndVerifyLeavesTheNodeUndisturbed() throws {
        let c = Cluster()
        let a = c.start("a")
        c.start("b", peers: [a])
        #expect(c.cli("a", ["favourite", "add", "first"]).code == 0)
        #expect(waitUntil(seconds: 10) { c.fingerprint("b") == c.fingerprint("a") })
        let follow = Child(c.breeze, ["--db", c.db("b"), "log", "--follow", "--follow-timeout", "30", "--json", "--stream", "user:me"],
                           stderrPath: c.dir.file("follow.err"))
        #expect(follow.readLine()?.contains(#""payload":{"sensor":"first"}"#) == true, "the history first")
        // An edit on a reaches b through its node; --follow on b's database prints it as it lands.
        var t0 = timespec(), t1 = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t0)
        #expect(c.cli("a", ["favourite", "add", "second"]).code == 0)
        let line = follow.readLine() ?? ""
        clock_gettime(CLOCK_MONOTONIC, &t1)
        #expect(line.contains(#""payload":{"sensor":"second"}"#) && line.contains(#""counter":2"#), "\(line)")
        #expect(t1.tv_sec - t0.tv_sec < 30, "arrived after \(t1.tv_sec - t0.tv_sec) s")
        // verify on b while its node receives a stream of events: clean, and the node goes on syncing.
        let torture = Child(c.torture, ["append", "--db", c.db("a"), "--count", "3000", "--batch", "100", "--stream", "public"])
        var reports: [(Int32, String)] = []
        for _ in 0..<3 { reports.append(c.verify("b")) }
        while torture.readLine() != nil {}
        #expect(torture.wait() == 0)
        for (code, out) in reports { #expect(code == 0, "\(out)") }
        #expect(waitUntil(seconds: 20) { c.count("b") == 3002 }, "b has \(c.count("b"))")
        #expect(c.fingerprint("b") == c.fingerprint("a"))
        follow.signal(SIGINT)
        while follow.readLine() != nil {}
        #expect(follow.wait() == 0)
        #expect(c.verify("b").code == 0)
    }

    @Test func aPhoneEnrolledByItsUsersAuthoritySyncsOnlyThatUsersStreamsAndReadsPublic() throws {
        let c = Cluster()
        let server = c.start("server")
        #expect(c.cli("server", ["--user", "ana", "favourite", "add", "ana-fav"]).code == 0)
        #expect(c.cli("server", ["--user", "bo", "favourite", "add", "bo-fav"]).code == 0)
        #expect(runProgram(c.torture, ["append", "--db", c.db("server"), "--count", "20", "--stream", "public"]).code == 0)
        // ana's user authority, certified by the cluster authority; it enrols her phone. The phone holds its
        // own key, its chain and the cluster authority's public key: no cluster secret.
        let anaKey = c.dir.file("ana-authority.key"), anaCert = c.dir.file("ana-authority.cert"), phoneCert = c.dir.file("phone.cert")
        #expect(runProgram(c.breeze, ["authority", "new", "--out", anaKey]).code == 0)
        let anaPublic = String(decoding: readFileBytes(anaKey + ".pub"), as: UTF8.self).split(separator: "\n").last.map(String.init) ?? ""
        let certified = runProgram(c.breeze, ["enrol", "--signer", c.authority.keyFile, "--user-authority", anaPublic, "--scope", "user:ana",
                                              "--out", anaCert])
        #expect(certified.code == 0, "\(certified.out)")
        _ = c.cli("phone", ["init"])
        #expect(c.cli("phone", ["--user", "ana", "unit", "set", "fahrenheit"]).code == 0)
        let (replica, key) = c.deviceKey("phone")
        // ana's authority cannot enrol a device for bo, nor a server.
        for scope in ["user:bo", "cluster"] {
            let refused = runProgram(c.breeze, ["enrol", "--signer", anaKey, "--signer-chain", anaCert, "--device-key", key, "--replica", replica,
                                                "--scope", scope, "--out", c.dir.file("bad-\(scope).cert")])
            #expect(refused.code == 1 && access(c.dir.file("bad-\(scope).cert"), F_OK) != 0, "\(scope): \(refused.out)")
        }
        let enrolled = runProgram(c.breeze, ["enrol", "--signer", anaKey, "--signer-chain", anaCert, "--device-key", key, "--replica", replica,
                                             "--scope", "user:ana", "--out", phoneCert])
        #expect(enrolled.code == 0, "\(enrolled.out)")
        let child = Child(c.breeze, ["node", "--db", c.db("phone"), "--peer", server, "--cert", phoneCert,
                                     "--authority", c.authority.publicKeyFile, "--user", "ana"],
                          stderrPath: c.dir.file("phone.log"))
        defer { child.signal(SIGTERM); while child.readLine() != nil {}; child.wait() }
        let synced = waitUntil(seconds: 10) {
            guard let log = try? EventLog.open(at: c.db("phone")) else { return false }
            defer { log.close() }
            return (try? log.count(stream: .public)) == 20 && (try? log.count(stream: .user("ana"))) == 2
        }
        #expect(synced, "phone log: \(c.logText("phone"))")
        let phone = try EventLog.open(at: c.db("phone"))
        #expect(try phone.count(stream: .user("bo")) == 0)
        phone.close()
        #expect(waitUntil(seconds: 10) { c.cli("server", ["--user", "ana", "state", "--json"]).out.contains(#""unit":"fahrenheit""#) })
        #expect(c.logText("server").contains("scope user:ana"))
    }

    @Test func aNodeWithAPeerThatDoesNotReadStillShutsDownPromptly() throws {
        let c = Cluster()
        _ = c.cli("a", ["init"])
        #expect(runProgram(c.torture, ["append", "--db", c.db("a"), "--count", "20000", "--batch", "10000", "--stream", "public"]).code == 0)
        let a = c.start("a")
        let silent = RawPeer(a)!
        #expect(silent.handshake(replica: ReplicaID(rawValue: 0x57D), scope: .cluster, authority: c.authority) != nil)
        silent.send(.vectors([]))              // asks for everything, then never reads or acknowledges
        let unauthenticated = RawPeer(a)!      // and one that never finishes its handshake
        unauthenticated.send(Array(Frame.encode(.ping(1)).prefix(3)) as [UInt8])
        usleep(500_000)
        var t0 = timespec(), t1 = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t0)
        c.stop("a")
        clock_gettime(CLOCK_MONOTONIC, &t1)
        #expect(t1.tv_sec - t0.tv_sec < 30, "shutdown took \(t1.tv_sec - t0.tv_sec) s")
        #expect(c.cli("a", ["status"]).out.contains("stopped cleanly"))
    }

    @Test func hostilePeersAreRefusedAndTheNodeKeepsServing() throws {
        let c = Cluster()
        let a = c.start("a")
        c.start("b", peers: [a])
        #expect(c.cli("a", ["favourite", "add", "first"]).code == 0)
        #expect(waitUntil(seconds: 10) { c.fingerprint("b") == c.fingerprint("a") })

        // 1. A certificate from an authority this cluster does not trust: the node refuses handshake3 with an
        // authentication error and stores nothing.
        let foreign = Ed25519.KeyPair.generate(), device = Ed25519.KeyPair.generate()
        let now = SystemClock.nowMillis()
        let foreignCert = try Certificate.issue(role: .device, key: device.publicKey, replica: ReplicaID(rawValue: 0xBAD), scope: .cluster,
                                                notBefore: now - 60_000, notAfter: now + 60_000, signer: foreign)
        let wrong = RawPeer(a)!
        // (The attacker knows the cluster authority's public key, so it accepts the node; `unchecked` because
        // its own chain does not lead there.)
        #expect(wrong.handshake(credentials: SyncCredentials(unchecked: device, chain: [foreignCert], authority: c.authority.key.publicKey)) != nil)
        guard case .error(let refusal, let text)? = wrong.receive() else { Issue.record("no refusal"); return }
        // The refusal travels in clear, so it names nothing (issue 29); the reason is in the node's log.
        #expect(refusal == .authentication && text == SyncSession.refusedInClear(.authentication), "\(text)")
        #expect(wrong.closedByPeer())
        #expect(waitUntil(seconds: 10) { c.logText("a").contains("does not trust") }, "\(c.logText("a").suffix(600))")

        // 2. A version-2 client (hello): refused with a readable version error, in clear.
        let old = RawPeer(a)!
        old.sendPlain(.hello(minVersion: 1, maxVersion: 2, replica: ReplicaID(rawValue: 0xEE), scope: .cluster, nonce: Array(repeating: 1, count: 32)))
        guard case .error(let code, _)? = old.receive() else { Issue.record("no error frame"); return }
        #expect(code == .version)
        #expect(old.closedByPeer())

        // 3. A per-user peer asking for another user's stream.
        let phone = RawPeer(a)!
        var session = phone.handshake(replica: ReplicaID(rawValue: 0xA7A), scope: .user("ana"), authority: c.authority)
        #expect(session != nil, "ana's certificate authenticates")
        phone.send(.vectors([StreamVector(stream: .user("bo"), vector: VersionVector())]))
        var sawForbidden = false
        while let m = phone.receive() {
            if case .error(let code, _) = m { sawForbidden = code == .forbidden; break }
        }
        #expect(sawForbidden)
        _ = session?.abort(.shutdown, "done")

        // 4. A per-user peer writing public events: refused, nothing stored.
        let phone2 = RawPeer(a)!
        _ = phone2.handshake(replica: ReplicaID(rawValue: 0xA7B), scope: .user("ana"), authority: c.authority)
        let forged = Event(stream: .public, id: EventID(origin: Origin(replica: ReplicaID(rawValue: 0xA7B), epoch: 1), counter: 1),
                           hlc: HLC(rawValue: 1), body: .reading(Reading(source: "x", sensor: "y", time: 1, values: [])))
        phone2.send(.events(batch: 1, events: [forged]))
        var forbidden2 = false
        while let m = phone2.receive() { if case .error(let code, _) = m { forbidden2 = code == .forbidden; break } }
        #expect(forbidden2)

        // 4b. An authenticated peer's events injected in a plain frame (as an attacker on the path would):
        // refused, nothing stored.
        let phone3 = RawPeer(a)!
        _ = phone3.handshake(replica: ReplicaID(rawValue: 0xA7C), scope: .cluster, authority: c.authority)
        phone3.send(.vectors([]))
        phone3.sendPlain(.events(batch: 1, events: [forged]))
        #expect(phone3.closedByPeer())

        // 5. Garbage, an oversized length prefix, a truncated frame: each connection is closed.
        let garbage = RawPeer(a)!
        garbage.send(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        #expect(garbage.closedByPeer())
        let huge = RawPeer(a)!
        huge.send([0xff, 0xff, 0xff, 0xff, 0x01])
        #expect(huge.closedByPeer())
        let truncated = RawPeer(a)!
        truncated.send(Array(Frame.encode(.ping(1)).prefix(6)) as [UInt8])   // then silence: closed by the handshake timeout
        #expect(truncated.closedByPeer())

        // The node still serves its real peer.
        #expect(c.cli("a", ["favourite", "add", "second"]).code == 0)
        #expect(waitUntil(seconds: 10) { c.fingerprint("b") == c.fingerprint("a") })
        #expect(c.count("a") == 2)
        let log = c.logText("a")
        #expect(log.contains("authentication") && log.contains("forbidden"))
    }
}
