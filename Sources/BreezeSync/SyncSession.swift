public import BreezeCore
import BreezeCrypto

/// The sync protocol for one connection, with no I/O (in the manner of SWIM's core): every input is a
/// method that returns the `Action`s the shell must carry out. The shell (`BreezeNet`) owns the socket,
/// the timers and the database; tests drive this type directly.
///
/// Handshake (`Protocol/sync.md` section 4): the client sends `hello` with a fresh nonce; the server answers
/// `challenge` with its own nonce and an HMAC proof over both nonces; the client checks it and answers
/// `auth` with its proof; the server checks that and sends `ready`. The secret never crosses the wire, and a
/// recorded handshake cannot be replayed because each side's proof covers the other side's fresh nonce.
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
        /// This replica.
        public var replica: ReplicaID
        /// What this replica's secret grants.
        public var scope: Scope
        /// The cluster secret (scope `.cluster`) or this user's key (scope `.user`).
        public var secret: [UInt8]
        /// Most events in one batch.
        public var batchEvents = 2048
        /// Most encoded bytes in one batch (well under the frame limit).
        public var batchBytes = 512 * 1024
        /// Most unacknowledged batches in flight.
        public var window = 4
        /// The protocol versions this side offers (within `SyncSession.versions`; tests narrow it to speak
        /// version 1).
        public var versions = SyncSession.versions
        /// Dictionary sizes of the packed encoder (version 2); at most the protocol's, smaller in tests.
        public var packedLimits = Packed.Limits.protocolDefault

        public init(replica: ReplicaID, scope: Scope, secret: [UInt8]) {
            self.replica = replica
            self.scope = scope
            self.secret = secret
        }
    }

    /// Where the session is.
    public enum State: Equatable, Sendable {
        case idle, awaitingHello, awaitingChallenge, awaitingAuth, awaitingReady, ready, closed
    }

    /// What the shell must do.
    public enum Action: Equatable, Sendable {
        /// Write this message.
        case send(Message)
        /// Close the connection (after writing anything queued). The reason is for the log.
        case close(reason: String)
        /// The peer is authenticated; the shell should now call `sendVectors(local:)`.
        case authenticated(peer: ReplicaID, scope: Scope)
        /// Store these events (one transaction), then call `committed(batch:report:)`.
        case ingest(batch: UInt64, events: [Event])
        /// The peer's vectors arrived or changed: scanning for this peer restarts at `cursor`.
        case rescan
        /// The shell should send this replica's vectors again (after a gap was detected).
        case resendVectors
    }

    public let role: Role
    public let config: Config
    private let nonce: [UInt8]
    /// The current state.
    public private(set) var state: State = .idle
    /// The protocol version of this session, once the handshake chose it.
    public private(set) var version: UInt16?
    /// The authenticated peer.
    public private(set) var peerReplica: ReplicaID?
    /// The grants of this session, once authenticated.
    public private(set) var grants: Grants?
    /// What the peer holds, as far as this side knows (its vectors, plus what was sent to or received from it).
    public private(set) var peerVectors: [StreamID: VersionVector] = [:]
    /// The local log position (sequence number) up to which events were considered for this peer.
    public private(set) var cursor: Int64 = 0
    /// Events sent and received on this session.
    public private(set) var sentEvents = 0, receivedEvents = 0
    private var peerNonce: [UInt8] = []
    private var peerScope: Scope?
    private var key: [UInt8] = []
    private var vectorsReceived = false
    private var nextBatch: UInt64 = 1
    private var inFlight: [UInt64: Int] = [:]
    /// The number the peer's next `events` must carry: batches arrive numbered 1, 2, 3, ...
    private var expectedBatch: UInt64 = 1
    /// Version 2: the packed-event contexts of this connection, one per direction (`Protocol/sync.md` 3.1).
    private var packer: PackedEncoder
    private var unpacker = PackedDecoder()
    /// Acknowledgements received on this session (the shell times out a session whose in-flight batches
    /// get none for too long).
    public private(set) var acksReceived = 0

    /// The protocol versions this build speaks: 1 (self-describing events) and 2 (packed events).
    public static let versions: ClosedRange<UInt16> = 1...2

    /// A session; `nonce` must be 32 fresh random bytes (`SecureRandom.bytes(32)`), injected for tests.
    public init(role: Role, config: Config, nonce: [UInt8]) {
        precondition(nonce.count == Message.nonceLength)
        precondition(Self.versions.contains(config.versions.lowerBound) && Self.versions.contains(config.versions.upperBound))
        self.role = role
        packer = PackedEncoder(limits: config.packedLimits)
        self.config = config
        self.nonce = nonce
    }

    /// Starts the session: the client sends `hello`, the server waits for one.
    public mutating func start() -> [Action] {
        guard state == .idle else { return [] }
        switch role {
        case .client:
            state = .awaitingChallenge
            return [.send(.hello(minVersion: config.versions.lowerBound, maxVersion: config.versions.upperBound,
                                 replica: config.replica, scope: config.scope, nonce: nonce))]
        case .server:
            state = .awaitingHello
            return []
        }
    }

    /// Batches sent and not yet acknowledged.
    public var unacknowledged: Int { inFlight.count }

    /// True in ready until the peer's `vectors` arrive (the shell times out a peer that never sends them).
    public var awaitingVectors: Bool { state == .ready && !vectorsReceived }

    /// True when the shell should read more of the log for this peer.
    public var wantsEvents: Bool { state == .ready && vectorsReceived && inFlight.count < config.window }

    /// How many log rows the shell may read for this peer now.
    public var readLimit: Int { wantsEvents ? (config.window - inFlight.count) * config.batchEvents : 0 }

    // MARK: Input: a message from the peer

    /// Handles one message from the peer.
    public mutating func receive(_ m: Message) -> [Action] {
        switch (state, m) {
        case (.closed, _):
            return []
        case (_, .error(let code, let message)):
            state = .closed
            return [.close(reason: "peer reported \(code): \(message)")]
        case (.awaitingHello, .hello(let lo, let hi, let replica, let scope, let peerNonce)):
            guard lo <= config.versions.upperBound && hi >= config.versions.lowerBound && lo <= hi else {
                return fail(.version, "no common protocol version (peer speaks \(lo)...\(hi), this side \(config.versions))")
            }
            guard replica != config.replica else { return fail(.unexpected, "connected to itself") }
            guard let sessionScope = Scope.session(config.scope, scope),
                  let key = sessionScope.key(ownScope: config.scope, secret: config.secret) else {
                return fail(.authentication, "scope \(scope) is not accepted by a replica of scope \(config.scope)")
            }
            self.peerNonce = peerNonce
            self.peerScope = scope
            self.peerReplica = replica
            self.key = key
            grants = Grants(scope: sessionScope, localIsCluster: config.scope == .cluster, peerIsCluster: trustsClusterClaim(scope))
            state = .awaitingAuth
            let version = min(hi, config.versions.upperBound)
            self.version = version
            return [.send(.challenge(version: version, replica: config.replica, scope: config.scope, nonce: nonce,
                                     proof: proof(label: "server")))]
        case (.awaitingChallenge, .challenge(let version, let replica, let scope, let peerNonce, let peerProof)):
            guard config.versions.contains(version) else { return fail(.version, "server chose version \(version)") }
            guard replica != config.replica else { return fail(.unexpected, "connected to itself") }
            guard let sessionScope = Scope.session(config.scope, scope),
                  let key = sessionScope.key(ownScope: config.scope, secret: config.secret) else {
                return fail(.authentication, "server scope \(scope) is not accepted by a replica of scope \(config.scope)")
            }
            self.peerNonce = peerNonce
            self.peerScope = scope
            self.peerReplica = replica
            self.key = key
            guard HMAC.equal(peerProof, proof(label: "server")) else {
                return fail(.authentication, "the server could not prove it holds the secret")
            }
            grants = Grants(scope: sessionScope, localIsCluster: config.scope == .cluster, peerIsCluster: trustsClusterClaim(scope))
            self.version = version
            state = .awaitingReady
            return [.send(.auth(proof: proof(label: "client")))]
        case (.awaitingAuth, .auth(let peerProof)):
            guard HMAC.equal(peerProof, proof(label: "client")) else {
                return fail(.authentication, "the client could not prove it holds the secret")
            }
            state = .ready
            return [.send(.ready), .authenticated(peer: peerReplica!, scope: grants!.scope)]
        case (.awaitingReady, .ready):
            state = .ready
            return [.authenticated(peer: peerReplica!, scope: grants!.scope)]
        case (.ready, .vectors(let list)):
            var vectors: [StreamID: VersionVector] = [:]
            for sv in list {
                guard grants!.peerMayRead(sv.stream) else {
                    return fail(.forbidden, "no grant to read stream \(sv.stream) in scope \(grants!.scope)")
                }
                vectors[sv.stream] = sv.vector
            }
            peerVectors = vectors
            vectorsReceived = true
            cursor = 0
            return [.rescan]
        case (.ready, .events(let batch, let events)):
            // TCP neither loses, repeats nor reorders bytes, so a number out of sequence means a broken
            // middlebox or a bug: end the session; the next one resumes from vectors, nothing applied twice.
            guard batch == expectedBatch else {
                return fail(.unexpected, "batch \(batch) out of sequence (expected \(expectedBatch))")
            }
            return accept(events)
        case (.ready, .packed(let payload)) where version! >= 2:
            // The batch number is implicit; the check covers it, the dictionaries and every event, so a frame
            // lost, repeated or reordered fails here and nothing of it is stored.
            let events: [Event]
            do { events = try unpacker.decode(batch: expectedBatch, payload: payload) } catch {
                return fail(error.code, error.description)
            }
            return accept(events)
        case (.ready, .reset) where version! >= 2:
            unpacker.reset()
            return []
        case (.ready, .ack(let batch, _, _)):
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
        case (.ready, .ping(let v)):
            return [.send(.pong(v))]
        case (.ready, .pong):
            return []
        default:
            return fail(.unexpected, "message 0x\(String(m.typeByte, radix: 16)) is not allowed in state \(state)")
        }
    }

    /// Batch `expectedBatch` arrived: check the grants of every event before anything is stored.
    private mutating func accept(_ events: [Event]) -> [Action] {
        let batch = expectedBatch
        expectedBatch += 1
        for e in events where !grants!.peerMayWrite(e.stream) {
            return fail(.forbidden, "no grant to write stream \(e.stream) in scope \(grants!.scope); batch refused")
        }
        for e in events { peerVectors[e.stream, default: VersionVector()].advance(to: e.id) }
        receivedEvents += events.count
        return [.ingest(batch: batch, events: events)]
    }

    /// A frame that could not be decoded: the session ends.
    public mutating func receiveGarbage(_ error: FrameError) -> [Action] {
        guard state != .closed else { return [] }
        return fail(error.code, error.description)
    }

    // MARK: Input: the shell's results

    /// This replica's vectors for the streams it wants from the peer (only those the peer may write here are
    /// sent). Call after `.authenticated` and after `.resendVectors`.
    public mutating func sendVectors(local: [StreamID: VersionVector]) -> [Action] {
        guard state == .ready, let grants else { return [] }
        let list = local.filter { grants.peerMayWrite($0.key) }.sorted { $0.key < $1.key }
            .map { StreamVector(stream: $0.key, vector: $0.value) }
        return [.send(.vectors(list))]
    }

    /// The events of batch `batch` are committed (with this report): acknowledge it. Events refused as
    /// gaps mean the peer skipped something this side lacks; this side then re-sends its vectors so the
    /// peer rescans, at most once per `resyncIntervalMillis` (a peer that keeps sending gaps cannot make
    /// the two sides rescan in a loop). `nowMillis` is the shell's clock.
    public mutating func committed(batch: UInt64, inserted: Int, duplicates: Int, gaps: Int, nowMillis: UInt64 = 0) -> [Action] {
        guard state == .ready else { return [] }
        var out: [Action] = [.send(.ack(batch: batch, inserted: UInt32(clamping: inserted), duplicates: UInt32(clamping: duplicates)))]
        if gaps > 0 && (lastResyncMillis == nil || nowMillis >= lastResyncMillis! + Self.resyncIntervalMillis) {
            lastResyncMillis = nowMillis
            out.append(.resendVectors)
        }
        return out
    }

    /// Least time between two re-sent vectors on one session.
    public static let resyncIntervalMillis: UInt64 = 10_000
    private var lastResyncMillis: UInt64?

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
        func flush() {
            guard !batch.isEmpty else { return }
            let id = nextBatch
            nextBatch += 1
            inFlight[id] = batch.count
            sentEvents += batch.count
            // Version 2 packs the batch; one that cannot be packed (limits) travels self-describing.
            if version! >= 2, let messages = packer.encode(batch: id, events: batch) {
                out += messages.map { .send($0) }
            } else {
                out.append(.send(.events(batch: id, events: batch)))
            }
            batch = []
            bytes = 0
        }
        for (seq, e) in entries {
            guard grants.peerMayRead(e.stream), !(peerVectors[e.stream]?.contains(e.id) ?? false) else {
                taken = seq
                continue
            }
            if batch.count == config.batchEvents || bytes + e.encoded.count > config.batchBytes {
                flush()
                if inFlight.count >= config.window { break }
            }
            peerVectors[e.stream, default: VersionVector()].advance(to: e.id)
            batch.append(e)
            bytes += e.encoded.count
            taken = seq
        }
        flush()
        cursor = max(cursor, taken == cursor && entries.isEmpty ? scannedTo : taken)
        return out
    }

    /// Ends the session from this side (shutdown, timeout): sends an error frame and closes.
    public mutating func abort(_ code: SyncErrorCode, _ message: String) -> [Action] {
        guard state != .closed else { return [] }
        return fail(code, message)
    }

    // MARK: Helpers

    /// Whether to believe a peer that says it holds the cluster secret. A cluster replica proved it with the
    /// cluster key itself. A user replica cannot check the claim: in a `user:X` session both sides prove
    /// with X's key, so another device of X could pose as the cluster and write `public`. A user replica
    /// therefore believes the claim only from a peer it dialled itself (a server its owner configured),
    /// never from an inbound connection (`Protocol/sync.md` section 5).
    private func trustsClusterClaim(_ peerScope: Scope) -> Bool {
        guard peerScope == .cluster else { return false }
        return config.scope == .cluster || role == .client
    }

    private mutating func fail(_ code: SyncErrorCode, _ message: String) -> [Action] {
        state = .closed
        return [.send(.error(code: code, message: message)), .close(reason: "\(code): \(message)")]
    }

    /// HMAC-SHA-256(key, "breeze-sync-v1 " label | client nonce | server nonce | client replica | server
    /// replica | client scope | server scope).
    private func proof(label: String) -> [UInt8] {
        let (cn, sn) = role == .client ? (nonce, peerNonce) : (peerNonce, nonce)
        let (cr, sr) = role == .client ? (config.replica, peerReplica!) : (peerReplica!, config.replica)
        let (cs, ss) = role == .client ? (config.scope, peerScope!) : (peerScope!, config.scope)
        var w = ByteWriter(capacity: 160)
        w.string("breeze-sync-v1 " + label)
        w.raw(cn); w.raw(sn)
        w.u64(cr.rawValue); w.u64(sr.rawValue)
        w.string(cs.description); w.string(ss.description)
        return HMAC.sha256(key: key, message: w.bytes)
    }
}
