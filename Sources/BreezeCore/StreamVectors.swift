/// The binary form of a set of per-stream version vectors, shared by the wire (`vectors` message) and the
/// peer table: `list<(string stream, list<(u64 replica, varint epoch, varint counter)>)>`, streams sorted.
public enum StreamVectors {
    /// Encodes vectors, streams and origins sorted.
    public static func encode(_ vectors: [StreamID: VersionVector], into w: inout ByteWriter) {
        w.array(vectors.keys.sorted()) { w, s in
            w.string(s.description)
            w.array(vectors[s]!.sorted) { w, e in
                w.u64(e.origin.replica.rawValue); w.varint(UInt64(e.origin.epoch)); w.varint(e.counter)
            }
        }
    }

    /// Encodes vectors to bytes.
    public static func encode(_ vectors: [StreamID: VersionVector]) -> [UInt8] {
        var w = ByteWriter()
        encode(vectors, into: &w)
        return w.bytes
    }

    /// Decodes vectors; throws on malformed input (including a stream listed twice).
    public static func decode(from r: inout ByteReader) throws(DecodingError) -> [(StreamID, VersionVector)] {
        try r.array { (r: inout ByteReader) throws(DecodingError) -> (StreamID, VersionVector) in
            let text = try r.string()
            let stream: StreamID
            do { stream = try StreamID(parsing: text) } catch { throw DecodingError.malformed("stream '\(text)'") }
            var vv = VersionVector()
            let n = try r.count(limit: r.remaining)
            for _ in 0..<n {
                let replica = ReplicaID(rawValue: try r.u64())
                let epoch = try r.varint()
                guard epoch >= 1 && epoch <= UInt64(UInt32.max) else { throw DecodingError.malformed("epoch \(epoch)") }
                vv[Origin(replica: replica, epoch: UInt32(epoch))] = try r.varint()
            }
            return (stream, vv)
        }
    }

    /// Decodes vectors from bytes.
    public static func decode(_ bytes: [UInt8]) throws(DecodingError) -> [StreamID: VersionVector] {
        var r = ByteReader(bytes)
        var out: [StreamID: VersionVector] = [:]
        for (s, v) in try decode(from: &r) { out[s] = v }
        try r.expectEnd("vectors")
        return out
    }
}
