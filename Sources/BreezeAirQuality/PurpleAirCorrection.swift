/// A correction from PurpleAir PM2.5 to an estimate of the regulatory monitor value
/// (`shared/docs/domain.md` section 3.2). It is a per-user data-source choice (domain.md section 9); the ids
/// match `BreezeCore.DataSource.catalog`.
///
/// In every formula `PA` is the mean of channels A and B of `pm2.5_cf_1` (after `PurpleAirChannels`) and
/// `RH` the raw housing humidity in %. Negative results are clamped to 0.
public enum PurpleAirCorrection: String, CaseIterable, Sendable, CustomStringConvertible {
    /// No correction: PA as is. (Not named `none`, which reads as `Optional.none`.)
    case uncorrected = "none"
    /// EPA US-wide correction (Barkjohn, Gantt & Clements 2021, AMT 14:4617,
    /// https://amt.copernicus.org/articles/14/4617/2021/): `0.524·PA − 0.0862·RH + 5.75`. The published
    /// coefficients are used, not `sensortoolkit`'s 0.0852 / 5.72.
    case epa2021 = "epa-2021"
    /// The EPA Fire & Smoke Map extension of October 2021 (EPA "Sensor data cleaning and correction",
    /// slide 26): the US-wide line up to PA 30, steeper at smoke concentrations, quadratic from PA 260,
    /// blended linearly across 30-50 and 210-260 so that it is continuous.
    case epa2021Smoke = "epa-2021-smoke"
    /// Lane Regional Air Protection Agency (wood smoke): `0.5·PA − 0.66`.
    case lrapa = "lrapa"
    /// University of Utah AQ&U: `0.778·PA + 2.65`.
    case aqandu = "aqandu"

    /// The identifier stored in events and typed on the command line.
    public var id: String { rawValue }

    /// Parses `id`.
    public init?(id: String) { self.init(rawValue: id) }

    /// A display name.
    public var title: String {
        switch self {
        case .uncorrected: return "None"
        case .epa2021: return "US EPA (2021)"
        case .epa2021Smoke: return "US EPA with smoke extension (2021)"
        case .lrapa: return "LRAPA"
        case .aqandu: return "AQandU"
        }
    }

    /// The corrected PM2.5, µg/m³, never negative.
    ///
    /// - Parameters:
    ///   - pa: the A/B mean of `pm2.5_cf_1`, µg/m³.
    ///   - humidity: raw housing RH, %; needed by the EPA formulas (the smoke extension only below PA 260).
    /// - Returns: nil when `pa` is negative or not finite, or when the formula needs a humidity that is nil.
    public func apply(pa: Double, humidity: Double?) -> Double? {
        guard pa.isFinite, pa >= 0 else { return nil }
        let value: Double
        switch self {
        case .uncorrected: value = pa
        case .lrapa: value = 0.5 * pa - 0.66
        case .aqandu: value = 0.778 * pa + 2.65
        case .epa2021:
            guard let rh = humidity, rh.isFinite else { return nil }
            value = Self.usWide(pa, rh)
        case .epa2021Smoke:
            if pa >= 260 {
                value = Self.smokeQuadratic(pa)
            } else {
                guard let rh = humidity, rh.isFinite else { return nil }
                value = Self.smokeExtension(pa, rh)
            }
        }
        return max(0, value)
    }

    /// `0.524·PA − 0.0862·RH + 5.75`.
    private static func usWide(_ pa: Double, _ rh: Double) -> Double {
        0.524 * pa - 0.0862 * rh + 5.75
    }

    /// `2.966 + 0.69·PA + 8.84e-4·PA²`, the piece for PA ≥ 260.
    private static func smokeQuadratic(_ pa: Double) -> Double {
        2.966 + 0.69 * pa + 8.84e-4 * pa * pa
    }

    /// The October 2021 piecewise correction for PA < 260, exactly as domain.md section 3.2 writes it.
    private static func smokeExtension(_ pa: Double, _ rh: Double) -> Double {
        switch pa {
        case ..<30:
            return usWide(pa, rh)
        case ..<50:
            let w = pa / 20 - 3.0 / 2
            return (0.786 * w + 0.524 * (1 - w)) * pa - 0.0862 * rh + 5.75
        case ..<210:
            return 0.786 * pa - 0.0862 * rh + 5.75
        default:
            let w = pa / 50 - 21.0 / 5
            return (0.69 * w + 0.786 * (1 - w)) * pa - 0.0862 * rh * (1 - w) + 2.966 * w + 5.75 * (1 - w)
                + 8.84e-4 * pa * pa * w
        }
    }

    /// `id`.
    public var description: String { id }
}
