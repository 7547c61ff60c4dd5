/// Temperature and humidity measured inside a PurpleAir sensor's housing, and the usual offsets to ambient
/// conditions (`shared/docs/domain.md` section 3.1, PurpleAir API field descriptions,
/// https://community.purpleair.com/t/api-fields-descriptions/4652): the housing is on average 8 °F warmer
/// and 4 %RH drier than the air outside.
///
/// The EPA corrections take the *raw* housing humidity (`PurpleAirCorrection`); the offsets are for display.
public struct PurpleAirHousing: Hashable, Sendable {
    /// Housing temperature, °F (the API's `temperature`); nil when missing.
    public var temperatureF: Double?
    /// Housing relative humidity, % (the API's `humidity`); nil when the sensor has no humidity sensor.
    public var humidity: Double?

    /// Degrees F subtracted from the housing temperature.
    public static let temperatureOffsetF = 8.0
    /// Percentage points added to the housing humidity.
    public static let humidityOffset = 4.0
    /// Housing temperatures above this (65 °C) are implausible and dropped (domain.md section 3.3).
    public static let maximumTemperatureF = 65.0 * 1.8 + 32

    /// Makes a housing reading.
    public init(temperatureF: Double?, humidity: Double?) {
        self.temperatureF = temperatureF
        self.humidity = humidity
    }

    /// Estimated outdoor temperature, °F: housing − 8 °F. Nil when missing or implausible.
    public var ambientTemperatureF: Double? {
        guard let t = plausibleTemperatureF else { return nil }
        return t - Self.temperatureOffsetF
    }

    /// Estimated outdoor temperature, °C: the °F estimate converted (the 8 °F offset is 4.44 °C).
    public var ambientTemperatureC: Double? {
        ambientTemperatureF.map(TemperatureConversion.celsius(fromFahrenheit:))
    }

    /// Estimated outdoor relative humidity, %: housing + 4, capped at 100. Nil when missing or implausible.
    public var ambientHumidity: Double? {
        guard let h = plausibleHumidity else { return nil }
        return min(h + Self.humidityOffset, 100)
    }

    /// The raw housing humidity when it is a possible value (0-100 %), for the corrections.
    public var plausibleHumidity: Double? {
        guard let h = humidity, (0...100).contains(h) else { return nil }
        return h
    }

    /// The raw housing temperature when it is finite and at most 65 °C.
    public var plausibleTemperatureF: Double? {
        guard let t = temperatureF, t.isFinite, t <= Self.maximumTemperatureF else { return nil }
        return t
    }
}
