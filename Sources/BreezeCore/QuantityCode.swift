/// How a reading's quantity name is written where names repeat for every block and every hour (`reading.block`
/// payloads and the projection's hour buckets): a quantity of `Protocol/encoding.md`'s table is one byte, its
/// position in `QuantityCode.known` plus one; any other name is the byte 0 and the name as a string. Nine
/// PurpleAir names take 9 bytes instead of 126.
///
/// Canonical: a known name is always written by its code (a decoder refuses the string form of a known name),
/// so equal blocks and buckets keep equal bytes. `known` is part of the format: names are only ever appended.
public enum QuantityCode {
    /// The known quantities, in `Protocol/encoding.md`'s order; code `i + 1` names `known[i]`.
    public static let known: [String] = [
        "pm25_cf1_a", "pm25_cf1_b", "pm25_atm_a", "pm25_atm_b", "pm25_alt_a", "pm25_alt_b",
        "pm25_cf1", "temperature_housing", "humidity_housing",
        "pm25", "pm10", "pm25_nowcast", "o3_nowcast", "pm10_nowcast",
        "aqi", "o3_aqi", "pm10_aqi", "pm25_24h", "aqi_daily",
        "o3", "no2", "temperature", "humidity", "pressure",
    ]

    /// Name -> code.
    static let codes: [String: UInt64] = {
        var out: [String: UInt64] = [:]
        for (i, q) in known.enumerated() { out[q] = UInt64(i + 1) }
        return out
    }()
}

extension ByteWriter {
    /// Writes a quantity name in the `QuantityCode` form.
    public mutating func quantity(_ q: String) {
        if let c = QuantityCode.codes[q] { varint(c) } else {
            varint(0)
            string(q)
        }
    }
}

extension ByteReader {
    /// Reads a quantity name in the `QuantityCode` form; an unknown code, or a known name spelt out, is malformed.
    public mutating func quantity() throws(DecodingError) -> String {
        let c = try varint()
        if c == 0 {
            let q = try string()
            guard QuantityCode.codes[q] == nil else { throw DecodingError.malformed("quantity '\(q)' spelt out; it has code \(QuantityCode.codes[q]!)") }
            return q
        }
        guard c <= UInt64(QuantityCode.known.count) else { throw DecodingError.malformed("unknown quantity code \(c)") }
        return QuantityCode.known[Int(c - 1)]
    }
}
