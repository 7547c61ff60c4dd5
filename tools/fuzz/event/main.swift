// Fuzz target: the event codec (`Event(decoding:)`, `EventBody.decode`) and applying events to a user state.
//
// Input: byte 0 picks the mode. Mode 0: the bytes are an encoded event, decoded as a peer's or the
// database's would be. Mode 1: byte 1 picks one of the known types (or a made-up one), byte 2 its schema
// version, the rest is the payload: this reaches the body decoders, which the event hash would otherwise
// guard. Checks, besides "no trap, no hang, no leak": a decoded event's bytes are its encoding; a decoded
// body re-encodes to bytes that decode to the same encoding (compared as bytes, so NaN compares equal);
// an event built from the body decodes back from its bytes; applying it to a user state twice changes
// nothing the second time.
import BreezeCore
import FuzzSupport

// Globals of main.swift are set by top-level code, which never runs under libFuzzer's main.
enum Fixed { static let types = EventBody.knownTypes.keys.sorted() + ["made.up"] }

func checkBody(_ body: EventBody) {
    let (type, version, payload) = body.encode()
    guard let again = try? EventBody.decode(type: type, version: version, payload: payload) else {
        require(false, "\(type) v\(version): its own encoding does not decode")
        return
    }
    let second = again.encode()
    require(second.type == type && second.version == version && second.payload == payload,
            "\(type) v\(version): encoding is not stable")
    let stream: StreamID = switch body.streamKind {
    case .public, .any, .sensorFacts, .pollenFacts, .climateFacts: .public
    case .user: .user("fuzz")
    case .health: .health("fuzz")
    }
    let event = Event(stream: stream, id: EventID(origin: Origin(replica: ReplicaID(rawValue: 9), epoch: 1), counter: 1),
                      hlc: HLC(rawValue: 1), body: body)
    let decoded = try? Event(decoding: event.encoded)
    require(decoded == event, "\(type): an event built from a decoded body does not decode from its bytes")
    var state = UserState()
    state.apply(event)
    let once = state.stateHash
    state.apply(event)
    require(state.stateHash == once, "\(type): applying an event twice changed the state")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEvent(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    if input.byte() & 1 == 0 {
        let bytes = input.rest()
        guard let e = try? Event(decoding: bytes) else { return 0 }
        require(e.encoded == bytes, "a decoded event's bytes differ from its input")
        require(e.encoded.count <= Event.maxEncodedSize, "event larger than the limit accepted")
        if let body = try? e.body() { checkBody(body) }
    } else {
        let type = Fixed.types[Int(input.byte()) % Fixed.types.count]
        let version = UInt16(input.byte() % 3)
        let payload = input.rest()
        guard let body = try? EventBody.decode(type: type, version: version, payload: payload) else { return 0 }
        if case .unknown = body {
            require(EventBody.knownTypes[type] != version, "\(type) v\(version) decoded as unknown")
        }
        checkBody(body)
    }
    return 0
}
