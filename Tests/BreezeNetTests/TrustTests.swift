import Testing
import BreezeCore
import BreezeStore
import BreezeSync
import BreezeCrypto
import BreezeTestSupport
@preconcurrency import Glibc
import Foundation

/// Issue 29: trust that lasts a year, against real `breeze node` processes. A certificate that expires or a
/// device that is revoked does not stop the sync of what was signed while its key was good; what one
/// unverifiable relayed event cannot be taken is skipped, not the batch; a refusal in clear names nobody; a
/// replica id is bound to one key.
@Suite(.serialized)
struct TrustTests {
    static func favourites(_ c: Cluster, _ name: String, user: String = "ana") -> Set<String> {
        let out = c.cli(name, ["--user", user, "state", "--json"]).out
        guard let data = out.data(using: .utf8), let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let favs = json["favourites"] as? [String] else { return [] }
        return Set(favs.map { $0.hasPrefix("purpleair:") ? String($0.dropFirst(10)) : $0 })
    }

    /// A certificate for `name`'s device key, of scope `scope`, valid from `from` to `until` (milliseconds since
    /// 1970), signed by the cluster authority; written to `<name>.cert` (replacing any).
    @discardableResult
    static func certify(_ c: Cluster, _ name: String, scope: Scope, from: UInt64, until: UInt64) -> String {
        let (replica, key) = c.deviceKey(name)
        let cert = try! Certificate.issue(role: .device, key: Digest.bytes(hex: key)!, replica: ReplicaID(hex: replica)!, scope: scope,
                                          notBefore: from, notAfter: until, signer: c.authority.key)
        unlink(c.cert(name))
        writeFileBytes(c.cert(name), Array(CertificateChain.text([cert]).utf8))
        return c.cert(name)
    }

    /// Registers a sensor on a cluster replica (favourites name registered sensors), synced to every device.
    static func register(_ c: Cluster, _ name: String, _ sensors: [String]) {
        let csv = c.dir.file("sensors-\(name).csv")
        writeFileBytes(csv, Array(("id,name,latitude,longitude,timezone\n" + sensors.map { "\($0),S \($0),42.7,-73.7,America/New_York\n" }.joined()).utf8))
        #expect(c.cli(name, ["import", "sensors-csv", csv]).code == 0)
    }

    @Test func eventsSignedWhileACertificateHeldReachNewReplicasAfterItExpires() throws {
        let c = Cluster()
        for n in ["server", "tablet", "phone", "server2"] { _ = c.cli(n, ["init"]) }
        Self.register(c, "server", ["101", "102", "103", "201"])
        let server = c.start("server")
        // ana's tablet with a certificate valid for a few seconds: it syncs its edits while it holds.
        let now = SystemClock.nowMillis()
        let until = now + 6_000
        Self.certify(c, "tablet", scope: .user("ana"), from: now - 60_000, until: until)
        c.start("tablet", peers: [server], scope: .user("ana"))
        #expect(waitUntil(seconds: 20) { FailoverTests.vectors(c, "tablet")[.public] != nil })
        for s in ["101", "102", "103"] { #expect(c.cli("tablet", ["--user", "ana", "favourite", "add", s]).code == 0) }
        #expect(waitUntil(seconds: 20) { Self.favourites(c, "server") == ["101", "102", "103"] })
        c.stop("tablet")
        // The certificate lapses. A new phone of ana's and a new cluster replica each get the tablet's events,
        // signed while it held, and keep syncing.
        while SystemClock.nowMillis() <= until + 1_000 { usleep(200_000) }
        c.start("phone", peers: [server], scope: .user("ana"))
        c.start("server2", peers: [server])
        #expect(waitUntil(seconds: 30) { Self.favourites(c, "phone") == ["101", "102", "103"] },
                "phone: \(Self.favourites(c, "phone")); its log:\n\(c.logText("phone").suffix(1500))")
        #expect(waitUntil(seconds: 30) { Self.favourites(c, "server2") == ["101", "102", "103"] })
        #expect(c.cli("phone", ["--user", "ana", "favourite", "add", "201"]).code == 0)
        #expect(waitUntil(seconds: 30) { Self.favourites(c, "server2").contains("201") }, "the phone keeps syncing")
        for n in ["phone", "server2"] { #expect(c.verify(n).code == 0, "\(n): \(c.verify(n).out)") }
        print("TRUST part=expired phone=\(Self.favourites(c, "phone").sorted()) server2=\(Self.favourites(c, "server2").sorted())")
    }

    @Test func aDeviceRenewsItsCertificateOverTheWireAndKeepsSyncingAcrossTheOldOnesExpiry() throws {
        let c = Cluster()
        for n in ["server", "phone"] { _ = c.cli(n, ["init"]) }
        Self.register(c, "server", ["401", "402"])
        let server = c.start("server")
        // ana's phone with a certificate of about a minute, ending in 12 s: within its renewal window (a third of
        // its lifetime) from the start, so its node asks the authority for a new one over its sealed session.
        let now = SystemClock.nowMillis()
        let until = now + 12_000
        Self.certify(c, "phone", scope: .user("ana"), from: now - 50_000, until: until)
        c.start("phone", peers: [server], scope: .user("ana"))
        #expect(waitUntil(seconds: 20) { c.cli("server", ["log", "--stream", "user:ana", "--json"]).out.contains("device.renew") },
                "the request reached the server: \(c.logText("phone").suffix(600))")
        // The authority's holder answers every request in the cluster's log (here with the cluster authority).
        let renew = runProgramWithErrors(c.breeze, ["--db", c.db("server"), "enrol", "--renew", "--signer", c.authority.keyFile, "--days", "1"])
        #expect(renew.code == 0 && renew.out.contains("renewed device"), "\(renew.out) \(renew.err)")
        // The answer travels to the phone, whose node installs it: its status and its --cert file show the new expiry.
        #expect(waitUntil(seconds: 20) { c.logText("phone").contains("certificate renewed") }, "\(c.logText("phone").suffix(800))")
        let status = c.cli("phone", ["status", "--json"]).out
        #expect(!status.contains(ISOTime.format(millis: Int64(until))) && status.contains("\"notAfter\""), "\(status)")
        let file = String(decoding: readFileBytes(c.cert("phone")), as: UTF8.self)
        let chain = try CertificateChain.parse(text: file)
        #expect(chain.first.map { $0.notAfter > until + 3_600_000 } == true, "the --cert file holds the renewed certificate")
        // Past the old certificate's expiry, the phone's node restarts from its files and syncs.
        while SystemClock.nowMillis() <= until + 1_000 { usleep(200_000) }
        c.stop("phone")
        c.start("phone", peers: [server], scope: .user("ana"))
        #expect(c.cli("phone", ["--user", "ana", "favourite", "add", "402"]).code == 0)
        #expect(waitUntil(seconds: 30) { Self.favourites(c, "server").contains("402") }, "\(c.logText("phone").suffix(800)) \(c.logText("server").suffix(800))")
        print("TRUST part=renewal old_not_after=\(until) new_not_after=\(chain.first?.notAfter ?? 0)")
    }

    @Test func copiesArePrivateAndANodeOnADatabaseOthersCanReadSaysSo() throws {
        let c = Cluster()
        _ = c.cli("server", ["init"])
        Self.register(c, "server", ["501"])
        chmod(c.db("server"), 0o644)
        c.start("server")
        #expect(waitUntil(seconds: 10) { c.logText("server").contains("is readable by other users") }, "\(c.logText("server"))")
        let out = c.dir.file("export.jsonl")
        #expect(c.cli("server", ["export", "--out", out]).code == 0)
        #expect(fileMode(out) == 0o600, "the export is private: mode \(String(fileMode(out), radix: 8))")
        #expect(c.verify("server").code == 0)
    }

    @Test func aRevokedDevicesEventsBeforeItsRevocationStillTravelAndNoneAfterAndTheRelayKeepsSyncing() throws {
        let c = Cluster()
        for n in ["server", "tablet", "laptop", "phone"] { _ = c.cli(n, ["init"]) }
        Self.register(c, "server", ["301", "302", "303", "304"])
        let server = c.start("server")
        // The tablet syncs with the server and with ana's laptop directly (the laptop knows no server yet).
        let tablet = c.start("tablet", peers: [server], scope: .user("ana"))
        #expect(waitUntil(seconds: 20) { FailoverTests.vectors(c, "tablet")[.public] != nil })
        c.start("laptop", peers: [tablet], scope: .user("ana"))
        #expect(c.cli("tablet", ["--user", "ana", "favourite", "add", "301"]).code == 0)
        #expect(waitUntil(seconds: 20) { Self.favourites(c, "server") == ["301"] && Self.favourites(c, "laptop") == ["301"] })
        // The tablet is stolen: the cluster authority revokes it on the server. The thief's edit after that
        // reaches only the laptop, which has not heard of the revocation.
        let r = c.cli("server", ["authority", "revoke", "--signer", c.authority.keyFile, "--cert", c.cert("tablet"), "--reason", "stolen"])
        #expect(r.code == 0, "\(r.out)")
        usleep(50_000)
        #expect(c.cli("tablet", ["--user", "ana", "favourite", "add", "302"]).code == 0)
        #expect(waitUntil(seconds: 20) { Self.favourites(c, "laptop") == ["301", "302"] })
        c.stop("tablet")
        // The laptop now meets the server: it relays the tablet's events with their signatures. The one made
        // after the revocation is skipped; the laptop's own edit and everything else goes through.
        c.stop("laptop")
        c.start("laptop", peers: [server], scope: .user("ana"))
        #expect(c.cli("laptop", ["--user", "ana", "favourite", "add", "303"]).code == 0)
        #expect(waitUntil(seconds: 30) { Self.favourites(c, "server") == ["301", "303"] },
                "server: \(Self.favourites(c, "server")); its log:\n\(c.logText("server").suffix(2000))")
        #expect(c.logText("server").contains("skipped"), "the server says what it skipped")
        // A new phone gets what was signed while the tablet's key was good, and none of the thief's.
        c.start("phone", peers: [server], scope: .user("ana"))
        #expect(waitUntil(seconds: 30) { Self.favourites(c, "phone") == ["301", "303"] }, "phone: \(Self.favourites(c, "phone"))")
        #expect(c.cli("laptop", ["--user", "ana", "favourite", "add", "304"]).code == 0)
        #expect(waitUntil(seconds: 30) { Self.favourites(c, "phone") == ["301", "303", "304"] }, "the laptop keeps syncing")
        print("TRUST part=revoked server=\(Self.favourites(c, "server").sorted()) phone=\(Self.favourites(c, "phone").sorted())")
    }

    @Test func aFarFutureStampIsSkippedFromAClusterPeerAndRefusedOnImportAndTheUsersNextEditWins() throws {
        let c = Cluster()
        for n in ["server", "phone"] { _ = c.cli(n, ["init"]) }
        let server = c.start("server")
        c.start("phone", peers: [server], scope: .user("ana"))
        #expect(c.cli("phone", ["--user", "ana", "unit", "set", "fahrenheit"]).code == 0)
        #expect(waitUntil(seconds: 20) { c.cli("server", ["--user", "ana", "state", "--json"]).out.contains("fahrenheit") })
        // A cluster peer (hostile or broken) relays "celsius" stamped as far ahead as a clock goes.
        let far = HLC(physicalMillis: (1 << 48) - 1, logical: 0)
        let origin = Origin(replica: ReplicaID(rawValue: 0xFA2F_0001), epoch: 1)
        let event = Event(stream: .user("ana"), id: EventID(origin: origin, counter: 1), hlc: far, body: .unitSet(.celsius))
        guard let peer = RawPeer(server), peer.handshake(replica: ReplicaID(rawValue: 0xC1A5_0001), scope: .cluster, authority: c.authority) != nil else {
            Issue.record("no session")
            return
        }
        peer.send(.vectors([]))
        peer.send(.events(batch: 1, events: [event]))
        #expect(waitUntil(seconds: 20) { c.logText("server").contains("skipped") }, "the server skips it")
        // The same through `import jsonl`: refused, naming the line.
        let file = c.dir.file("far.jsonl")
        writeFileBytes(file, Array((EventLineForTests.encode(event) + "\n").utf8))
        let imported = runProgramWithErrors(c.breeze, ["--db", c.db("server"), "import", "jsonl", file, "--trust-unsigned"])
        #expect(imported.code == 1 && imported.err.contains("ahead"), "\(imported.out) \(imported.err)")
        // The user's next edit wins everywhere.
        #expect(c.cli("phone", ["--user", "ana", "unit", "set", "celsius"]).code == 0)
        #expect(c.cli("phone", ["--user", "ana", "unit", "set", "fahrenheit"]).code == 0)
        #expect(waitUntil(seconds: 20) { c.cli("server", ["--user", "ana", "state", "--json"]).out.contains("\"fahrenheit\"") })
        #expect(c.cli("phone", ["--user", "ana", "state", "--json"]).out.contains("\"fahrenheit\""))
    }

    @Test func aRefusedHandshakeNamesNobodyInClear() throws {
        let c = Cluster()
        _ = c.cli("server", ["init"])
        let server = c.start("server")
        // A device whose certificate expired an hour ago: the server refuses it after reading its chain.
        let device = Ed25519.KeyPair.generate()
        let replica = ReplicaID(rawValue: 0xE1F1_E1F1_E1F1_E1F1)
        let now = SystemClock.nowMillis()
        let cert = try Certificate.issue(role: .device, key: device.publicKey, replica: replica, scope: .user("ana"),
                                         notBefore: now - 86_400_000, notAfter: now - 3_600_000, signer: c.authority.key)
        // (Credentials as the device made them while its certificate held.)
        let creds = try SyncCredentials(deviceKey: device, chain: [cert], authority: c.authority.key.publicKey, nowMillis: now - 7_200_000)
        guard let p = RawPeer(server) else { Issue.record("connect"); return }
        _ = p.handshake(credentials: creds)
        // Everything the server sent in clear after handshake2: the refusal.
        var seen: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(p.fd, &buf, buf.count, 0)
            if n <= 0 { break }
            seen += buf[0..<n]
        }
        var decoder = FrameDecoder()
        let messages = (try? decoder.feed(seen)) ?? []
        let refusal = messages.compactMap { m -> String? in if case .error(let code, let text) = m { return "\(code): \(text)" } else { return nil } }.first
        #expect(refusal != nil, "the server refused in a plain error frame: \(messages)")
        let text = String(decoding: seen, as: UTF8.self)
        for secret in [replica.description, "ana", "expired", CertificateChain.fingerprint(device.publicKey)] {
            #expect(!(refusal ?? "").contains(secret) && !text.contains(secret), "the refusal in clear names '\(secret)': \(refusal ?? text)")
        }
        #expect(waitUntil(seconds: 10) { c.logText("server").contains("expired") }, "the reason is in the server's log")
        print("TRUST part=refusal-in-clear refusal=\(refusal ?? "-")")
    }

    @Test func aReplicaIdIsBoundToOneKey() throws {
        let c = Cluster()
        _ = c.cli("server", ["init"])
        let server = c.start("server")
        let replica = ReplicaID(rawValue: 0xB0_0D00_0001)
        // The first key for the replica id is taken and bound.
        guard let first = RawPeer(server), first.handshake(replica: replica, scope: .user("ana"), authority: c.authority) != nil else {
            Issue.record("first key refused")
            return
        }
        first.send(.vectors([]))
        usleep(300_000)
        // A second key certified for the same replica id (by an authority that should not have): refused.
        let second = RawPeer(server)
        let session = second?.handshake(replica: replica, scope: .user("ana"), authority: c.authority)
        let refused = session == nil || (second.map { DeviceAttackTests.closedOrReset($0) } ?? true)
        #expect(refused, "a second key for one replica id")
        #expect(waitUntil(seconds: 10) { c.logText("server").contains("bound to key") }, "\(c.logText("server").suffix(800))")
        // `breeze enrol` refuses it too: the authority's ledger binds the id to the key it certified.
        for n in ["phone"] { _ = c.cli(n, ["init"]) }
        let (id, key) = c.deviceKey("phone")
        let enrol = { (k: String, out: String, extra: [String]) in
            runProgramWithErrors(c.breeze, ["enrol", "--signer", c.authority.keyFile, "--device-key", k, "--replica", id, "--scope", "user:ana",
                                  "--out", c.dir.file(out)] + extra)
        }
        #expect(enrol(key, "p1.cert", []).code == 0)
        #expect(enrol(key, "p2.cert", []).code == 0, "the same key again: a renewal")
        let other = Digest.hex(Ed25519.KeyPair.generate().publicKey)
        let again = enrol(other, "p3.cert", [])
        #expect(again.code == 1 && again.err.contains("bound to one key"), "\(again.err)")
        #expect(enrol(other, "p4.cert", ["--replace"]).code == 0, "after a revocation, with --replace")
        var st = stat()
        #expect(stat(c.authority.keyFile + ".issued", &st) == 0 && st.st_mode & 0o777 == 0o600, "the ledger is private")
    }
}

/// `breeze export`'s line for an event (`EventLine.encode` is the CLI's; this is the same JSON, built here).
enum EventLineForTests {
    static func encode(_ e: Event) -> String {
        let payload = Data(e.payload).base64EncodedString()
        return #"{"id":"\#(e.id.description)","stream":"\#(e.stream.description)","hlc":"\#(e.hlc.description)","type":"\#(e.type)","version":\#(e.schemaVersion),"payload":"\#(payload)","hash":"\#(e.hashHex)"}"#
    }
}
