import BreezeCore
import BreezeCrypto
import Foundation

/// One event as a line of JSON (the `breeze export` / `breeze import jsonl` format), carrying everything
/// needed to rebuild the event byte for byte:
///
///     {"seq":12,"id":"<replica>.<epoch>:<counter>","stream":"public","hlc":"1700000000123.4",
///      "time":"2023-10-26T18:00:00.000Z","type":"reading","version":1,"payload":"<base64>",
///      "hash":"<32 hex digits>","body":{...}}
///
/// `id`, `stream`, `hlc`, `type`, `version` and `payload` (base64 of the exact payload bytes) determine the
/// canonical encoding (`Event.init`); `hash` is checked against it on import. `seq` (the exporter's local
/// order), `time` and `body` (the payload decoded, for people reading the file) are informational and ignored
/// on import. An event of a user's streams whose origin signature the exporter holds carries it in
/// `signature` (`{"chain":["<hex certificate>",...],"value":"<hex>"}`, `Protocol/sync.md` 6.9), so an import
/// can check who made it.
enum EventLine {
    static func encode(_ e: Event, seq: Int64, signature: OriginSignature? = nil) -> String {
        var fields: [(String, JSONValue)] = [
            ("seq", .int(seq)),
            ("id", .string(e.id.description)),
            ("stream", .string(e.stream.description)),
            ("hlc", .string(e.hlc.description)),
            ("time", .string(ISOTime.format(millis: Int64(e.hlc.physicalMillis)))),
            ("type", .string(e.type)),
            ("version", .int(Int64(e.schemaVersion))),
            ("payload", .string(Data(e.payload).base64EncodedString())),
            ("hash", .string(e.hashHex)),
            ("body", (try? e.body().json) ?? .null),
        ]
        if let signature {
            fields.append(("signature", .object([("chain", .array(signature.chain.map { .string(Digest.hex($0)) })),
                                                 ("value", .string(Digest.hex(signature.signature)))])))
        }
        return JSONValue.object(fields).text
    }

    /// The event of one line and the origin signature it carries, if any.
    static func decodeSigned(_ line: Substring) throws(LineError) -> (event: Event, signature: OriginSignature?) {
        let e = try decode(line)
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
              let sig = object["signature"] else { return (e, nil) }
        guard let o = sig as? [String: Any], let chain = o["chain"] as? [String], let value = o["value"] as? String,
              !chain.isEmpty, chain.count <= 4, let bytes = Digest.bytes(hex: value) else {
            throw LineError("field 'signature' is not {\"chain\": [hex, ...], \"value\": hex}")
        }
        var certs: [[UInt8]] = []
        for c in chain {
            guard let b = Digest.bytes(hex: c) else { throw LineError("field 'signature': a certificate is not hexadecimal") }
            certs.append(b)
        }
        return (e, OriginSignature(chain: certs, signature: bytes))
    }

    /// Rebuilds the event of one line; the error says which field is wrong and why.
    static func decode(_ line: Substring) throws(LineError) -> Event {
        let object: Any
        do { object = try JSONSerialization.jsonObject(with: Data(line.utf8)) } catch {
            throw LineError("not valid JSON")
        }
        guard let o = object as? [String: Any] else { throw LineError("not a JSON object") }
        func string(_ key: String) throws(LineError) -> String {
            guard let v = o[key] else { throw LineError("missing field '\(key)'") }
            guard let s = v as? String else { throw LineError("field '\(key)' is not a string") }
            return s
        }
        let idText = try string("id")
        guard let id = EventID(idText) else { throw LineError("id '\(idText)': expected REPLICA.EPOCH:COUNTER") }
        let streamText = try string("stream")
        let stream: StreamID
        do { stream = try StreamID(parsing: streamText) } catch { throw LineError("stream '\(streamText)': \(error.description)") }
        let hlcText = try string("hlc")
        let parts = hlcText.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let ms = UInt64(parts[0]), ms < 1 << 48, let logical = UInt16(parts[1]) else {
            throw LineError("hlc '\(hlcText)': expected MILLIS.LOGICAL")
        }
        let type = try string("type")
        guard !type.isEmpty else { throw LineError("field 'type' is empty") }
        guard let version = o["version"] as? Int, (0...Int(UInt16.max)).contains(version) else {
            throw LineError("field 'version' is not a schema version (a whole number 0-65535)")
        }
        let payloadText = try string("payload")
        guard let payload = Data(base64Encoded: payloadText) else { throw LineError("field 'payload' is not base64") }
        let hashText = try string("hash").lowercased()
        guard hashText.utf8.count == Event.hashLength * 2, hashText.allSatisfy(\.isHexDigit) else {
            throw LineError("hash '\(hashText)': expected \(Event.hashLength * 2) hex digits")
        }
        let e = Event(stream: stream, id: id, hlc: HLC(physicalMillis: ms, logical: logical), type: type,
                      schemaVersion: UInt16(version), payload: [UInt8](payload))
        guard e.hashHex == hashText else {
            throw LineError("hash \(hashText) does not match the event's content (computed \(e.hashHex)): the line was altered")
        }
        guard e.encoded.count <= Event.maxEncodedSize else {
            throw LineError("event of \(e.encoded.count) bytes exceeds the \(Event.maxEncodedSize)-byte limit")
        }
        return e
    }

    /// Why a line was refused.
    struct LineError: Error, CustomStringConvertible {
        let description: String
        init(_ d: String) { description = d }
    }
}
