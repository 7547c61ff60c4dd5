public import BreezeCore
import BreezeCrypto
#if canImport(Glibc)
import Glibc
#endif

/// The sync protocol for one connection, with no I/O (in the manner of SWIM's core): every input is a
/// method that returns the `Action`s the shell must carry out. The shell (`BreezeNet`) owns the socket,
/// the timers and the database; tests drive this type directly.
///
/// Handshake (`Protocol/sync.md` section 4, version 3): `Noise_XX_25519_ChaChaPoly_BLAKE2b`. The client sends
/// `handshake1` (the versions it offers, which are also the handshake's prologue, and an ephemeral key); the
/// server answers `handshake2` (its ephemeral key, its static key and, encrypted, the version it chose, the
/// versions it offers and its certificate chain); the client checks that chain against the cluster authority
/// it trusts before it answers `handshake3` (its static key and chain, encrypted). Each side is authenticated
/// by the static key its certificate binds to its replica id and scope; the session keys come from ephemeral
/// keys (forward secrecy); a rewritten version or any other byte of the transcript makes the handshake fail;
/// a recorded session cannot be replayed (new ephemeral keys every time). Versions 1 and 2, which were not
/// encrypted, are refused.
///
/// Transport (section 2.1): every frame after the handshake is sealed (`SealedChannel`). A frame that does not
/// open ends the session before anything of it is used.
///
/// Sync (section 6): each side sends `vectors` (what it holds); each side then streams, in log order, the
/// events the other lacks and may read, in numbered batches with at most `window` unacknowledged. A
/// receiver acknowledges a batch only after committing it. Live pushes use the same path: new rows in the
/// log extend what the session scans.
public struct SyncSession: Sendable {
    /// Which side opened the connection.
    public enum Role: Sendable { case client, server }

    /// Settings of one side.
    public struct Config: Sendable {
        /// This replica's device key, certificate chain and the cluster authority it trusts.
        public var credentials: SyncCredentials
        /// Most events in one batch.
        public var batchEvents = SyncSession.defaultBatchEvents
        /// Most encoded bytes in one batch (well under the frame limit).
        public var batchBytes = 512 * 1024
        /// Most unacknowledged batches in flight.
        public var window = 4
        /// The protocol versions this side offers (within `SyncSession.versions`).
        public var versions = SyncSession.versions
        /// Dictionary sizes of the packed encoder; at most the protocol's, smaller in tests.
        public var packedLimits = Packed.Limits.protocolDefault
        /// Frames one direction may seal with its key: nonces run from 0 to `nonceLimit` - 1, and the frame
        /// with the last one is an `error` (exhausted) that ends the session, so a nonce never wraps. Noise
        /// reserves 2^64 - 1, the default limit; tests lower it.
        public var nonceLimit = UInt64.max
        /// How far ahead of this side's wall clock a device's event may be stamped (`Protocol/sync.md` 6.6):
        /// an event further ahead (HLC 2^64 - 1, say) would win every last-writer-wins merge for good, so
        /// it ends the session and nothing of its batch is stored. Cluster peers are trusted with the clock
        /// rule of `HybridClock` (stored, flagged). Default 24 hours: a phone whose clock is a day wrong
        /// is told, with its stamp, rather than believed.
        public var maxFutureMillis: UInt64 = HybridClock.deviceMaxAheadMillis
        /// The newest flagged (beyond the skew bound) timestamp this side holds in a stream
        /// (`EventLog.aheadOfClock(in:)`), or `.zero`. A device's write that supersedes such a value is
        /// stamped just after it (`HybridClock.tick(wallMillis:after:)`), possibly beyond `maxFutureMillis`:
        /// it is taken when it is at most `supersedeSlackMillis` after this floor.
        public var aheadFloor: @Sendable (StreamID) -> HLC = { _ in .zero }
        /// Wall time in milliseconds since the epoch, for `maxFutureMillis` (tests and the node inject theirs).
        public var wallClock: @Sendable () -> UInt64 = SystemClock.nowMillis
        /// Largest `vectors` payload sent in one message; larger vectors are split (`sendVectors`). 1 MiB, well
        /// under the frame limit; tests lower it.
        public var vectorsPartBytes = 1 << 20
        /// The revocations this side enforces: a peer chain with a revoked key fails the handshake
        /// (`Protocol/sync.md` 4.10). The node gives each new session the set it holds then, updates every
        /// session with `revocationsChanged` when a new revocation arrives (a handshake still running then
        /// fails when the peer's certificate arrives), and closes sessions already open whose peer it revokes.
        public var revocations: Revocations?
        /// The origin signature this side holds for an event of another replica (`EventLog.signature(of:)`), sent
        /// with it (`Protocol/sync.md` 6.9); this replica's own events it signs itself. A device relays another
        /// replica's event only when it holds its signature.
        public var storedSignature: @Sendable (Event) -> OriginSignature? = { _ in nil }
        /// The device key this side knows for a replica (nil: none): a peer or an event's signer certified for
        /// the same replica with another key is refused (a replica id is bound to one key).
        public var knownKey: (@Sendable (ReplicaID) -> [UInt8]?)?
        /// The vector this side holds of a stream (nil: it holds none), to keep of a device's vectors only the
        /// origins that matter (`takeVectors`); nil: every origin is kept.
        public var heldVector: (@Sendable (StreamID) -> VersionVector?)?
        /// The range of counters of (stream, origin) that this side retired by a compaction and that holds the
        /// counter given (`EventLog.retiredRange`), so a peer that lacks them is told (section 6.10) instead of
        /// never being sent the events after them. Asked only by the cluster, only for a peer that lacks an
        /// event's predecessor.
        public var retiredRange: (@Sendable (StreamID, Origin, UInt64) -> ClosedRange<UInt64>?)?
        /// Count the events sent per stream (`takeSentCounts`), for operators' metrics; off by default.
        public var countsSentByStream = false
        /// Monotonic milliseconds, for the spacing of `vectors` (`resyncIntervalMillis`).
        public var monotonicClock: @Sendable () -> UInt64 = SystemClock.monotonicMillis

        public init(credentials: SyncCredentials) {
            self.credentials = credentials
        }

        /// This replica (from its certificate).
        public var replica: ReplicaID { credentials.replica }
        /// What this replica's certificate grants.
        public var scope: Scope { credentials.scope }
    }

    /// Where the session is.
    public enum State: Equatable, Sendable {
        case idle, awaitingHandshake1, awaitingHandshake2, awaitingHandshake3, ready, closed
    }

    /// What the shell must do.
    public enum Action: Equatable, Sendable {
        /// Write this message.
        case send(Message)
        /// Close the connection (after writing anything queued). The reason is for the log.
        case close(reason: String)
        /// The peer is authenticated; the shell should now call `sendVectors(local:)`.
        case authenticated(peer: ReplicaID, scope: Scope)
        /// Store these events (one transaction), with the origin signatures that came with them (by index in
        /// `events`, each verified), then call `committed(batch:report:)`.
        ///
        /// `retired`: by index in `events`, the first counter of that event's (stream, origin) the peer said is
        /// retired (section 6.10): counters `first ..< event.counter` are held in a compaction, not lost.
        case ingest(batch: UInt64, events: [Event], signatures: [Int: OriginSignature] = [:], retired: [Int: UInt64] = [:])
        /// The peer's vectors arrived or changed: scanning for this peer restarts at `cursor`.
        case rescan
        /// The shell should send this replica's vectors again (after a gap was detected).
        case resendVectors
        /// Events of batch `batch` that are not stored, the batch's others are (`ingest` follows): a relayed
        /// event whose origin signature did not hold when it was made, one stamped too far ahead from the
        /// cluster, and the later events of their origins. For the shell's log and metrics.
        case skipped(batch: UInt64, count: Int, reason: String)
    }

    /// What `unseal` made of a message from the wire.
    public enum Unsealed: Equatable, Sendable {
        /// The message to hand to `receive`: the one a sealed frame carried, or the message itself when it was
        /// not sealed.
        case message(Message)
        /// The frame did not open: the session is closed; carry out these actions.
        case refused([Action])
    }

    public let role: Role
    public private(set) var config: Config
    /// When the session started (wall clock, milliseconds): certificates must be valid then.
    public let nowMillis: UInt64
    private var noise: NoiseXXHandshake
    private var channel: SealedChannel?
    /// Messages `unseal` opened that `receive` has not been given yet.
    private var unsealedPending = 0
    /// True once a sealed frame from the peer has opened (from then on a plain frame of any kind is refused).
    private var openedAny = false
    /// The current state.
    public private(set) var state: State = .idle
    /// The protocol version of this session, once the handshake chose it.
    public private(set) var version: UInt16?
    /// The authenticated peer.
    public private(set) var peerReplica: ReplicaID?
    /// The peer's verified device certificate.
    public private(set) var peerCertificate: Certificate?
    /// The peer's verified chain (its device certificate first).
    public private(set) var peerChain: [Certificate] = []
    /// The grants of this session, once authenticated.
    public private(set) var grants: Grants?
    /// The handshake hash once the handshake is complete: both sides hold the same 64 bytes, which name the
    /// session (channel binding).
    public private(set) var handshakeHash: [UInt8]?
    /// What the peer holds, as far as this side knows (its vectors, plus what was sent to or received from it).
    public private(set) var peerVectors: [StreamID: VersionVector] = [:]
    /// The fact streams the peer subscribed to (`subscribe`, `Protocol/sync.md` 6.7); nil: all of them.
    public private(set) var peerSubscription: Set<StreamID>?
    /// Streams the shell reads by stream for this peer (`offer(stream:_:)`) until it has nothing more
    /// (`caughtUp(_:)`): fact streams the peer subscribed to after the scan for it had begun, and, for a
    /// session that reads by stream (`readsByStream`), every stream the peer lacks events of
    /// (`catchUpByStream`) and every stream whose event the window had no room for (`offerRouted`). The scan
    /// in log order and the routed tail skip them meanwhile, so each origin's events still reach the peer in
    /// counter order.
    public private(set) var catchingUp: Set<StreamID> = []
    /// What this side last subscribed to (`subscribe(_:)`); nil: everything.
    public private(set) var localSubscription: Set<StreamID>?
    /// The local log position (sequence number) up to which events were considered for this peer.
    public private(set) var cursor: Int64 = 0
    /// Events sent and received on this session.
    public private(set) var sentEvents = 0, receivedEvents = 0
    private var vectorsReceived = false
    private var nextBatch: UInt64 = 1
    private var inFlight: [UInt64: Int] = [:]
    /// The number the peer's next `events` must carry: batches arrive numbered 1, 2, 3, ...
    private var expectedBatch: UInt64 = 1
    /// The packed-event contexts of this connection, one per direction (`Protocol/sync.md` 3.1).
    private var packer: PackedEncoder
    private var unpacker = PackedDecoder()
    /// Checks the origin signatures that come with the peer's events.
    private var verifier: SignatureVerifier
    /// The `signatures` message received for the next batch, if any.
    private var pendingSignatures: [SignatureEntry]?
    /// The `retired` of the next batch, until it arrives (section 6.10).
    private var pendingRetired: [RetiredEntry]?
    /// Events about to be sent after a retired range the peer lacks: the range's first counter (6.10).
    private var retiredBefore: [RelayKey: UInt64] = [:]
    /// This replica's chain, encoded, as it signs its own events.
    private let ownChain: [[UInt8]]
    /// Signatures of others' events `sends` looked up (a device relays only those it has), kept for `flush`,
    /// which sends them, so each is read from the store once; cleared at the end of each `offer`.
    private var relaySignatures: [RelayKey: OriginSignature] = [:]
    private struct RelayKey: Hashable { let stream: StreamID; let id: EventID }
    /// Events sent per stream since the last `takeSentCounts` (only with `Config.countsSentByStream`).
    private var sentByStream: [StreamID: Int] = [:]

    /// The events sent per stream since the last call (with `Config.countsSentByStream`), and starts over.
    public mutating func takeSentCounts() -> [StreamID: Int] {
        defer { sentByStream = [:] }
        return sentByStream
    }

    /// Acknowledgements received on this session (the shell times out a session whose in-flight batches
    /// get none for too long).
    public private(set) var acksReceived = 0

    /// The default `Config.batchEvents`.
    public static let defaultBatchEvents = 2048

    /// The protocol versions this build speaks: 3 only (sealed). Versions 1 and 2 sent everything in clear and
    /// are refused, so no attacker can make two Breeze replicas downgrade to them.
    public static let versions: ClosedRange<UInt16> = 3...3
    /// The label at the start of the handshake's prologue.
    public static let prologueLabel = "breeze-sync"

    /// The handshake's prologue: the label and the versions the client offers (as `handshake1` carries them).
    public static func prologue(minVersion: UInt16, maxVersion: UInt16) -> [UInt8] {
        var w = ByteWriter(capacity: 16)
        w.string(prologueLabel)
        w.u16(minVersion)
        w.u16(maxVersion)
        return w.bytes
    }

    /// A session. `ephemeralKey` must be 32 fresh random bytes (`SecureRandom.bytes(32)`): the X25519 private
    /// key of this connection only (injected so tests and test vectors are reproducible). `nowMillis` is the
    /// wall clock against which the peer's certificates are checked.
    public init(role: Role, config: Config, ephemeralKey: [UInt8], nowMillis: UInt64) {
        precondition(ephemeralKey.count == X25519.keyLength)
        precondition(Self.versions.contains(config.versions.lowerBound) && Self.versions.contains(config.versions.upperBound))
        self.role = role
        packer = PackedEncoder(limits: config.packedLimits)
        self.config = config
        self.nowMillis = nowMillis
        // The server learns the client's versions (its prologue) from `handshake1`; until then a placeholder.
        noise = NoiseXXHandshake(role: role == .client ? .initiator : .responder,
                                 prologue: Self.prologue(minVersion: config.versions.lowerBound, maxVersion: config.versions.upperBound),
                                 staticPrivateKey: config.credentials.staticPrivateKey, ephemeralPrivateKey: ephemeralKey)
        self.ephemeralKey = ephemeralKey
        verifier = SignatureVerifier(authority: config.credentials.authority, revocations: config.revocations)
        verifier.knownKey = config.knownKey
        ownChain = config.credentials.chain.map(\.encoded)
    }
    private let ephemeralKey: [UInt8]

    /// The revocations the node now holds (one arrived): relayed events signed by a key they revoke are
    /// refused from now on, and so is a peer chain they revoke whose handshake is still running (it fails
    /// when the peer's certificate arrives). Sessions already authenticated whose peer they revoke the node
    /// closes.
    public mutating func revocationsChanged(_ revocations: Revocations) {
        config.revocations = revocations
        verifier.revocations = revocations
    }

    /// Starts the session: the client sends `handshake1`, the server waits for one.
    public mutating func start() -> [Action] {
        guard state == .idle else { return [] }
        switch role {
        case .client:
            state = .awaitingHandshake2
            let e: [UInt8]
            do { e = try noise.writeMessage(payload: []) } catch { return fail(.authentication, error.description) }
            return [.send(.handshake1(minVersion: config.versions.lowerBound, maxVersion: config.versions.upperBound, ephemeral: e))]
        case .server:
            state = .awaitingHandshake1
            return []
        }
    }

    /// Batches sent and not yet acknowledged.
    public var unacknowledged: Int { inFlight.count }

    /// True in ready until the peer's `vectors` arrive (the shell times out a peer that never sends them).
    public var awaitingVectors: Bool { state == .ready && !vectorsReceived }

    /// True when the shell should read more of the log for this peer.
    public var wantsEvents: Bool { state == .ready && vectorsReceived && inFlight.count < config.window }

    /// True once the peer's first `vectors` arrived: from then on the session sends.
    public var sending: Bool { state == .ready && vectorsReceived }

    /// True when the peer named the fact streams it wants (`subscribe`, section 6.7): the shell then catches
    /// it up stream by stream (`catchUpByStream`) instead of scanning the whole log, which costs what the peer
    /// wants rather than what the log holds.
    public var readsByStream: Bool { peerSubscription != nil }

    /// Whether the peer wants events of `stream` (its grants and subscription), whatever it holds.
    public func wants(_ stream: StreamID) -> Bool {
        guard let grants, grants.peerMayRead(stream) else { return false }
        if let sub = peerSubscription, stream.isFactPartition { return sub.contains(stream) }
        return true
    }

    /// How many log rows the shell may read for this peer now.
    public var readLimit: Int { wantsEvents ? (config.window - inFlight.count) * config.batchEvents : 0 }

    // MARK: Input: a message from the peer

    /// Opens a sealed frame from the wire into the message it carries, so the shell can see what it is (its
    /// flood budget counts pings, pongs, vectors and resets) before handing it to `receive`. Every message this
    /// returns must be given to `receive`, once and in order; a message that is not sealed, or any message
    /// before the handshake is complete, comes back unchanged. A frame that does not open closes the session.
    public mutating func unseal(_ m: Message) -> Unsealed {
        guard state == .ready, case .sealed(let payload) = m else { return .message(m) }
        guard channel!.receive.nonce < config.nonceLimit else {
            return .refused(fail(.exhausted, "the peer sealed more than \(config.nonceLimit) frames with one key"))
        }
        do {
            let inner = try channel!.open(payload)
            openedAny = true
            unsealedPending += 1
            return .message(inner)
        } catch {
            return .refused(fail(error.code, error.description))
        }
    }

    /// Opens a sealed message as `unseal` does but without handing it on: for tests that read what the peer
    /// sent (the receive nonce advances as it would).
    mutating func inspect(_ m: Message) throws(FrameError) -> Message {
        guard case .sealed(let payload) = m, channel != nil else { return m }
        return try channel!.open(payload)
    }

    /// The nonce the next sealed frame this side sends will use (nil before the handshake is complete).
    var sendNonce: UInt64? { channel?.send.nonce }

    /// This side's transport keys (send, receive), for the test vectors.
    var transportKeys: (send: [UInt8], receive: [UInt8])? {
        guard let c = channel, let s = c.send.keyBytes, let r = c.receive.keyBytes else { return nil }
        return (s, r)
    }

    /// Handles one message from the peer: a frame from the wire (a sealed one is opened here), or a message
    /// `unseal` returned.
    public mutating func receive(_ m: Message) -> [Action] {
        if state == .ready {
            if case .sealed = m {
                switch unseal(m) {
                case .message(let inner):
                    unsealedPending -= 1
                    return handleSealed(inner)
                case .refused(let actions):
                    return actions
                }
            }
            if unsealedPending > 0 {
                unsealedPending -= 1
                return handleSealed(m)
            }
            // A plain `error` right after the handshake is the server refusing `handshake3` (it has no
            // transport keys for a client it does not accept): it only closes. Any other plain frame after
            // the handshake is refused: it would be unauthenticated.
            if case .error(let code, let message) = m, !openedAny {
                state = .closed
                return [.close(reason: "peer refused the handshake: \(code): \(message)")]
            }
            return fail(.unexpected, "message 0x\(String(m.typeByte, radix: 16)) not sealed after the handshake")
        }
        switch (state, m) {
        case (.closed, _):
            return []
        case (_, .error(let code, let message)):
            state = .closed
            return [.close(reason: "peer reported \(code): \(message)")]
        case (.awaitingHandshake1, .hello(let lo, let hi, _, _, _)):
            return fail(.version, "protocol versions \(lo)...\(hi) are not spoken here: only version 3 (sealed); versions 1 and 2 sent everything in clear and are refused")
        case (.awaitingHandshake1, .handshake1(let lo, let hi, let e)):
            return receiveHandshake1(lo, hi, e)
        case (.awaitingHandshake2, .handshake2(let message)):
            return receiveHandshake2(message)
        case (.awaitingHandshake3, .handshake3(let message)):
            return receiveHandshake3(message)
        default:
            return fail(.unexpected, "message 0x\(String(m.typeByte, radix: 16)) is not allowed in state \(state)")
        }
    }

    /// Server: the client's versions and ephemeral key. Answers with `handshake2`.
    private mutating func receiveHandshake1(_ lo: UInt16, _ hi: UInt16, _ e: [UInt8]) -> [Action] {
        guard lo <= hi, lo <= config.versions.upperBound, hi >= config.versions.lowerBound else {
            return fail(.version, "no common protocol version (peer offers \(lo)...\(hi), this side \(config.versions))")
        }
        // The prologue is the client's offer as it arrived: if anything rewrote it on the way, the client's
        // prologue differs and it cannot open `handshake2`.
        noise = NoiseXXHandshake(role: .responder, prologue: Self.prologue(minVersion: lo, maxVersion: hi),
                                 staticPrivateKey: config.credentials.staticPrivateKey, ephemeralPrivateKey: ephemeralKey)
        let chosen = min(hi, config.versions.upperBound)
        var w = ByteWriter(capacity: 512)
        w.u16(chosen)
        w.u16(config.versions.lowerBound)
        w.u16(config.versions.upperBound)
        w.array(config.credentials.chain) { w, c in w.blob(c.encoded) }
        let reply: [UInt8]
        do {
            _ = try noise.readMessage(e)
            reply = try noise.writeMessage(payload: w.bytes)
        } catch {
            return fail(.authentication, "handshake: \(error.description)")
        }
        version = chosen
        state = .awaitingHandshake3
        return [.send(.handshake2(noise: reply))]
    }

    /// Client: the server's keys, version and chain. Verifies the server before revealing anything of its own;
    /// answers with `handshake3` and is then ready.
    private mutating func receiveHandshake2(_ message: [UInt8]) -> [Action] {
        let payload: [UInt8]
        do { payload = try noise.readMessage(message) } catch {
            return fail(.authentication, "handshake2 does not open (\(error.description)): a different transcript (the offered versions or another byte rewritten on the way), or not a Breeze version-3 server")
        }
        var r = ByteReader(payload)
        let chosen: UInt16, serverVersions: ClosedRange<UInt16>, chain: [Certificate]
        do {
            chosen = try r.u16()
            let lo = try r.u16(), hi = try r.u16()
            guard lo <= hi else { return fail(.malformed, "handshake2: server versions \(lo)...\(hi)") }
            serverVersions = lo...hi
            chain = try Self.decodeChain(&r)
            try r.expectEnd("handshake2 payload")
        } catch {
            return fail(.malformed, "handshake2: \(error)")
        }
        // A downgrade is refused: the server must pick the highest version both offer.
        guard config.versions.contains(chosen), serverVersions.contains(chosen),
              chosen == min(config.versions.upperBound, serverVersions.upperBound) else {
            return fail(.version, "server chose version \(chosen) (it offers \(serverVersions), this side \(config.versions))")
        }
        if let refusal = authenticatePeer(chain) { return refusal }
        var w = ByteWriter(capacity: 512)
        w.array(config.credentials.chain) { w, c in w.blob(c.encoded) }
        let reply: [UInt8]
        do { reply = try noise.writeMessage(payload: w.bytes) } catch {
            return fail(.authentication, "handshake: \(error.description)")
        }
        version = chosen
        return [.send(.handshake3(noise: reply))] + becomeReady()
    }

    /// Server: the client's static key and chain.
    private mutating func receiveHandshake3(_ message: [UInt8]) -> [Action] {
        let payload: [UInt8]
        do { payload = try noise.readMessage(message) } catch {
            return fail(.authentication, "handshake3 does not open (\(error.description)): not the client that sent handshake1, or bytes rewritten on the way")
        }
        var r = ByteReader(payload)
        let chain: [Certificate]
        do {
            chain = try Self.decodeChain(&r)
            try r.expectEnd("handshake3 payload")
        } catch {
            return fail(.malformed, "handshake3: \(error)")
        }
        if let refusal = authenticatePeer(chain) { return refusal }
        return becomeReady()
    }

    static func decodeChain(_ r: inout ByteReader) throws -> [Certificate] {
        let blobs = try r.array { (r: inout ByteReader) throws(DecodingError) in try r.blob() }
        guard (1...CertificateChain.maxLength).contains(blobs.count) else {
            throw CertificateError("a chain of \(blobs.count) certificates")
        }
        return try blobs.map { b throws(CertificateError) in try Certificate(decoding: b) }
    }

    /// The error text for a peer whose chain `r` revokes.
    public static func revokedMessage(_ device: Certificate, _ r: Revocation) -> String {
        "\(device.subject) (key \(CertificateChain.fingerprint(device.key))): a key of its chain was revoked at \(ISOTime.format(millis: Int64(clamping: r.revokedAtMillis)))\(r.reason.isEmpty ? "" : " (\(r.reason))")"
    }

    /// Checks the peer's chain against the trusted authority, that it certifies the static key the peer
    /// proved it holds, and the scopes; sets the peer and the grants. Returns the refusal, if any.
    private mutating func authenticatePeer(_ chain: [Certificate]) -> [Action]? {
        let device: Certificate
        do { device = try CertificateChain.verify(chain, authority: config.credentials.authority, nowMillis: nowMillis) } catch {
            return fail(.authentication, "peer certificate refused: \(error.description)")
        }
        // The certificate binds the replica id to this key: only the holder of the key can claim the replica.
        guard let rs = noise.remoteStatic, Ed25519.x25519PublicKey(device.key) == rs else {
            return fail(.authentication, "the peer's certificate is for another key than the one it proved it holds")
        }
        guard device.replica != config.replica else { return fail(.unexpected, "connected to itself") }
        if let known = config.knownKey?(device.replica), known != device.key {
            return fail(.authentication, "\(device.subject) presents key \(CertificateChain.fingerprint(device.key)), but this replica id is bound to key \(CertificateChain.fingerprint(known)) (a replica id is bound to one key; revoke the first to enrol another)")
        }
        if let r = config.revocations?.revocation(of: chain) {
            return fail(.authentication, Self.revokedMessage(device, r))
        }
        guard let sessionScope = Scope.session(config.scope, device.scope) else {
            return fail(.authentication, "scope \(device.scope) cannot sync with a replica of scope \(config.scope)")
        }
        peerReplica = device.replica
        peerCertificate = device
        peerChain = chain
        // The cluster side is the one whose certificate says cluster: the cluster authority signed it.
        grants = Grants(scope: sessionScope, localIsCluster: config.scope == .cluster, peerIsCluster: device.scope == .cluster)
        return nil
    }

    private mutating func becomeReady() -> [Action] {
        let (send, receive) = noise.split()
        channel = SealedChannel(send: send, receive: receive)
        handshakeHash = noise.handshakeHash
        state = .ready
        return [.authenticated(peer: peerReplica!, scope: grants!.scope)]
    }

    /// A message the peer sealed, opened.
    private mutating func handleSealed(_ m: Message) -> [Action] {
        switch m {
        case .error(let code, let message):
            state = .closed
            return [.close(reason: "peer reported \(code): \(message)")]
        case .vectorsPart(let list):
            // A leading part of the next `vectors` (section 6.1): kept until the `vectors` that ends it.
            guard vectorsParts < Self.maxVectorsParts else {
                return fail(.unexpected, "more than \(Self.maxVectorsParts) vectorsPart messages before a vectors")
            }
            vectorsParts += 1
            var pending = pendingVectors
            pendingVectors = [:]
            if let refusal = takeVectors(list, into: &pending) { return refusal }
            pendingVectors = pending
            return []
        case .vectors(let list):
            var vectors = pendingVectors
            pendingVectors = [:]
            vectorsParts = 0
            if let refusal = takeVectors(list, into: &vectors) { return refusal }
            // Every `vectors` restarts the scan for this peer, so it is the one message that makes this side
            // send a lot for a little (section 6.4): a peer sends it once when ready and again at most once
            // per `resyncIntervalMillis`. One repeated sooner than half that is dropped if it says nothing
            // new and ends the session if it does; no rescan either way.
            let t = config.monotonicClock()
            if let last = lastVectorsAcceptedMillis, t < last &+ Self.resyncIntervalMillis / 2 {
                if Self.digest(vectors) == lastVectorsAccepted { vectorsDropped += 1; return [] }
                return fail(.unexpected, "vectors again after \(t &- last) ms: a peer re-sends its vectors at most once per \(Self.resyncIntervalMillis / 1000) s")
            }
            lastVectorsAcceptedMillis = t
            lastVectorsAccepted = Self.digest(vectors)
            peerVectors = vectors
            vectorsReceived = true
            cursor = 0
            return [.rescan]
        case .subscribe(let list):
            for st in list ?? [] where !grants!.peerMayRead(st) {
                return fail(.forbidden, "no grant to read stream \(st) in scope \(grants!.scope)")
            }
            // What a subscription names costs this side to read (decoding, the checks above) before anything
            // else: the streams a peer names are charged to a budget of `subscribeStreamsBurst`, refilled at
            // `subscribeStreamsPerSecond` (6.6); a peer over it is closed (and its reconnects are budgeted too).
            let t = config.monotonicClock()
            let rate = Double(Self.subscribeStreamsPerSecond) / 1000
            subscribeTokens = min(Double(Self.subscribeStreamsBurst), subscribeTokens + Double(t &- min(t, subscribeTokensAt)) * rate)
            subscribeTokensAt = t
            let charge = Double((list?.count ?? 0) + 1)
            guard subscribeTokens >= charge else {
                return fail(.unexpected, "subscriptions naming more than \(Self.subscribeStreamsBurst) streams at once, or \(Self.subscribeStreamsPerSecond) a second over time: this one names \(list?.count ?? 0)")
            }
            subscribeTokens -= charge
            let new = list.map(Set.init)
            // Each new subscription costs this side what it names (its index, the streams' catch-up plan), so
            // once the scan began they are taken at most one per `subscribeIntervalMillis` (6.6): one arriving
            // sooner is held, the latest replacing any held before, and taken when due (`subscriptionIfDue`).
            if vectorsReceived, let last = lastSubscribeMillis, t < last &+ Self.subscribeIntervalMillis {
                heldSubscription = .some(new)
                return []
            }
            return applySubscription(new, now: t)
        case .signatures(let batch, let entries):
            // Section 6.9: they belong to the next batch (other messages may come between).
            guard batch == expectedBatch, pendingSignatures == nil else {
                return fail(.unexpected, "signatures for batch \(batch) while batch \(expectedBatch) is next\(pendingSignatures == nil ? "" : " and has its signatures")")
            }
            pendingSignatures = entries
            return []
        case .retired(let batch, let entries):
            // Section 6.10: only the cluster compacts, and the ranges belong to the next batch.
            guard grants!.peerIsCluster else {
                return fail(.forbidden, "retired ranges from a device (this side's grants: \(grants!.scope)): only the cluster compacts")
            }
            guard batch == expectedBatch, pendingRetired == nil else {
                return fail(.unexpected, "retired for batch \(batch) while batch \(expectedBatch) is next\(pendingRetired == nil ? "" : " and has its retired ranges")")
            }
            pendingRetired = entries
            return []
        case .events(let batch, let events):
            // The channel itself refuses a frame lost, repeated or reordered; the batch number is checked too,
            // so a sender's bug cannot make two batches share one acknowledgement.
            guard batch == expectedBatch else {
                return fail(.unexpected, "batch \(batch) out of sequence (expected \(expectedBatch))")
            }
            return accept(events)
        case .packed(let payload):
            // The batch number is implicit; the check covers it, the dictionaries and every event.
            let events: [Event]
            do { events = try unpacker.decode(batch: expectedBatch, payload: payload) } catch {
                return fail(error.code, error.description)
            }
            return accept(events)
        case .reset:
            unpacker.reset()
            return []
        case .ack(let batch, _, _):
            guard inFlight[batch] != nil else {
                return fail(.unexpected, "acknowledgement of unknown batch \(batch)")
            }
            // Receivers acknowledge in the order they received (section 6.3): an older batch still waiting
            // means its acknowledgement was lost.
            if let oldest = inFlight.keys.min(), oldest != batch {
                return fail(.unexpected, "acknowledgement of batch \(batch) before batch \(oldest)")
            }
            inFlight.removeValue(forKey: batch)
            acksReceived += 1
            return []
        case .ping(let v):
            return emit(.pong(v))
        case .pong:
            return []
        default:
            return fail(.unexpected, "message 0x\(String(m.typeByte, radix: 16)) is not allowed in state \(state)")
        }
    }

    /// Batch `expectedBatch` arrived: check the grants of every event, and the signatures that came with it,
    /// before anything is stored.
    ///
    /// A peer that is not the cluster (a device) sends only events its origin signed (`Protocol/sync.md` 6.6,
    /// 6.9): its own, or another device's it relays; every one must carry a signature whose chain binds the
    /// origin's replica id to the signing key, and no stamp more than `maxFutureMillis` ahead. So a device
    /// cannot write under the server's origin or another device's (whose next counter it would take, so that
    /// the real event later conflicts), cannot make up origins (a scope holds at most the origins of its
    /// enrolled devices), cannot change what it relays, and cannot stamp an event that wins every merge.
    /// From the cluster, signatures are optional (it relays events older than signatures), and checked when
    /// present: an invalid one refuses the batch from anybody.
    private mutating func accept(_ events: [Event]) -> [Action] {
        let batch = expectedBatch
        expectedBatch += 1
        let entries = pendingSignatures ?? []
        pendingSignatures = nil
        var retired: [Int: UInt64] = [:]
        for en in pendingRetired ?? [] {
            guard en.index < events.count, en.first < events[en.index].id.counter else {
                return fail(.malformed, en.index < events.count
                    ? "a retired range from \(en.first) before event \(events[en.index].id), which does not follow it"
                    : "a retired range before event \(en.index) of a batch of \(events.count)")
            }
            // Only readings are compacted or rolled up: a range elsewhere would hide events that are no
            // reading (a user's, a revocation) from this side for good.
            guard case .sensor = events[en.index].stream else {
                return fail(.forbidden, "a retired range before event \(events[en.index].id) of \(events[en.index].stream): only sensor streams are compacted")
            }
            retired[en.index] = en.first
        }
        pendingRetired = nil
        // A device's batch costs this side a signature check per event before anything else: at most
        // `maxDeviceBatchEvents` (twice the default `batchEvents`), so one batch is a bounded piece of work (6.3).
        if !grants!.peerIsCluster && events.count > Self.maxDeviceBatchEvents {
            return fail(.unexpected, "a batch of \(events.count) events from a device: at most \(Self.maxDeviceBatchEvents)")
        }
        for e in events where !grants!.peerMayWrite(e.stream) {
            return fail(.forbidden, "no grant to write stream \(e.stream) in scope \(grants!.scope); batch refused")
        }
        var signatures: [Int: OriginSignature] = [:]
        var refused: [Int: SignatureVerifier.Refusal] = [:]
        // Events this side already holds, with their signature, are not verified again: storing one is a
        // no-op (a duplicate) or a refusal (a conflict, counted), whatever its signature, so a peer re-sending
        // ids costs a lookup each, not an Ed25519 check (a device re-sending its own id with new content, 300
        // versions a batch, kept the loop busy verifying). Their signatures are not stored (`unverified`).
        var unverified = Set<Int>()
        for en in entries {
            guard en.index < events.count else {
                return fail(.malformed, "a signature for event \(en.index) of a batch of \(events.count)")
            }
            let e = events[en.index]
            // Only the sender's own events (or any from the cluster): a device relaying another origin's
            // event with other content must still prove that origin signed it, or a hostile device could make
            // it look as if another device had written two contents under one id.
            if grants!.peerIsCluster || e.id.origin.replica == peerReplica,
               config.heldVector?(e.stream)?.contains(e.id) == true, config.storedSignature(e) != nil {
                signatures[en.index] = en.signature
                unverified.insert(en.index)
                continue
            }
            if let why = verifier.check(e, en.signature, nowMillis: nowMillis) { refused[en.index] = why } else { signatures[en.index] = en.signature }
        }
        let fromDevice = !grants!.peerIsCluster
        let limit = config.wallClock() &+ config.maxFutureMillis
        var kept: [Event] = []
        var keptSignatures: [Int: OriginSignature] = [:]
        var skipped = 0
        var reason: String?
        for (i, e) in events.enumerated() {
            let origin = BlockKey(stream: e.stream, origin: e.id.origin)
            if blocked.contains(origin) {
                skipped += 1
                continue
            }
            var why = refused[i]?.reason
            let farAhead = e.hlc.physicalMillis > limit && !supersedesHeldFloor(e)
            if fromDevice, let peer = peerReplica {
                // A device sends only events their origin signed, stamped at most `maxFutureMillis` ahead; one
                // that breaks either rule, a forged signature, or a bad signature on its own event makes it
                // hostile or broken (6.6, 6.9). A relayed event signed while its signer's certificate held, and
                // no longer valid now (expired, revoked since), is only skipped.
                if signatures[i] == nil && why == nil {
                    return fail(.forbidden, e.id.origin.replica == peer
                        ? "event \(e.id) from device \(peer) carries no signature: a device's events are signed by their origin; batch refused"
                        : "event \(e.id) carries origin \(e.id.origin.replica), not the sending device \(peer), and no signature of its origin: a device relays only signed events; batch refused")
                }
                if let r = refused[i], r.forged || e.id.origin.replica == peer { return fail(.forbidden, "\(r.reason); batch refused") }
                if farAhead {
                    return fail(.forbidden, "event \(e.id) is stamped \(e.hlc.physicalMillis) ms, more than \(config.maxFutureMillis / 3_600_000) h ahead of this side's clock (\(limit &- config.maxFutureMillis) ms); batch refused")
                }
            } else if why == nil && farAhead {
                // The same clock bound for the cluster's relays: stored, it would win every merge for good.
                why = "event \(e.id) is stamped \(e.hlc.physicalMillis) ms, more than \(config.maxFutureMillis / 3_600_000) h ahead of this side's clock"
            }
            if let w = why {
                // One event that cannot be taken does not stop the others: it is skipped with everything after it
                // of its origin in this stream (each must be the next, 6.4), for the rest of the session.
                guard blocked.count < Self.maxBlockedOrigins else {
                    return fail(.forbidden, "more than \(Self.maxBlockedOrigins) origins with events that cannot be taken (\(w))")
                }
                blocked.insert(origin)
                skipped += 1
                if reason == nil { reason = w }
                continue
            }
            if let sig = signatures[i], !unverified.contains(i) { keptSignatures[kept.count] = sig }
            kept.append(e)
        }
        for e in events { peerVectors[e.stream, default: VersionVector()].advance(to: e.id) }
        receivedEvents += events.count
        var out: [Action] = []
        if skipped > 0 {
            skippedEvents += skipped
            out.append(.skipped(batch: batch, count: skipped, reason: reason ?? "later events of origins skipped before in this session"))
        }
        // The ranges of events skipped go with them (their origin's later events are skipped too).
        var keptRetired: [Int: UInt64] = [:]
        if !retired.isEmpty {
            var position: [Int: Int] = [:]
            var k = 0
            for (i, e) in events.enumerated() where k < kept.count && kept[k].id == e.id && kept[k].stream == e.stream {
                position[i] = k
                k += 1
            }
            for (i, first) in retired { if let p = position[i] { keptRetired[p] = first } }
        }
        out.append(.ingest(batch: batch, events: kept, signatures: keptSignatures, retired: keptRetired))
        return out
    }

    /// Most events in one batch from a device (section 6.3).
    public static let maxDeviceBatchEvents = 4_096

    /// Most (stream, origin) pairs whose events a session skips (`accept`) before it ends: a peer cannot make
    /// this side remember without bound.
    public static let maxBlockedOrigins = 4096
    private struct BlockKey: Hashable { let stream: StreamID; let origin: Origin }
    /// Origins whose events this session skips: one of their events could not be taken.
    private var blocked = Set<BlockKey>()
    /// Events received and skipped on this session (their signature did not hold when they were made, or they
    /// were stamped too far ahead, or they followed such an event of their origin).
    public private(set) var skippedEvents = 0

    /// How far after the receiver's ahead floor a device's event beyond `maxFutureMillis` may be stamped:
    /// one minute of writes after a value from a clock far ahead (65,536 stamps per millisecond).
    public static let supersedeSlackMillis: UInt64 = 60_000

    /// True when `e`, stamped beyond `maxFutureMillis`, follows a far-ahead value this side holds in its
    /// stream by at most `supersedeSlackMillis`: the stamp of an honest device's write that supersedes it.
    /// Such an event does not raise the floor (`EventLog.ingest`, `fromDevice`), so the slack never ratchets.
    private func supersedesHeldFloor(_ e: Event) -> Bool {
        let floor = config.aheadFloor(e.stream)
        return floor != .zero && e.hlc.physicalMillis <= floor.physicalMillis &+ Self.supersedeSlackMillis
    }

    /// A frame that could not be decoded: the session ends.
    public mutating func receiveGarbage(_ error: FrameError) -> [Action] {
        guard state != .closed else { return [] }
        return fail(error.code, error.description)
    }

    // MARK: Input: the shell's results

    /// This replica's vectors for the streams it wants from the peer (only those the peer may write here are
    /// sent). Call after `.authenticated` and after `.resendVectors`.
    ///
    /// Vectors of any size go: when they would pass `Config.vectorsPartBytes`, the leading streams travel in
    /// `vectorsPart` messages and the rest in the `vectors` that ends them (section 6.1), so no frame outgrows
    /// the limit and no link stalls on a large exchange.
    public mutating func sendVectors(local: [StreamID: VersionVector]) -> [Action] {
        guard state == .ready, let grants else { return [] }
        lastVectorsSentMillis = config.monotonicClock()
        resyncPending = false
        let list = local.filter { grants.peerMayWrite($0.key) }.sorted { $0.key < $1.key }
            .map { StreamVector(stream: $0.key, vector: $0.value) }
        var out: [Action] = []
        var part: [StreamVector] = [], bytes = 0
        for sv in list {
            let size = Self.encodedSize(sv)
            if !part.isEmpty && bytes + size > config.vectorsPartBytes {
                out += emit(.vectorsPart(part))
                part = []
                bytes = 0
            }
            part.append(sv)
            bytes += size
        }
        return out + emit(.vectors(part))
    }

    /// The bytes one stream's entry takes in a `vectors` payload (`StreamVectors.encode`).
    static func encodedSize(_ sv: StreamVector) -> Int {
        let name = sv.stream.description.utf8.count, entries = sv.vector.sorted
        var n = ByteWriter.varintSize(UInt64(name)) + name + ByteWriter.varintSize(UInt64(entries.count))
        for e in entries { n += 8 + ByteWriter.varintSize(UInt64(e.origin.epoch)) + ByteWriter.varintSize(e.counter) }
        return n
    }

    /// Most `vectorsPart` messages before the `vectors` that ends them (64 parts of up to 1 MiB: vectors of
    /// 64 MiB, far beyond any real cluster's, while a peer cannot make this side hold more).
    public static let maxVectorsParts = 64

    /// Sends a message of the shell's own (the keep-alive `ping`), sealed; nothing before the handshake is
    /// complete or after the session closed.
    public mutating func send(_ m: Message) -> [Action] {
        guard state == .ready else { return [] }
        return emit(m)
    }

    /// The events of batch `batch` are committed (with this report): acknowledge it. Events refused as
    /// gaps mean the peer skipped something this side lacks; this side then re-sends its vectors so the
    /// peer rescans, at most once per `resyncIntervalMillis` (a peer that keeps sending gaps cannot make
    /// the two sides rescan in a loop), counted from the last vectors sent, the first included (the peer
    /// drops or refuses vectors repeated sooner than half that). Time is `Config.monotonicClock`.
    public mutating func committed(batch: UInt64, inserted: Int, duplicates: Int, gaps: Int) -> [Action] {
        guard state == .ready else { return [] }
        var out = emit(.ack(batch: batch, inserted: UInt32(clamping: inserted), duplicates: UInt32(clamping: duplicates)))
        if gaps > 0 {
            resyncPending = true
            out += resyncIfDue()
        }
        return out
    }

    /// `.resendVectors` if a resync is pending (gaps were refused) and the interval since the last vectors
    /// sent has passed. The shell calls it now and then (the node: once a second), so gaps refused within
    /// `resyncIntervalMillis` of the last vectors still get their resync, once the interval is over.
    public mutating func resyncIfDue() -> [Action] {
        guard state == .ready, resyncPending else { return [] }
        if let last = lastVectorsSentMillis, config.monotonicClock() < last &+ Self.resyncIntervalMillis { return [] }
        resyncPending = false
        return [.resendVectors]
    }

    /// Least time between two vectors sent on one session.
    public static let resyncIntervalMillis: UInt64 = 10_000
    private var lastVectorsSentMillis: UInt64?
    /// Gaps were refused since the last vectors sent: a resync is owed (`resyncIfDue`).
    private var resyncPending = false
    private var lastVectorsAcceptedMillis: UInt64?
    /// A digest of the last `vectors` taken (not a copy: an idle session's memory is what it must hold).
    private var lastVectorsAccepted: [UInt8] = []
    /// `vectorsPart`s received since the last `vectors`.
    private var pendingVectors: [StreamID: VersionVector] = [:]
    private var vectorsParts = 0
    /// Repeated `vectors` that arrived too soon and said nothing new: dropped without a rescan.
    public private(set) var vectorsDropped = 0

    /// Storing a batch failed: the session ends (nothing of it is acknowledged). A session already closed
    /// does nothing more (found by fuzzing: it used to send a second error and close again).
    public mutating func storageFailed(_ message: String) -> [Action] {
        guard state != .closed else { return [] }
        return fail(.storage, message)
    }

    /// Log rows the shell read for this peer, starting after `cursor`, up to sequence number `scannedTo`.
    /// Returns the batches to send: the events the peer may read and does not hold. Stops when the window
    /// is full (batches can be cut early by `batchBytes`); `cursor` then stays at the last row taken, so
    /// the rest is read again once acknowledgements make room.
    public mutating func offer(_ entries: [(seq: Int64, event: Event)], scannedTo: Int64) -> [Action] {
        guard state == .ready, let grants else { return [] }
        var out: [Action] = []
        var batch: [Event] = []
        var bytes = 0
        var taken = cursor
        for (seq, e) in entries {
            guard sends(e, grants), !catchingUp.contains(e.stream) else {
                taken = seq
                continue
            }
            guard add(e, to: &batch, &bytes, out: &out) else { break }
            taken = seq
        }
        flush(&batch, &bytes, into: &out)
        relaySignatures.removeAll(keepingCapacity: true)     // looked up for an event the window had no room for
        retiredBefore.removeAll(keepingCapacity: true)
        cursor = max(cursor, taken == cursor && entries.isEmpty ? scannedTo : taken)
        return out
    }

    /// The shell stored events this peer sent, and nothing else, as the sequence numbers `seqs`: the peer
    /// holds all of them, so the scan in log order would offer none (their ids went into `peerVectors` as
    /// they arrived; vectors or a subscription that replaced those since reset `cursor` to 0, and the peer's
    /// new vectors cover what it sent), and need not read them back. Moves `cursor` past them when it had
    /// reached their start.
    public mutating func storedFromPeer(_ seqs: ClosedRange<Int64>) {
        if cursor >= seqs.lowerBound - 1 { cursor = max(cursor, seqs.upperBound) }
    }

    /// Events the shell routed to this peer: the rows after `after` up to `through` that may interest it (the
    /// shell's index left out rows of streams it does not want; passing them too is harmless), in log order,
    /// read from the log once for every session (the node's router). Rows at or before `cursor` were offered
    /// already and are passed over. Returns the batches to send.
    ///
    /// When the window has no room for an event: a session that reads by stream puts the event's stream in
    /// `catchingUp` (read by stream later; its later events in the tail are skipped meanwhile, so no gap) and
    /// goes on; a session that scans in log order stops there, with `cursor` at the last row it took, and the
    /// shell scans on from it (`offer(_:scannedTo:)`). `caughtUpToTail` says which.
    ///
    /// `room` false: the shell has no room for more (its socket's queue is full), so nothing is added, as if
    /// the window were full.
    public mutating func offerRouted(_ entries: [(seq: Int64, event: Event)], after: Int64, through: Int64,
                                     room: Bool = true) -> [Action] {
        guard sending, let grants else { return [] }
        cursor = max(cursor, after)
        guard through > cursor else { return [] }
        var out: [Action] = []
        var batch: [Event] = []
        var bytes = 0
        var taken = cursor
        var blocked = false
        for (seq, e) in entries where seq > cursor {
            if catchingUp.contains(e.stream) || !sends(e, grants) { taken = seq; continue }
            // (`add` starts a first batch whatever the window; here the window is checked first.)
            if room && (!batch.isEmpty || inFlight.count < config.window) && add(e, to: &batch, &bytes, out: &out) {
                taken = seq
                continue
            }
            if readsByStream {
                catchingUp.insert(e.stream)
                taken = seq
                continue
            }
            blocked = true
            break
        }
        flush(&batch, &bytes, into: &out)
        relaySignatures.removeAll(keepingCapacity: true)
        retiredBefore.removeAll(keepingCapacity: true)
        cursor = blocked ? taken : through
        return out
    }

    /// True when every routed row up to `tail` was offered (`cursor` reached it); false when the shell must
    /// scan the log on from `cursor` for this peer.
    public func caughtUpToTail(_ tail: Int64) -> Bool { cursor >= tail }

    /// Plans the catch-up of a session that reads by stream (`readsByStream`) after its vectors or a new
    /// subscription: `streams` are the streams the peer wants of which this side holds events it lacks; each
    /// is read by stream (`catchingUp`), and everything else comes from the routed tail, from log position
    /// `tail` on (the rows before it are covered: the peer holds them, or they are in a stream of `streams`).
    /// No scan of the log.
    public mutating func catchUpByStream(_ streams: some Sequence<StreamID>, tail: Int64) {
        guard sending, readsByStream else { return }
        var next = Set<StreamID>()
        for st in streams where wants(st) { next.insert(st) }
        catchingUp = next
        cursor = max(cursor, tail)
    }

    /// Adds the entries of a `vectors` or `vectorsPart` to `vectors`, after the checks of section 6.1: a stream
    /// the peer may read, listed once. From a device, what it cannot make this side need is not kept: of a
    /// stream this side holds, only the origins it holds (it sends no other); of one it does not hold, at most
    /// `maxDeviceOriginsPerStream`; and at most `maxDeviceVectorStreams` streams in all. So a device's vectors
    /// cost this side what it holds, however many origins it makes up (the cluster's are kept as they come).
    private mutating func takeVectors(_ list: [StreamVector], into vectors: inout [StreamID: VersionVector]) -> [Action]? {
        let device = !grants!.peerIsCluster
        for sv in list {
            guard grants!.peerMayRead(sv.stream) else {
                return fail(.forbidden, "no grant to read stream \(sv.stream) in scope \(grants!.scope)")
            }
            var v = sv.vector
            if device {
                guard vectors.count < Self.maxDeviceVectorStreams else {
                    return fail(.unexpected, "vectors of more than \(Self.maxDeviceVectorStreams) streams from a device")
                }
                if let held = config.heldVector?(sv.stream) {
                    v = VersionVector(v.counters.filter { held[$0.key] > 0 })
                } else if v.counters.count > Self.maxDeviceOriginsPerStream {
                    v = VersionVector(Dictionary(uniqueKeysWithValues: v.sorted.suffix(Self.maxDeviceOriginsPerStream).map { ($0.origin, $0.counter) }))
                }
            }
            guard vectors.updateValue(v, forKey: sv.stream) == nil else {
                return fail(.malformed, "stream \(sv.stream) listed in two parts of one vectors")
            }
        }
        return nil
    }

    /// Most streams a device's vectors may name (a subscription's 50,000, its user's streams, `public`).
    public static let maxDeviceVectorStreams = 50_016
    /// Most origins kept of a device's vector of a stream this side does not hold.
    public static let maxDeviceOriginsPerStream = 16

    /// Section 6.7: from now on only these fact streams are offered. Streams added after the scan for this peer
    /// began are read by stream; removed ones are no longer offered.
    private mutating func applySubscription(_ new: Set<StreamID>?, now t: UInt64) -> [Action] {
        let old = peerSubscription
        // Every fact stream wanted again restarts the scan of the whole log, as `vectors` does: spaced as
        // `vectors` are (6.6), so flipping between the two modes cannot make this side rescan at will.
        if vectorsReceived, new == nil, old != nil, let last = lastVectorsAcceptedMillis, t < last &+ Self.resyncIntervalMillis / 2 {
            return fail(.unexpected, "subscribe to every stream \(t &- last) ms after the last rescan: at most one per \(Self.resyncIntervalMillis / 2000) s")
        }
        if vectorsReceived { lastSubscribeMillis = t }
        heldSubscription = nil
        peerSubscription = new
        subscriptionsTaken &+= 1
        // What the peer held of a stream it no longer wants, it drops (6.7): forget it, so a later
        // subscription reads the stream whole (from everything to some: every other fact stream).
        if let new {
            if let old {
                for s in old where !new.contains(s) { peerVectors[s] = nil }
            } else {
                for s in Array(peerVectors.keys) where s.isFactPartition && !new.contains(s) { peerVectors[s] = nil }
            }
        }
        guard vectorsReceived else { return [] }   // the first scan has not begun: it applies the filter
        guard let new else {
            // Every fact stream wanted again: scan the whole log (what the peer holds is skipped).
            catchingUp = []
            if old != nil { cursor = 0; lastVectorsAcceptedMillis = t; return [.rescan] }
            return []
        }
        // Streams no longer subscribed stop being read; `public` and the user's streams stay.
        catchingUp = catchingUp.filter { !$0.isFactPartition || new.contains($0) }
        if let old { catchingUp.formUnion(new.subtracting(old)) }
        return catchingUp.isEmpty ? [] : [.rescan]
    }

    /// A subscription held because it came too soon after the last (`subscribeIntervalMillis`), taken now if
    /// it is due. The shell calls it now and then (the node: about once a second per peer); it tells the
    /// shell's index when the subscription changed (compare `peerSubscription`).
    public mutating func subscriptionIfDue() -> [Action] {
        guard state == .ready, let held = heldSubscription else { return [] }
        let t = config.monotonicClock()
        if let last = lastSubscribeMillis, t < last &+ Self.subscribeIntervalMillis { return [] }
        return applySubscription(held, now: t)
    }

    /// How many subscriptions this session took so far: the shell re-indexes the peer when it changes.
    public private(set) var subscriptionsTaken = 0

    /// True when a subscription waits to be taken (`subscriptionIfDue`).
    public var holdsSubscription: Bool { heldSubscription != nil }

    /// Most stream names a peer's subscriptions may carry at once (a full subscription of 50,000, and some small ones).
    public static let subscribeStreamsBurst = 60_000
    /// Stream names a second a peer's subscriptions may carry over time, after the burst.
    public static let subscribeStreamsPerSecond = 10_000
    private var subscribeTokens = Double(subscribeStreamsBurst)
    private var subscribeTokensAt: UInt64 = 0

    /// Least time between two subscriptions taken once the scan began.
    public static let subscribeIntervalMillis: UInt64 = 2_000
    private var lastSubscribeMillis: UInt64?
    /// A subscription that came too soon (`.some(nil)`: every stream).
    private var heldSubscription: Set<StreamID>??

    /// A digest of vectors (for "the same vectors again"), independent of the dictionary's order.
    static func digest(_ vectors: [StreamID: VersionVector]) -> [UInt8] {
        var w = ByteWriter(capacity: 64 * vectors.count)
        for s in vectors.keys.sorted() {
            w.string(s.description)
            for e in vectors[s]!.sorted { w.u64(e.origin.replica.rawValue); w.u32(e.origin.epoch); w.u64(e.counter) }
        }
        return Digest.blake2b(w.bytes, length: 16)
    }

    /// Events of one stream in `catchingUp`, read by stream (each origin's in counter order, after what the
    /// peer holds: `EventLog.streamEvents(_:beyond:limit:)`): the batches to send, as `offer` makes them.
    /// What the window has no room for is read again later (the peer's vectors did not move past it).
    public mutating func offer(stream: StreamID, _ events: [Event]) -> [Action] {
        guard state == .ready, let grants, catchingUp.contains(stream) else { return [] }
        var out: [Action] = []
        var batch: [Event] = []
        var bytes = 0
        for e in events where e.stream == stream && sends(e, grants) {
            guard add(e, to: &batch, &bytes, out: &out) else { break }
        }
        flush(&batch, &bytes, into: &out)
        relaySignatures.removeAll(keepingCapacity: true)
        retiredBefore.removeAll(keepingCapacity: true)
        return out
    }

    /// The shell read `stream` by stream and found nothing more the peer lacks: it is caught up, and the scan
    /// in log order sends its new events from now on.
    public mutating func caughtUp(_ stream: StreamID) {
        catchingUp.remove(stream)
    }

    /// Tells the peer which fact streams this side wants (section 6.7), when that changed since the last
    /// time; nil: all of them, the default of a session, so nothing is sent until a subscription is set.
    /// Call it once the session is ready, before `sendVectors`, and again whenever the interests resolve
    /// to other streams.
    public mutating func subscribe(_ streams: Set<StreamID>?) -> [Action] {
        guard state == .ready, streams != localSubscription else { return [] }
        localSubscription = streams
        return emit(.subscribe(streams.map { $0.sorted() }))
    }

    /// Whether `e` goes to the peer: it may read it, does not hold it, it is the next the peer lacks of its
    /// origin, the peer wants it (its subscription), its encoding is the shortest (an event with a longer
    /// varint, stored by an older build, would be refused at decode, encoding.md section 1), and, when this
    /// side is a device, it is this replica's own or one it can relay: signed by its origin (section 6.9).
    /// An event skipped for its form or a missing signature is skipped with everything after it of its
    /// origin, since each must be the next the peer lacks: the peer never sees a gap (the cluster sends
    /// unsigned ones).
    private mutating func sends(_ e: Event, _ grants: Grants) -> Bool {
        guard grants.peerMayRead(e.stream), e.hasShortestEncoding else { return false }
        let held = peerVectors[e.stream]?[e.id.origin] ?? 0
        var retiredFrom: UInt64?
        if held != e.id.counter - 1 {
            // The peer lacks counters before this event: sent only when this side retired exactly those
            // (section 6.10), with a `retired` range that makes them held.
            guard grants.localIsCluster, held < e.id.counter - 1, let r = config.retiredRange?(e.stream, e.id.origin, held + 1),
                  r.upperBound == e.id.counter - 1 else { return false }
            retiredFrom = held + 1
        }
        // Another replica's event: the signature held of it goes with it (a device sends none without one).
        if e.id.origin.replica != config.replica && (!grants.localIsCluster || OriginSignature.isSigned(e.stream)) {
            let sig = config.storedSignature(e)
            guard sig != nil || grants.localIsCluster else { return false }
            relaySignatures[RelayKey(stream: e.stream, id: e.id)] = sig
        }
        if let sub = peerSubscription, e.stream.isFactPartition, !sub.contains(e.stream) { return false }
        if let f = retiredFrom { retiredBefore[RelayKey(stream: e.stream, id: e.id)] = f }
        return true
    }

    /// Adds `e` to the batch being built (sending the batch first when `e` would overfill it) and counts it
    /// as the peer's; false, with nothing added, when the window has no room for another batch.
    private mutating func add(_ e: Event, to batch: inout [Event], _ bytes: inout Int, out: inout [Action]) -> Bool {
        if batch.count == config.batchEvents || bytes + e.encoded.count > config.batchBytes {
            flush(&batch, &bytes, into: &out)
            if inFlight.count >= config.window { return false }
        }
        peerVectors[e.stream, default: VersionVector()].advance(to: e.id)
        batch.append(e)
        bytes += e.encoded.count
        return true
    }

    /// Numbers `batch` and adds its messages to `out`: packed, or self-describing when it cannot be packed
    /// (limits).
    private mutating func flush(_ batch: inout [Event], _ bytes: inout Int, into out: inout [Action]) {
        guard !batch.isEmpty else { return }
        let id = nextBatch
        nextBatch += 1
        inFlight[id] = batch.count
        sentEvents += batch.count
        if config.countsSentByStream { for e in batch { sentByStream[e.stream, default: 0] += 1 } }
        // Origin signatures first (section 6.9): this replica signs its own events of a user's streams, and
        // passes on the signatures it holds of others'.
        var signed: [SignatureEntry] = []
        for (i, e) in batch.enumerated() where OriginSignature.isSigned(e.stream) {
            if e.id.origin.replica == config.replica {
                signed.append(SignatureEntry(index: i, signature: OriginSignature.sign(e, key: config.credentials.deviceKey, chain: ownChain)))
            } else if let sig = relaySignatures.removeValue(forKey: RelayKey(stream: e.stream, id: e.id)) {
                signed.append(SignatureEntry(index: i, signature: sig))
            }
        }
        if !signed.isEmpty { out += emit(.signatures(batch: id, signed)) }
        if !retiredBefore.isEmpty {
            var ranges: [RetiredEntry] = []
            for (i, e) in batch.enumerated() {
                if let f = retiredBefore.removeValue(forKey: RelayKey(stream: e.stream, id: e.id)) { ranges.append(RetiredEntry(index: i, first: f)) }
            }
            if !ranges.isEmpty { out += emit(.retired(batch: id, ranges)) }
        }
        if let messages = packer.encode(batch: id, events: batch) {
            for m in messages { out += emit(m) }
        } else {
            out += emit(.events(batch: id, events: batch))
        }
        batch = []
        bytes = 0
    }

    /// Ends the session from this side (shutdown, timeout): sends an error frame and closes.
    public mutating func abort(_ code: SyncErrorCode, _ message: String) -> [Action] {
        guard state != .closed else { return [] }
        return fail(code, message)
    }

    // MARK: Helpers

    /// `m` as it goes on the wire: sealed once the handshake is complete, as it is before. The frame with the
    /// last nonce below `nonceLimit` is reserved for the `error` that ends the session.
    private mutating func emit(_ m: Message) -> [Action] {
        guard channel != nil else { return [.send(m)] }
        let isError: Bool
        if case .error = m { isError = true } else { isError = false }
        guard state == .ready || isError else { return [] }
        if !isError && channel!.send.nonce >= config.nonceLimit - 1 {
            return fail(.exhausted, "\(config.nonceLimit - 1) frames sealed with this session's key; the next session has new keys")
        }
        do { return [.send(try channel!.seal(m))] } catch {
            state = .closed
            return [.close(reason: "cannot seal a frame: \(error.description)")]
        }
    }

    private mutating func fail(_ code: SyncErrorCode, _ message: String) -> [Action] {
        // Before the handshake is complete an `error` travels in clear: it says that the handshake was refused
        // and nothing more (no replica, user, key or reason: `Protocol/sync.md` 11). The reason is for this
        // side's log (`close`). A version mismatch names versions only, which helps the peer and names no one.
        let wire = channel == nil && code != .version ? Self.refusedInClear(code) : message
        state = .closed
        return emit(.error(code: code, message: wire)) + [.close(reason: "\(code): \(message)")]
    }

    /// The text of an `error` sent before the handshake is complete (in clear).
    public static func refusedInClear(_ code: SyncErrorCode) -> String {
        "handshake refused (\(code)); the reason is in the refusing side's log"
    }
}
