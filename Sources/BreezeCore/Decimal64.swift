/// A compact, exact encoding of a `Double` for measured values: most readings are short decimals (12.34,
/// 45, 1013.25), which this writes as a varint of `zigzag(m) * 8 + k` where the value is `m / 10^k` exactly
/// (`k` 0...6, `|m| < 2^53`), in 1 to 4 bytes for typical sensor values instead of 8; anything else (more
/// digits, -0.0, NaN, infinities, huge values) is the tag 7 followed by the 8 bytes of the IEEE bits.
///
/// Exact: decoding `m / 10^k` with IEEE division gives the double nearest to the decimal, which is the value
/// the encoder found, bit for bit (checked when encoding). Canonical: the smallest `k` that works is chosen,
/// and a decoder refuses any other form, so each value has one encoding.
public enum Decimal64 {
    static let powers: [Double] = [1, 10, 100, 1000, 10_000, 100_000, 1_000_000]

    /// The `(m, k)` of the shortest exact decimal form, or nil.
    static func decimal(_ v: Double) -> (mantissa: Int64, exponent: Int)? {
        guard v.isFinite, v.bitPattern != (-0.0).bitPattern else { return nil }
        // Most values that have no short form (a computed mean, a random double) are told in one step instead
        // of seven: if |v| * 10^6 < 2^50 and the form with k = 6 fails, every smaller k fails too. For if
        // v = fl(m / 10^k) with k < 6, then N = m * 10^(6-k) is an integer below 2^50 (exact in a double) and
        // fl(N / 10^6) = v, both being the double nearest to the same rational; and fl(v * 10^6) lies within
        // N * 2^-53 + ulp(N) / 2 < 1/8 + 1/8 of N, so it rounds to N and the k = 6 test would have passed.
        // `Decimal64Tests.theEarlyRejectAgreesWithTheFullSearch` checks it on many values.
        let scaled6 = v * 1_000_000
        if abs(scaled6) < 1_125_899_906_842_624, (scaled6.rounded() / 1_000_000).bitPattern != v.bitPattern { return nil }   // 2^50
        return fullSearch(v)
    }

    /// The shortest form by trying every `k` from 0 (what `decimal` computes, without its early reject).
    static func fullSearch(_ v: Double) -> (mantissa: Int64, exponent: Int)? {
        guard v.isFinite, v.bitPattern != (-0.0).bitPattern else { return nil }
        for k in 0..<powers.count {
            let scaled = v * powers[k]
            guard abs(scaled) < 9_007_199_254_740_992 else { return nil }   // 2^53: integers stay exact
            let m = scaled.rounded()
            if (m / powers[k]).bitPattern == v.bitPattern { return (Int64(m), k) }
        }
        return nil
    }
}

extension ByteWriter {
    /// Writes `v` in the `Decimal64` encoding.
    public mutating func decimal(_ v: Double) {
        if let (m, k) = Decimal64.decimal(v) {
            varint(((UInt64(bitPattern: m) << 1) ^ UInt64(bitPattern: m >> 63)) << 3 | UInt64(k))
        } else {
            varint(7)
            f64(v)
        }
    }
}

extension ByteReader {
    /// Reads a `Decimal64` value; a form other than the canonical one is malformed.
    public mutating func decimal() throws(DecodingError) -> Double {
        let x = try varint()
        let k = Int(x & 7)
        if k == 7 {
            guard x == 7 else { throw DecodingError.malformed("decimal tag 7 with a mantissa") }
            let v = try f64()
            guard Decimal64.decimal(v) == nil else { throw DecodingError.malformed("decimal \(v) written in full, not in its short form") }
            return v
        }
        let z = x >> 3
        let m = Int64(bitPattern: (z >> 1) ^ (0 &- (z & 1)))
        guard abs(m) < 9_007_199_254_740_992 else { throw DecodingError.malformed("decimal mantissa out of range") }
        let v = Double(m) / Decimal64.powers[k]
        guard let (cm, ck) = Decimal64.decimal(v), cm == m, ck == k else {
            throw DecodingError.malformed("decimal \(m)e-\(k) not in its shortest form")
        }
        return v
    }

    /// A `Decimal64` value from a table this store derived itself (the projection's hour aggregates), without
    /// the check that it is in its shortest form: that check keeps events byte-for-byte canonical (what is
    /// signed and relayed); a derived row is never relayed, and a map of a city decodes a hundred thousand.
    public mutating func storedDecimal() throws(DecodingError) -> Double {
        let x = try varint()
        let k = Int(x & 7)
        if k == 7 {
            guard x == 7 else { throw DecodingError.malformed("decimal tag 7 with a mantissa") }
            return try f64()
        }
        let z = x >> 3
        let m = Int64(bitPattern: (z >> 1) ^ (0 &- (z & 1)))
        guard abs(m) < 9_007_199_254_740_992 else { throw DecodingError.malformed("decimal mantissa out of range") }
        return Double(m) / Decimal64.powers[k]
    }
}
