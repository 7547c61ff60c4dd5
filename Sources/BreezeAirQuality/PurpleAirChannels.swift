/// The two laser counters (channels A and B) of one PurpleAir reading, and the EPA's check that they agree
/// (`shared/docs/domain.md` section 3.3).
///
/// A reading is invalid when either channel is missing, when either is outside the Plantower effective
/// range 0-500 µg/m³, or when the channels disagree by **both** more than 5 µg/m³ **and** more than 70 %
/// (`|2(A − B)/(A + B)|`): Barkjohn, Gantt & Clements 2021 (AMT 14:4617), as coded in EPA's
/// `Compute_AB_Averages`. A valid reading is `(A + B) / 2`. Pass `pm2.5_cf_1_a` and `pm2.5_cf_1_b` when the
/// result feeds an EPA correction.
public struct PurpleAirChannels: Hashable, Sendable {
    /// Channel A, µg/m³; nil when missing.
    public var a: Double?
    /// Channel B, µg/m³; nil when missing.
    public var b: Double?

    /// The outcome of the check.
    public enum Verdict: Hashable, Sendable {
        /// The channels agree; the associated value is their mean.
        case valid(Double)
        /// A channel is missing (nil or NaN).
        case missingChannel
        /// A channel is negative, infinite or above `maximumConcentration`.
        case outOfRange
        /// The channels differ by more than both `maximumAbsoluteDifference` and `maximumRelativeDifference`.
        case disagree
    }

    /// The upper end of the Plantower effective range; higher channel values are dropped.
    public static let maximumConcentration = 500.0
    /// Channels within this many µg/m³ of each other always agree.
    public static let maximumAbsoluteDifference = 5.0
    /// Channels within this fraction (of their mean) of each other always agree.
    public static let maximumRelativeDifference = 0.7

    /// Makes a pair.
    public init(a: Double?, b: Double?) {
        self.a = a
        self.b = b
    }

    /// The result of the EPA A/B check.
    public var verdict: Verdict {
        guard let a, let b, !a.isNaN, !b.isNaN else { return .missingChannel }
        let range = 0...Self.maximumConcentration
        guard range.contains(a), range.contains(b) else { return .outOfRange }
        let difference = abs(a - b)
        // When the absolute test fails, a + b > 5 > 0, so the relative test never divides by zero.
        if difference > Self.maximumAbsoluteDifference
            && 2 * difference / (a + b) > Self.maximumRelativeDifference {
            return .disagree
        }
        return .valid((a + b) / 2)
    }

    /// The channel mean when the reading is valid, else nil.
    public var average: Double? {
        if case .valid(let mean) = verdict { return mean }
        return nil
    }

    /// The mean of the valid readings of one period (an hour of 2-minute or 10-minute readings, say), when
    /// at least 90 % of the expected readings are valid (Barkjohn 2021's completeness rule, domain.md
    /// section 3.3).
    ///
    /// - Parameters:
    ///   - readings: the period's readings; invalid ones count as missing.
    ///   - expectedCount: how many readings a complete period has (30 for 2-minute data over an hour).
    public static func mean(of readings: [PurpleAirChannels], expectedCount: Int) -> Double? {
        let valid = readings.compactMap(\.average)
        guard expectedCount > 0, !valid.isEmpty, 10 * valid.count >= 9 * expectedCount else { return nil }
        return valid.reduce(0, +) / Double(valid.count)
    }
}
