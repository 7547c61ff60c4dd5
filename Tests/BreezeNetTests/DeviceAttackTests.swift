import Testing
import BreezeCore
import BreezeStore
import BreezeSync
import BreezeCrypto
import BreezeTestSupport
@preconcurrency import Glibc
import Foundation

/// The attacks of issue 18 that an authenticated device (or cluster peer) can make, against real nodes on
/// 127.0.0.1 (`Protocol/sync.md` 6.6). Each prints what was attempted and what was stored.
@Suite(.serialized)
struct DeviceAttackTests {
    static let anaStreams: [StreamID] = [.user("ana"), .health("ana")]
    /// ana's tablet: a real device of hers, enrolled by the cluster authority, in the attacker's hands.
    static let tablet = ReplicaID(rawValue: 0x7AB1_E700_0000_0001)

    static func origin(_ c: Cluster, _ name: String) -> Origin {
        let log = try! EventLog.open(at: c.db(name))
        defer { log.close() }
        return log.origin
    }

    static func favourite(_ origin: Origin, _ counter: UInt64, _ sensor: String, stream: StreamID = .user("ana"),
                          hlc: HLC = HLC(physicalMillis: SystemClock.nowMillis(), logical: 0)) -> Event {
        Event(stream: stream, id: EventID(origin: origin, counter: counter), hlc: hlc, body: .favouriteAdd(sensor: sensor))
    }

    /// Opens a session as `replica` with `scope`, sends `events` in batches of 2,000 (stopping once the node
    /// closes), and says whether the node closed the session.
    static func attack(_ address: String, _ c: Cluster, as replica: ReplicaID, scope: Scope, _ events: [Event]) -> Bool {
        guard let p = RawPeer(address), p.handshake(replica: replica, scope: scope, authority: c.authority) != nil else {
            Issue.record("the attacker could not open a session")
            return false
        }
        var batch: UInt64 = 0
        for start in stride(from: 0, to: events.count, by: 2000) {
            batch += 1
            p.send(.events(batch: batch, events: Array(events[start..<min(events.count, start + 2000)])))
            var pollfd = Glibc.pollfd(fd: p.fd, events: Int16(POLLIN), revents: 0)
            if poll(&pollfd, 1, 50) > 0 { break }     // the node answered (its error) and is closing
        }
        return Self.closedOrReset(p)
    }

    /// True when the node ends the connection within the timeout: a close, or a reset (the node closed while
    /// a batch the attacker sent after its refusal was still unread).
    static func closedOrReset(_ p: RawPeer) -> Bool {
        while true {
            var buf = [UInt8](repeating: 0, count: 4096)
            let n = recv(p.fd, &buf, buf.count, 0)
            if n == 0 { return true }
            if n < 0 { return errno == ECONNRESET }
        }
    }

    @Test func aDeviceCannotWriteUnderAnotherOriginMakeUpOriginsOrStampTheFarFuture() throws {
        let c = Cluster()
        for n in ["server", "server2", "phone"] { _ = c.cli(n, ["init"]) }
        let server = c.start("server")
        c.start("server2", peers: [server])
        let serverOrigin = Self.origin(c, "server"), phoneOrigin = Self.origin(c, "phone")
        var made = Origin(replica: ReplicaID(rawValue: 1), epoch: 1)
        let attacks: [(String, [Event])] = [
            // (a) under the server's origin and under the phone's, with the phone's next counter, while it is offline
            ("server-origin", [Self.favourite(serverOrigin, 1, "999999")]),
            ("phone-origin", [Self.favourite(phoneOrigin, 1, "999999")]),
            // (b) one event each from 310,000 made-up origins
            ("made-up-origins", (0..<310_000).map { i in
                made = Origin(replica: ReplicaID(rawValue: 0xBAD0_0000 + UInt64(i)), epoch: 1)
                return Self.favourite(made, 1, "999999")
            }),
            // a stamp of 2^64 - 1 under the tablet's own origin
            ("far-future", [Self.favourite(Origin(replica: Self.tablet, epoch: 1), 1, "999999", hlc: HLC(rawValue: .max))]),
        ]
        var lines: [String] = []
        for (name, events) in attacks {
            let closed = Self.attack(server, c, as: Self.tablet, scope: .user("ana"), events)
            let stored = SealedWireTests.events(c, "server", streams: Self.anaStreams).count
            #expect(closed, "\(name): the node keeps the session")
            #expect(stored == 0, "\(name): \(stored) events stored")
            lines.append("\(name)=attempted:\(events.count),stored:\(stored),closed:\(closed)")
        }
        // The phone comes back and makes its real edit; another user's edit is made on the server; every
        // replica converges, and nothing of the attacker's is anywhere.
        c.start("phone", peers: [server], scope: .user("ana"))
        #expect(c.cli("phone", ["--user", "ana", "favourite", "add", "131075"]).code == 0)
        #expect(c.cli("server", ["--user", "bo", "favourite", "add", "777"]).code == 0)
        let converged = waitUntil(seconds: 20) {
            let p = SealedWireTests.events(c, "phone", streams: Self.anaStreams)
            return p.count == 1 && p == SealedWireTests.events(c, "server", streams: Self.anaStreams)
                && p == SealedWireTests.events(c, "server2", streams: Self.anaStreams)
                && SealedWireTests.events(c, "server2", streams: [.user("bo")]).count == 1
        }
        #expect(converged, "server log: \(c.logText("server"))")
        for n in ["server", "server2", "phone"] {
            let state = c.cli(n, ["--user", "ana", "state", "--json"]).out
            #expect(state.contains("131075") && !state.contains("999999"), "\(n): \(state)")
        }
        print("DEVICE part=forged-origins \(lines.joined(separator: " ")) converged=\(converged)")
    }

    @Test func aDevicesMadeUpIncarnationsAreBoundedAndAClusterPeerCannotWriteUnderTheReceiversOrigin() throws {
        let c = Cluster()
        _ = c.cli("server", ["init"])
        let server = c.start("server")
        // The tablet's own replica id with 5,000 made-up epochs: the node takes the first 4,096 and closes.
        let epochs = (1...5000).map { Self.favourite(Origin(replica: Self.tablet, epoch: UInt32($0)), 1, "e\($0)") }
        let closed = Self.attack(server, c, as: Self.tablet, scope: .user("ana"), epochs)
        let stored = SealedWireTests.events(c, "server", streams: Self.anaStreams).count
        #expect(closed && stored <= EventLog.maxOriginsPerReplica, "\(stored) incarnations stored")
        // A cluster peer relays every origin, but never the receiver's current one: its counters are forged.
        let own = Self.origin(c, "server")
        let before = c.count("server")
        let closed2 = Self.attack(server, c, as: ReplicaID(rawValue: 0xC1A5), scope: .cluster,
                                  [Self.favourite(own, 1, "999999"), Self.favourite(own, 2, "999999")])
        #expect(closed2 && c.count("server") == before)
        #expect(c.cli("server", ["--user", "ana", "favourite", "add", "mine"]).code == 0)
        #expect(!c.cli("server", ["--user", "ana", "state", "--json"]).out.contains("999999"))
        print("DEVICE part=origin-bounds epochs_attempted=5000 epochs_stored=\(stored) own_origin_attempted=2 own_origin_stored=\(c.count("server") - before - 1)")
    }

    /// 990 bytes of repeated `vectors` made a server send 510 MB in 5 s: each restarted its scan.
    @Test func repeatedVectorsDoNotMakeANodeResendItsLog() throws {
        let c = Cluster()
        _ = c.cli("a", ["init"])
        let rows = 20_000
        #expect(runProgram(c.torture, ["append", "--db", c.db("a"), "--count", "\(rows)", "--batch", "10000", "--stream", "public"]).code == 0)
        let a = c.start("a")
        let p = RawPeer(a)!
        #expect(p.handshake(replica: ReplicaID(rawValue: 0xF10D), scope: .cluster, authority: c.authority) != nil)
        let empty = Message.vectors([StreamVector(stream: .public, vector: VersionVector())])
        var tv = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(p.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        let frames = p.sealed(Array(repeating: empty, count: 10))
        p.send(frames)
        // Read and acknowledge for 4 s, as a fast peer would, repeating the vectors every 100 ms (within the
        // control budget, so only the vectors rule can stop the rescans).
        var batches: UInt64 = 0, bytes = 0, vectorsSent = 10, vectorsBytes = frames.count
        let t0 = monotonic()
        var lastVectors = t0
        while monotonic() - t0 < 4 {
            if monotonic() - lastVectors > 0.1 {
                let f = p.sealed([empty])
                p.send(f)
                vectorsSent += 1
                vectorsBytes += f.count
                lastVectors = monotonic()
            }
            guard let m = p.receive() else { continue }     // (a 100 ms read timeout: the vectors go on)
            switch m {
            case .packed(let payload): batches += 1; bytes += payload.count
            case .events(_, let e): batches += 1; bytes += e.reduce(0) { $0 + $1.encoded.count }
            default: continue
            }
            p.send(.ack(batch: batches, inserted: 0, duplicates: 0))
        }
        let received = p.session?.receivedEvents ?? 0
        print("DEVICE part=vectors-repeat vectors_sent=\(vectorsSent) vectors_bytes=\(vectorsBytes) log_events=\(rows) events_received=\(received) bytes_received=\(bytes) ratio=\(fmt(Double(received) / Double(rows)))")
        #expect(received >= rows, "the log is sent once")
        #expect(received < rows * 3 / 2, "\(vectorsSent) repeated vectors made the node send its log \(fmt(Double(received) / Double(rows))) times")
    }
}

/// Revocation (issue 18): a lost tablet is cut off alone, within a second of its revocation reaching a node,
/// while ana's phone keeps syncing.
@Suite(.serialized)
struct RevocationNodeTests {
    @Test func aRevokedDeviceIsClosedWithinASecondAndRefusedWhileTheOthersKeepSyncing() throws {
        let c = Cluster()
        for n in ["server", "server2", "phone", "tablet"] { _ = c.cli(n, ["init"]) }
        let server = c.start("server")
        let server2 = c.start("server2", peers: [server])
        c.start("phone", peers: [server], scope: .user("ana"))
        c.start("tablet", peers: [server], scope: .user("ana"))
        #expect(c.cli("tablet", ["--user", "ana", "favourite", "add", "from-tablet"]).code == 0)
        #expect(waitUntil(seconds: 10) { c.cli("phone", ["--user", "ana", "state", "--json"]).out.contains("from-tablet") })
        // The cluster authority revokes the tablet on the server's database, beside the running node.
        let r = c.cli("server", ["authority", "revoke", "--signer", c.authority.keyFile, "--cert", c.cert("tablet"), "--reason", "lost"])
        #expect(r.code == 0, "\(r.out)")
        let t0 = monotonic()
        let closed = waitUntil(seconds: 5) { c.logText("server").contains("closing: device") && c.logText("server").contains("was revoked") }
        let seconds = monotonic() - t0
        #expect(closed && seconds < 30, "the tablet's session closed after \(fmt(seconds)) s")
        // The revocation reaches server2 too, by sync, which would refuse the tablet as well.
        #expect(waitUntil(seconds: 10) { c.logText("server2").contains("enforced from now") })
        // The phone keeps syncing; the tablet's new edits no longer reach anyone, and it backs off.
        #expect(c.cli("phone", ["--user", "ana", "favourite", "add", "after-revocation"]).code == 0)
        #expect(waitUntil(seconds: 10) { c.cli("server2", ["--user", "ana", "state", "--json"]).out.contains("after-revocation") })
        #expect(c.cli("tablet", ["--user", "ana", "favourite", "add", "stolen-edit"]).code == 0)
        let refusalsBefore = c.logText("tablet").components(separatedBy: "revoked").count
        usleep(3_000_000)
        let refusals = c.logText("tablet").components(separatedBy: "revoked").count - refusalsBefore
        for n in ["server", "server2", "phone"] {
            #expect(!c.cli(n, ["--user", "ana", "state", "--json"]).out.contains("stolen-edit"), "\(n)")
        }
        #expect(refusals <= 8, "the refused tablet redialled \(refusals) times in 3 s")
        // The tablet turns to the second server, which had the revocation by sync only: refused there too,
        // and its stolen edit still reaches nobody.
        c.stop("tablet")
        let server2RefusalsBefore = c.logText("server2").components(separatedBy: "was revoked").count
        c.start("tablet", peers: [server2], scope: .user("ana"))
        #expect(waitUntil(seconds: 10) { c.logText("server2").components(separatedBy: "was revoked").count > server2RefusalsBefore },
                "server2 refused the revoked tablet")
        usleep(1_000_000)
        for n in ["server", "server2", "phone"] {
            #expect(!c.cli(n, ["--user", "ana", "state", "--json"]).out.contains("stolen-edit"), "\(n) after the tablet dialled server2")
        }
        print("DEVICE part=revocation closed_after_s=\(fmt(seconds)) tablet_refusals_in_3s=\(refusals) stolen_edits_stored=0 phone_synced=true")
    }
}

/// Revocations at the edges (issue 18): one that reaches a node while a device's handshake runs, and
/// malformed or forged ones a cluster peer sends.
@Suite(.serialized)
struct RevocationEdgeTests {
    static let tablet = DeviceAttackTests.tablet

    /// The revocation of ana's stolen tablet reaches the server after the tablet's `handshake1` and before
    /// its `handshake3`: the handshake fails, the tablet never authenticates and stores nothing, and the
    /// phone keeps syncing.
    @Test func aRevocationArrivingDuringAHandshakeFailsIt() throws {
        let c = Cluster()
        for n in ["server", "phone"] { _ = c.cli(n, ["init"]) }
        let server = c.start("server")
        c.start("phone", peers: [server], scope: .user("ana"))
        let creds = c.authority.credentials(replica: Self.tablet, scope: .user("ana"))
        let p = try #require(RawPeer(server))
        var t0 = 0.0
        let handshake = p.handshake(credentials: creds, beforeHandshake3: {
            // The server now waits for handshake3; the cluster authority revokes the tablet beside it.
            let r = c.cli("server", ["authority", "revoke", "--signer", c.authority.keyFile, "--device-key", Digest.hex(creds.deviceKey.publicKey),
                                     "--replica", Self.tablet.description, "--reason", "stolen"])
            #expect(r.code == 0, "\(r.out)")
            // (within the server's 5 s handshake timeout, which started at handshake1)
            #expect(waitUntil(seconds: 3) { c.logText("server").contains("enforced from now") }, "\(c.logText("server"))")
            t0 = monotonic()
        })
        #expect(handshake != nil, "the tablet's side of the handshake completes")
        // The tablet tries to write right away, as if it were in.
        let stolen = Event(stream: .user("ana"), id: EventID(origin: Origin(replica: Self.tablet, epoch: 1), counter: 1),
                           hlc: HLC(physicalMillis: SystemClock.nowMillis(), logical: 0), body: .favouriteAdd(sensor: "stolen-edit"))
        p.send(.events(batch: 1, events: [stolen]))
        let ended = DeviceAttackTests.closedOrReset(p)
        let seconds = monotonic() - t0
        let log = c.logText("server")
        #expect(ended && seconds < 30, "the server ended the connection after \(fmt(seconds)) s")
        #expect(log.contains("was revoked"), "\(log)")
        let authenticated = log.contains("authenticated replica \(Self.tablet)")
        #expect(!authenticated, "the revoked tablet authenticated")
        // The phone keeps syncing; nothing of the tablet's is stored.
        #expect(c.cli("phone", ["--user", "ana", "favourite", "add", "after-revocation"]).code == 0)
        #expect(waitUntil(seconds: 10) { c.cli("server", ["--user", "ana", "state", "--json"]).out.contains("after-revocation") })
        let fromTablet = SealedWireTests.events(c, "server", streams: DeviceAttackTests.anaStreams).keys.filter { $0.contains(Self.tablet.description) }
        #expect(fromTablet.isEmpty, "\(fromTablet)")
        print("DEVICE part=revocation-mid-handshake refused_after_s=\(fmt(seconds)) authenticated=\(authenticated) stored=\(fromTablet.count) phone_synced=true")
    }

    /// A cluster peer (buggy or hostile) sends `device.revoke` events that do not decode, are of a schema
    /// version nobody knows, are signed by a key that is not the authority, or carry a broken signature, each
    /// naming ana's phone: none is enforced, each is logged with its reason, the phone keeps syncing, and a
    /// real revocation sent after them still cuts off the tablet within a second.
    @Test func malformedAndForgedRevocationsAreNotEnforcedAndDoNotStopARealOne() throws {
        let c = Cluster()
        for n in ["server", "phone", "tablet"] { _ = c.cli(n, ["init"]) }
        let server = c.start("server")
        c.start("phone", peers: [server], scope: .user("ana"))
        c.start("tablet", peers: [server], scope: .user("ana"))
        #expect(waitUntil(seconds: 10) { c.logText("server").components(separatedBy: "authenticated replica").count == 3 })
        let phone = c.deviceKey("phone"), tablet = c.deviceKey("tablet")
        let phoneKey = try #require(Digest.bytes(hex: phone.key)), tabletKey = try #require(Digest.bytes(hex: tablet.key))
        let phoneID = try #require(ReplicaID(hex: phone.replica)), tabletID = try #require(ReplicaID(hex: tablet.replica))
        let now = SystemClock.nowMillis()
        let forger = Ed25519.KeyPair.generate()
        var broken = Revocation.sign(key: phoneKey, replica: phoneID, revokedAtMillis: now, reason: "lost", signer: c.authority.key)
        broken.signature[7] ^= 0x01
        let bad: [(name: String, type: String, version: UInt16, payload: [UInt8])] = [
            ("undecodable", "device.revoke", 1, Array(phoneKey.prefix(20))),
            ("unknown-version", "device.revoke", 9, phoneKey),
            ("forged-signer", "device.revoke", 1, EventBody.revocation(Revocation.sign(key: phoneKey, replica: phoneID, revokedAtMillis: now,
                                                                                       reason: "lost", signer: forger)).encode().payload),
            ("broken-signature", "device.revoke", 1, EventBody.revocation(broken).encode().payload),
        ]
        let origin = Origin(replica: ReplicaID(rawValue: 0xC1A5_0000_0000_0B0D), epoch: 1)
        var events = bad.enumerated().map { i, b in
            Event(stream: .public, id: EventID(origin: origin, counter: UInt64(i + 1)), hlc: HLC(physicalMillis: now, logical: UInt16(i)),
                  type: b.type, schemaVersion: b.version, payload: b.payload)
        }
        let peer = try #require(RawPeer(server))
        #expect(peer.handshake(replica: origin.replica, scope: .cluster, authority: c.authority) != nil)
        peer.send(.events(batch: 1, events: events))
        #expect(waitUntil(seconds: 5) { c.logText("server").components(separatedBy: "not enforced").count - 1 == bad.count },
                "\(c.logText("server"))")
        // The phone is still in: its session stays open and its edits arrive.
        #expect(c.cli("phone", ["--user", "ana", "favourite", "add", "still-syncing"]).code == 0)
        #expect(waitUntil(seconds: 10) { c.cli("server", ["--user", "ana", "state", "--json"]).out.contains("still-syncing") })
        // Then a real revocation of the tablet from the same peer: enforced, and the tablet is closed at once.
        let real = Revocation.sign(key: tabletKey, replica: tabletID, revokedAtMillis: now, reason: "stolen", signer: c.authority.key)
        events = [Event(stream: .public, id: EventID(origin: origin, counter: UInt64(bad.count + 1)),
                        hlc: HLC(physicalMillis: now, logical: 9), body: .revocation(real))]
        let t0 = monotonic()
        peer.send(.events(batch: 2, events: events))
        let closed = waitUntil(seconds: 5) { c.logText("server").contains("closing: device") && c.logText("server").contains("was revoked") }
        let seconds = monotonic() - t0
        #expect(closed && seconds < 30, "the tablet's session closed after \(fmt(seconds)) s")
        let log = c.logText("server")
        for why in ["does not decode", "schema version 9", "not the cluster authority", "the signature does not verify"] {
            #expect(log.contains(why), "the server's log gives no reason '\(why)'")
        }
        #expect(!log.contains("closing: device \(phoneID)") && !log.contains("replica \(phoneID)) enforced"), "\(log)")
        #expect(c.cli("phone", ["--user", "ana", "favourite", "add", "after-the-real-one"]).code == 0)
        #expect(waitUntil(seconds: 10) { c.cli("server", ["--user", "ana", "state", "--json"]).out.contains("after-the-real-one") })
        #expect(c.verify("server").code == 0, "\(c.verify("server").out)")
        print("DEVICE part=malformed-revocations sent=\(bad.count) not_enforced_logged=\(log.components(separatedBy: "not enforced").count - 1) phone_synced=true real_one_closed_after_s=\(fmt(seconds))")
    }
}

/// A listener that completes the server side of the handshake with every connection, then refuses the
/// session at once with error 5, as a device once refused a server that dialled it.
final class RefusingListener: @unchecked Sendable {
    // @unchecked Sendable: `accepted` is guarded by `lock`; `fd` is set once before the thread starts.
    let fd: Int32
    let address: String
    private let lock = NSLock()
    private var acceptedCount = 0
    var accepted: Int { lock.withLock { acceptedCount } }

    init(credentials: SyncCredentials) {
        let sock = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = 0
        inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr)
        _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(sock, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        listen(sock, 16)
        var bound = sockaddr_in(), len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &bound) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(sock, $0, &len) } }
        fd = sock
        address = "127.0.0.1:\(UInt16(bigEndian: bound.sin_port))"
        self.credentials = credentials
    }

    private let credentials: SyncCredentials

    /// Accepts and refuses connections on a thread of its own until `stop`.
    func start() {
        let listener = fd, credentials = credentials
        let thread = Thread { [self] in
            while true {
                let conn = Glibc.accept(listener, nil, nil)
                if conn < 0 { return }
                lock.withLock { acceptedCount += 1 }
                Self.refuse(conn, credentials)
                close(conn)
            }
        }
        thread.start()
    }

    private static func refuse(_ conn: Int32, _ credentials: SyncCredentials) {
        var tv = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var s = SyncSession(role: .server, config: SyncSession.Config(credentials: credentials), ephemeralKey: SecureRandom.bytes(32),
                            nowMillis: SystemClock.nowMillis())
        _ = s.start()
        var decoder = FrameDecoder()
        func write(_ actions: [SyncSession.Action]) {
            for case .send(let m) in actions {
                let bytes = Frame.encode(m)
                _ = bytes.withUnsafeBytes { Glibc.send(conn, $0.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) }
            }
        }
        while s.state != .ready && s.state != .closed {
            var buf = [UInt8](repeating: 0, count: 65536)
            let n = recv(conn, &buf, buf.count, 0)
            if n <= 0 { return }
            guard let ms = try? decoder.feed(Array(buf[0..<n])) else { return }
            for m in ms { write(s.receive(m)) }
        }
        write(s.abort(.forbidden, "this session is refused"))
    }

    func stop() { shutdown(fd, Int32(SHUT_RDWR)); close(fd) }
}

@Suite(.serialized)
struct DialBackoffTests {
    /// A node dialled a device that refused it right after the handshake, and redialled about 25 times a second
    /// forever: the backoff restarted at every successful handshake. Now only a session that lasted resets it.
    @Test func aSessionRefusedRightAfterItsHandshakeBacksOff() throws {
        let c = Cluster()
        _ = c.cli("a", ["init"])
        let listener = RefusingListener(credentials: c.authority.credentials(replica: ReplicaID(rawValue: 0xDE71CE), scope: .user("ana")))
        listener.start()
        defer { listener.stop() }
        c.start("a", peers: [listener.address])
        #expect(waitUntil(seconds: 5) { listener.accepted >= 1 })
        let first = listener.accepted
        usleep(4_000_000)
        let redials = listener.accepted - first
        print("DEVICE part=dial-backoff refused_sessions_in_4s=\(redials)")
        // 100 ms doubling to 5 s with jitter: at most about 6 in 4 s (it was about 100).
        #expect(redials >= 1 && redials <= 8, "\(redials) sessions in 4 s")
        c.stop("a")
    }
}
