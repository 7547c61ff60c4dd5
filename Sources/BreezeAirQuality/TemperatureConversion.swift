/// Celsius and Fahrenheit, for temperatures and for temperature *differences*
/// (`shared/docs/domain.md` section 8): a value converts as `F = C × 1.8 + 32`, but a difference (an
/// anomaly, a threshold, an offset) as `ΔF = ΔC × 1.8`, with no +32.
public enum TemperatureConversion {
    /// A temperature, °C to °F: `C × 1.8 + 32`.
    public static func fahrenheit(fromCelsius c: Double) -> Double { c * 1.8 + 32 }

    /// A temperature, °F to °C: `(F − 32) / 1.8`.
    public static func celsius(fromFahrenheit f: Double) -> Double { (f - 32) / 1.8 }

    /// A difference, °C to °F: `ΔC × 1.8`.
    public static func fahrenheitDifference(fromCelsius dc: Double) -> Double { dc * 1.8 }

    /// A difference, °F to °C: `ΔF / 1.8`.
    public static func celsiusDifference(fromFahrenheit df: Double) -> Double { df / 1.8 }
}
