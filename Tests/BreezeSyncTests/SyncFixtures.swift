import Testing
import BreezeCore
import BreezeCrypto
@testable import BreezeSync

/// Fixed keys, certificates and sessions for the sync tests, and the example of `Protocol/sync.md` section 4.7:
/// every key comes from a fixed seed, so the handshake and sealed frames are the same bytes on every run (the
/// golden files depend on it).
enum Fixtures {
    /// The instant sessions check certificates at, and the validity of the fixtures' certificates.
    static let now: UInt64 = 1_750_000_000_000
    static let notBefore: UInt64 = 1_700_000_000_000, notAfter: UInt64 = 1_800_000_000_000

    static func seed(_ byte: UInt8) -> [UInt8] { [UInt8](repeating: byte, count: 32) }

    /// The cluster authority every fixture replica trusts, and one nobody trusts.
    static let authority = Ed25519.KeyPair(seed: seed(0x41))
    static let foreignAuthority = Ed25519.KeyPair(seed: seed(0x46))
    /// ana's user authority (certified by the cluster authority).
    static let anaAuthority = Ed25519.KeyPair(seed: seed(0x55))

    static let server = ReplicaID(rawValue: 0x5555_6666_7777_8888), phone = ReplicaID(rawValue: 0x1111_2222_3333_4444)

    /// A replica's device key: seed byte 0x50 for the phone, 0x53 for the server, else from the replica id.
    static func deviceKey(_ replica: ReplicaID) -> Ed25519.KeyPair {
        switch replica {
        case phone: return Ed25519.KeyPair(seed: seed(0x50))
        case server: return Ed25519.KeyPair(seed: seed(0x53))
        default: return Ed25519.KeyPair(seed: Digest.blake2b((0..<8).map { UInt8(truncatingIfNeeded: replica.rawValue >> (8 * $0)) }, length: 32))
        }
    }

    static func certificate(_ role: Certificate.Role = .device, key: [UInt8], replica: ReplicaID, scope: Scope,
                            signer: Ed25519.KeyPair, notBefore: UInt64 = notBefore, notAfter: UInt64 = notAfter) -> Certificate {
        try! Certificate.issue(role: role, key: key, replica: replica, scope: scope, notBefore: notBefore, notAfter: notAfter, signer: signer)
    }

    /// ana's user authority certificate.
    static let anaAuthorityCertificate = certificate(.userAuthority, key: anaAuthority.publicKey, replica: ReplicaID(rawValue: 0),
                                                     scope: .user("ana"), signer: authority)

    /// The chain of `replica` with `scope`: signed by the cluster authority, or for a user scope by default by
    /// that user's authority (ana's; another user's is made on the spot).
    static func chain(_ replica: ReplicaID, _ scope: Scope, viaUserAuthority: Bool = true, signer: Ed25519.KeyPair = authority,
                      notBefore: UInt64 = notBefore, notAfter: UInt64 = notAfter) -> [Certificate] {
        let key = deviceKey(replica).publicKey
        if case .user(let id) = scope, viaUserAuthority {
            let userAuthority = id == "ana" ? anaAuthority : Ed25519.KeyPair(seed: Digest.blake2b(Array(id.utf8), length: 32))
            let userCert = id == "ana" && signer == authority ? anaAuthorityCertificate
                : certificate(.userAuthority, key: userAuthority.publicKey, replica: ReplicaID(rawValue: 0), scope: scope, signer: signer)
            return [certificate(key: key, replica: replica, scope: scope, signer: userAuthority, notBefore: notBefore, notAfter: notAfter), userCert]
        }
        return [certificate(key: key, replica: replica, scope: scope, signer: signer, notBefore: notBefore, notAfter: notAfter)]
    }

    static func credentials(_ replica: ReplicaID, _ scope: Scope = .cluster, chain: [Certificate]? = nil,
                            trusting trusted: Ed25519.KeyPair = authority) -> SyncCredentials {
        try! SyncCredentials(deviceKey: deviceKey(replica), chain: chain ?? self.chain(replica, scope),
                             authority: trusted.publicKey, nowMillis: now)
    }

    static func config(_ replica: ReplicaID, _ scope: Scope = .cluster, chain: [Certificate]? = nil,
                       trusting trusted: Ed25519.KeyPair = authority) -> SyncSession.Config {
        var c = SyncSession.Config(credentials: credentials(replica, scope, chain: chain, trusting: trusted))
        c.batchEvents = 3
        c.window = 2
        return c
    }

    static let clientEphemeral = seed(0xE1), serverEphemeral = seed(0xE2)

    static func client(_ config: SyncSession.Config, ephemeral: [UInt8] = clientEphemeral, now: UInt64 = now) -> SyncSession {
        SyncSession(role: .client, config: config, ephemeralKey: ephemeral, nowMillis: now)
    }

    static func server(_ config: SyncSession.Config, ephemeral: [UInt8] = serverEphemeral, now: UInt64 = now) -> SyncSession {
        SyncSession(role: .server, config: config, ephemeralKey: ephemeral, nowMillis: now)
    }

    static func sent(_ actions: [SyncSession.Action]) -> [Message] {
        actions.compactMap { if case .send(let m) = $0 { return m } else { return nil } }
    }

    static func closed(_ actions: [SyncSession.Action]) -> SyncErrorCode? {
        for case .send(let m) in actions { if case .error(let code, _) = m { return code } }
        return nil
    }

    /// Runs the handshake between a client and a server (or as far as it gets); returns both and every
    /// message on the wire, in order.
    static func handshake(_ client: SyncSession, _ server: SyncSession) -> (SyncSession, SyncSession, [Message]) {
        var c = client, s = server
        var wire: [Message] = []
        var toServer = sent(c.start())
        _ = s.start()
        var rounds = 0
        while !toServer.isEmpty && rounds < 4 {
            wire += toServer
            var toClient: [Message] = []
            for m in toServer { toClient += sent(s.receive(m)) }
            wire += toClient
            toServer = []
            for m in toClient { toServer += sent(c.receive(m)) }
            rounds += 1
        }
        return (c, s, wire)
    }

    /// The reasons each side gave for closing during `handshake` (what its shell logs; the peer sees only a
    /// refusal naming nobody: `SyncSession.refusedInClear`).
    static func closeReasons(_ client: SyncSession, _ server: SyncSession) -> [String] {
        var c = client, s = server
        var reasons: [String] = []
        func note(_ actions: [SyncSession.Action]) -> [Message] {
            for case .close(let r) in actions { reasons.append(r) }
            return sent(actions)
        }
        var toServer = note(c.start())
        _ = s.start()
        var rounds = 0
        while !toServer.isEmpty && rounds < 4 {
            var toClient: [Message] = []
            for m in toServer { toClient += note(s.receive(m)) }
            toServer = []
            for m in toClient { toServer += note(c.receive(m)) }
            rounds += 1
        }
        return reasons
    }

    /// True when `wire` holds a refusal in clear with `code` that names nobody (`SyncSession.refusedInClear`).
    static func refusedInClear(_ wire: [Message], _ code: SyncErrorCode = .authentication) -> Bool {
        wire.contains { if case .error(code, let text) = $0 { return text == SyncSession.refusedInClear(code) } else { return false } }
    }

    /// A cluster pair in ready (the defaults of most tests).
    static func pair(client: SyncSession.Config = config(phone), server: SyncSession.Config = config(Fixtures.server))
        -> (client: SyncSession, server: SyncSession) {
        let (c, s, _) = handshake(self.client(client), self.server(server))
        precondition(c.state == .ready && s.state == .ready, "the fixture handshake failed")
        return (c, s)
    }

    static func event(_ stream: StreamID, _ origin: ReplicaID, _ n: UInt64) -> Event {
        Event(stream: stream, id: EventID(origin: Origin(replica: origin, epoch: 1), counter: n), hlc: HLC(rawValue: n),
              body: stream == .public ? .reading(Reading(source: "x", sensor: "s", time: Int64(n), values: []))
                                      : .favouriteAdd(sensor: "s\(n)"))
    }
}

extension Fixtures {
    /// `events` as a device sends them (`Protocol/sync.md` 6.9): a `signatures` message, each event signed by
    /// its origin's device key with that origin's chain in `scope` (`signedBy` overrides the key), then the batch.
    static func signedBatch(_ events: [Event], batch: UInt64 = 1, scope: Scope = .user("ana"),
                            signedBy key: Ed25519.KeyPair? = nil) -> [Message] {
        let entries = events.enumerated().map { i, e in
            SignatureEntry(index: i, signature: OriginSignature.sign(e, key: key ?? deviceKey(e.id.origin.replica),
                                                                     chain: chain(e.id.origin.replica, scope).map(\.encoded)))
        }
        return [.signatures(batch: batch, entries), .events(batch: batch, events: events)]
    }

    /// What `to` makes of `messages` sealed by `from`, one after the other.
    static func deliver(_ messages: [Message], from: inout SyncSession, to: inout SyncSession) -> [SyncSession.Action] {
        var out: [SyncSession.Action] = []
        for m in messages where to.state != .closed { out += to.receive(from.sealed(m)) }
        return out
    }
}

extension SyncSession {
    /// What this side sent in `actions`, sealed as it is on the wire.
    static func wire(_ actions: [Action]) -> [Message] { Fixtures.sent(actions) }

    /// `m` sealed by this session as the shell would send it (`send`), for the peer to receive.
    mutating func sealed(_ m: Message) -> Message {
        let out = Fixtures.sent(send(m))
        precondition(out.count == 1, "not in ready")
        return out[0]
    }

    /// The messages in `actions` (the peer's), opened by this session.
    mutating func read(_ actions: [Action]) -> [Message] {
        Fixtures.sent(actions).compactMap { try? inspect($0) }
    }
}

extension Array where Element == UInt8 {
    func containsSubsequence(_ needle: [UInt8]) -> Bool {
        guard needle.count <= count else { return false }
        for i in 0...(count - needle.count) where Array(self[i..<(i + needle.count)]) == needle { return true }
        return false
    }
}

/// Two sessions joined by byte streams, as two nodes are: each frame is encoded, passed through `tamper`
/// (which may change, drop, repeat or add bytes) and fed to the other side's `FrameDecoder`, and the
/// receiving side's actions are carried out as a node's shell does (vectors on `.authenticated`, an
/// acknowledgement after each `.ingest`, a decoding error reported with `receiveGarbage`).
struct Link {
    var client: SyncSession, server: SyncSession
    private var clientDecoder = FrameDecoder(), serverDecoder = FrameDecoder()
    /// Frames sent so far, both directions, in the order sent.
    private(set) var frames: [(toServer: Bool, bytes: [UInt8])] = []
    /// Events each side was asked to store.
    private(set) var storedByServer: [Event] = [], storedByClient: [Event] = []
    /// Frames whose bytes the receiving decoder refused.
    private(set) var decodeErrors = 0
    private var queue: [(toServer: Bool, bytes: [UInt8])] = []

    init(client: SyncSession, server: SyncSession) {
        self.client = client
        self.server = server
    }

    /// Bytes waiting in either decoder for the rest of a frame.
    var pending: Int { clientDecoder.pending + serverDecoder.pending }

    /// Starts both sides and runs until nothing is left to deliver.
    mutating func run(tamper: (_ index: Int, _ toServer: Bool, _ bytes: [UInt8]) -> [UInt8] = { $2 }) {
        enqueue(client.start(), toServer: true)
        _ = server.start()
        deliver(tamper: tamper)
    }

    /// Queues what one side's call returned (e.g. `link.client.offer(...)`) and delivers it.
    mutating func send(_ actions: [SyncSession.Action], fromClient: Bool,
                       tamper: (_ index: Int, _ toServer: Bool, _ bytes: [UInt8]) -> [UInt8] = { $2 }) {
        enqueue(actions, toServer: fromClient)
        deliver(tamper: tamper)
    }

    private mutating func enqueue(_ actions: [SyncSession.Action], toServer: Bool) {
        for case .send(let m) in actions { queue.append((toServer, Frame.encode(m))) }
    }

    private mutating func deliver(tamper: (_ index: Int, _ toServer: Bool, _ bytes: [UInt8]) -> [UInt8]) {
        var rounds = 0
        while !queue.isEmpty && rounds < 10_000 {
            rounds += 1
            let (toServer, original) = queue.removeFirst()
            let bytes = tamper(frames.count, toServer, original)
            frames.append((toServer, original))
            let (replies, failed) = toServer ? Self.feed(bytes, to: &server, decoder: &serverDecoder, stored: &storedByServer)
                                             : Self.feed(bytes, to: &client, decoder: &clientDecoder, stored: &storedByClient)
            if failed { decodeErrors += 1 }
            enqueue(replies, toServer: !toServer)
        }
    }

    /// Feeds `bytes` to one side as its shell would; returns what it sends back and whether decoding failed.
    private static func feed(_ bytes: [UInt8], to side: inout SyncSession, decoder: inout FrameDecoder,
                             stored: inout [Event]) -> ([SyncSession.Action], Bool) {
        let messages: [Message]
        do { messages = try decoder.feed(bytes) } catch { return (side.receiveGarbage(error), true) }
        var out: [SyncSession.Action] = []
        for m in messages {
            for a in side.receive(m) {
                switch a {
                case .send: out.append(a)
                case .authenticated: out += side.sendVectors(local: [:])
                case .ingest(let batch, let events, _, _):
                    stored += events
                    out += side.committed(batch: batch, inserted: events.count, duplicates: 0, gaps: 0)
                default: break
                }
            }
        }
        return (out, false)
    }
}
