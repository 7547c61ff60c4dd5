// Fuzz target: the handshake and the session state machine (`BreezeSync.SyncSession`), in either role.
//
// Input: byte 0 picks this side's role and scope, the peer's scope, and whether an honest peer (a real
// session with a certificate of the trusted authority) completes the handshake first; the rest is a script of
// steps: a message made of raw bytes (decoded as the node would, or refused as garbage), a well-formed message
// from the peer (vectors, events with valid hashes, packed batches from a real encoder with a right or wrong
// batch number, resets, acknowledgements, pings; sealed by the honest peer when there is one), or a call from
// the shell (offer, committed, sendVectors, abort, storageFailed; log rows are offered only while the window
// has room, as the node does). Checks, besides "no trap, no hang, no leak": without the honest handshake the
// session never authenticates (no key, no certificate can be forged); it authenticates at most once; it asks
// to store only events the grants let the peer write, and sends only events the peer may read, all sealed
// after the handshake (the honest peer opens each, and its decoder must accept every packed batch); at most
// `window` batches are unacknowledged; once closed it does nothing more.
import BreezeCore
import BreezeCrypto
import BreezeSync
import FuzzSupport

// Globals of main.swift are set by top-level code, which never runs under libFuzzer's main: keep
// constants in static properties (initialised lazily) instead.
enum Fixed {
    static let authority = Ed25519.KeyPair(seed: [UInt8](repeating: 0x5A, count: 32))
    static let now: UInt64 = 1_750_000_000_000
    static let streams: [StreamID] = [.public, .user("ana"), .user("bo"), .health("ana")]
}

func config(replica: UInt64, scope: Scope) -> SyncSession.Config {
    let device = Ed25519.KeyPair(seed: [UInt8](repeating: UInt8(replica), count: 32))
    let cert = try! Certificate.issue(role: .device, key: device.publicKey, replica: ReplicaID(rawValue: replica), scope: scope,
                                      notBefore: Fixed.now - 1000, notAfter: Fixed.now + 1000, signer: Fixed.authority)
    let credentials = try! SyncCredentials(deviceKey: device, chain: [cert], authority: Fixed.authority.publicKey, nowMillis: Fixed.now)
    var c = SyncSession.Config(credentials: credentials)
    c.batchEvents = 3
    c.batchBytes = 1 << 20   // batches cut by count only: with cuts by size one step may exceed the window (sync.md 6.3)
    c.window = 2
    return c
}

/// An event with a correct hash whose fields come from the input. From a peer, its epoch or counter may be 0
/// (which receivers refuse); a log row (`logRow`) is always one a log can hold: epoch and counter from 1.
func event(_ input: inout FuzzInput, logRow: Bool = false) -> Event {
    let stream = Fixed.streams[Int(input.byte()) % Fixed.streams.count]
    let least: UInt8 = logRow ? 1 : 0
    let id = EventID(origin: Origin(replica: ReplicaID(rawValue: UInt64(input.byte() % 4) + 1), epoch: UInt32(input.byte() % 3 + least)),
                     counter: UInt64(input.byte()) + UInt64(least))
    let body: EventBody = input.byte() & 1 == 0 ? .favouriteAdd(sensor: "s\(input.byte())")
        : .reading(Reading(source: "f", sensor: "s", time: Int64(input.byte()), values: [Measurement("pm25", 1)]))
    return Event(stream: stream, id: id, hlc: HLC(rawValue: UInt64(input.u16())), body: body)
}

/// Version vectors from the input. From a peer, an epoch may be 0 (which receivers refuse); a local log's
/// (`local`) never has one: epochs start at 1 (found by fuzzing: the harness handed the session local vectors
/// of epoch 0, which it sent on and the honest peer rightly refused).
func vectors(_ input: inout FuzzInput, local: Bool = false) -> [StreamID: VersionVector] {
    var out: [StreamID: VersionVector] = [:]
    for _ in 0..<Int(input.byte() % 4) {
        var v = VersionVector()
        let epoch: UInt32 = local ? UInt32(input.byte() % 3) + 1 : 0
        v.advance(to: EventID(origin: Origin(replica: ReplicaID(rawValue: UInt64(input.byte() % 4) + 1), epoch: epoch),
                              counter: UInt64(input.byte())))
        out[Fixed.streams[Int(input.byte()) % Fixed.streams.count]] = v
    }
    return out
}

/// The session under test and what it did so far.
struct Harness {
    var session: SyncSession
    /// The honest peer once its handshake completed: it seals what the script sends and opens what the session
    /// sends.
    var peer: SyncSession?
    var authenticatedCount = 0
    var closed = false
    /// The peer's side of what the session sends: batch numbers and packed contexts.
    var mirror = PackedDecoder()
    var sentNext: UInt64 = 1
    /// The peer's packed encoder, and the number the session expects on its next batch.
    var peerEncoder = PackedEncoder()
    var peerNext: UInt64 = 1

    /// Runs one step's actions through the checks; returns the messages it sent.
    @discardableResult
    mutating func check(_ actions: [SyncSession.Action]) -> [Message] {
        if closed { require(actions.isEmpty, "a closed session acted: \(actions)") }
        var sent: [Message] = []
        for a in actions {
            switch a {
            case .send(let wire):
                var m = wire
                if case .sealed = wire, var p = peer, p.state == .ready {
                    // The peer only seals and opens (it is not handed what it opened: its own sync state is
                    // not the script's, and an acknowledgement of a batch the script sent would close it).
                    let opened = p.unseal(wire)
                    guard case .message(let inner) = opened else {
                        require(false, "the honest peer cannot open a sealed frame: \(opened)"); continue
                    }
                    m = inner
                    peer = p
                }
                sent.append(m)
                var events: [Event] = []
                switch m {
                case .events(let n, let e):
                    require(n == sentNext, "sent batch \(n), expected \(sentNext)")
                    events = e
                    sentNext += 1
                case .packed(let payload):
                    do { events = try mirror.decode(batch: sentNext, payload: payload) } catch {
                        require(false, "the peer cannot read packed batch \(sentNext): \(error)")
                    }
                    sentNext += 1
                case .reset: mirror.reset()
                default: break
                }
                for e in events {
                    require(session.grants?.peerMayRead(e.stream) == true, "sent \(e.stream), which the peer may not read")
                }
            case .close:
                closed = true
                require(session.state == .closed, "closed but state \(session.state)")
            case .authenticated:
                authenticatedCount += 1
                require(authenticatedCount == 1, "authenticated twice")
            case .ingest(let batch, let events, _, _):
                require(session.state == .ready, "ingest in state \(session.state)")
                peerNext = batch + 1
                for e in events {
                    require(session.grants?.peerMayWrite(e.stream) == true, "asked to store \(e.stream), which the peer may not write")
                }
            case .rescan, .resendVectors:
                require(session.state == .ready, "\(a) in state \(session.state)")
            case .skipped(let batch, let count, _):
                // Always followed by the batch's `ingest` (of the events not skipped).
                require(session.state == .ready, "skipped in state \(session.state)")
                require(count > 0, "skipped \(count) events of batch \(batch)")
            }
        }
        require(session.unacknowledged <= session.config.window, "\(session.unacknowledged) batches in flight")
        return sent
    }

    /// A message from the peer: sealed by the honest peer when there is one and it is still ready.
    mutating func receive(_ m: Message) {
        var wire = m
        if var p = peer, p.state == .ready, session.state == .ready {
            for case .send(let sealed) in p.send(m) { wire = sealed }
            peer = p
        }
        let a = session.receive(wire)
        check(a)
    }

    /// Raw bytes from the wire, as they are.
    mutating func receiveRaw(_ m: Message) { let a = session.receive(m); check(a) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSession(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let setup = input.byte()
    let role: SyncSession.Role = setup & 1 == 0 ? .server : .client
    let honest = setup & 2 != 0
    let scope: Scope = setup & 4 == 0 ? .cluster : .user("ana")
    let peerScope: Scope = setup & 8 == 0 ? .cluster : .user("ana")
    var h = Harness(session: SyncSession(role: role, config: config(replica: 1, scope: scope),
                                         ephemeralKey: [UInt8](repeating: 1, count: 32), nowMillis: Fixed.now))
    var toPeer = h.check(h.session.start())

    if honest {
        var peer = SyncSession(role: role == .client ? .server : .client, config: config(replica: 2, scope: peerScope),
                               ephemeralKey: [UInt8](repeating: 2, count: 32), nowMillis: Fixed.now)
        var toSession: [Message] = []
        for case .send(let m) in peer.start() { toSession.append(m) }
        while !toPeer.isEmpty || !toSession.isEmpty {
            for m in toPeer { for case .send(let r) in peer.receive(m) { toSession.append(r) } }
            toPeer = []
            for m in toSession {
                let actions = h.session.receive(m)
                toPeer += h.check(actions)
            }
            toSession = []
        }
        require(h.session.state == .ready && peer.state == .ready,
                "an honest handshake (\(scope) with \(peerScope)) did not complete: \(h.session.state)")
        h.peer = peer
        h.check(h.session.sendVectors(local: [:]))
    }

    var steps = 0
    while !input.isAtEnd && steps < 256 {
        steps += 1
        switch input.byte() % 9 {
        case 0:
            let length = Int(input.byte())
            let type = input.byte()
            let payload = input.take(length)
            do { h.receiveRaw(try Message.decode(type: type, payload: payload, range: 0..<payload.count)) } catch {
                h.check(h.session.receiveGarbage(FrameError(code: .malformed, error.description)))
            }
        case 1:
            h.receive(.events(batch: UInt64(input.byte()), events: (0..<Int(input.byte() % 6)).map { _ in event(&input) }))
        case 2:
            let list = vectors(&input).sorted { $0.key < $1.key }.map { StreamVector(stream: $0.key, vector: $0.value) }
            h.receive(input.byte() & 1 == 0 ? .vectors(list) : .vectorsPart(list))
        case 3:
            h.receive(.ack(batch: UInt64(input.byte() % 8), inserted: UInt32(input.byte()), duplicates: 0))
        case 4:
            h.receive(input.byte() & 1 == 0 ? .ping(UInt64(input.byte())) : .pong(UInt64(input.byte())))
        case 5:
            h.check(h.session.committed(batch: UInt64(input.byte()), inserted: Int(input.byte()), duplicates: Int(input.byte()),
                                        gaps: Int(input.byte() % 2)))
        case 6:
            // As the node does: log rows only while the window has room, at most `readLimit` of them.
            guard h.session.wantsEvents else { continue }
            var seq = h.session.cursor
            let entries = (0..<min(Int(input.byte() % 8), h.session.readLimit)).map { _ -> (seq: Int64, event: Event) in
                seq += 1
                return (seq, event(&input, logRow: true))
            }
            h.check(h.session.offer(entries, scannedTo: seq + Int64(input.byte() % 3)))
        case 7:
            h.check(h.session.sendVectors(local: vectors(&input, local: true)))
        default:
            switch input.byte() % 4 {
            case 0: h.check(h.session.abort(.shutdown, "fuzz"))
            case 1: h.check(h.session.storageFailed("fuzz"))
            case 2:
                // A packed batch from the peer's real encoder, numbered right or (sometimes) wrong.
                let wrong = input.byte() % 8 == 0
                let batch = wrong ? UInt64(input.byte()) : h.peerNext
                let events = (0..<Int(input.byte() % 6)).map { _ in event(&input) }
                for m in h.peerEncoder.encode(batch: batch, events: events) ?? [.events(batch: batch, events: events)] {
                    h.receive(m)
                }
            default: h.receive(.reset)
            }
        }
        if !honest {
            require(h.session.state != .ready && h.authenticatedCount == 0,
                    "authenticated without an honest handshake (role \(role), \(scope))")
        }
    }
    return 0
}
