/// A sensor or monitor as a source describes it. Natural key: `(source, sensor)`.
public struct SensorRegistration: Hashable, Sendable {
    public var sensor: String
    public var name: String
    public var source: String
    /// What it is: `purpleair`, `monitor`, `weather-station`, ...
    public var kind: String
    public var latitude: Double?
    public var longitude: Double?
    /// IANA time zone name, e.g. `America/New_York`.
    public var timeZone: String?

    public init(sensor: String, name: String, source: String, kind: String,
                latitude: Double?, longitude: Double?, timeZone: String?) {
        self.sensor = sensor; self.name = name; self.source = source; self.kind = kind
        self.latitude = latitude; self.longitude = longitude; self.timeZone = timeZone
    }
}

/// One measured quantity of a reading. Quantities and their canonical units are listed in
/// `Protocol/encoding.md` (e.g. `pm25_cf1_a` ug/m3, `temperature` degrees C, `humidity` %, `o3` ppb).
public struct Measurement: Hashable, Sendable {
    public var quantity: String
    public var value: Double
    public init(_ quantity: String, _ value: Double) {
        self.quantity = quantity
        self.value = value
    }
}

/// What one sensor measured at one time. Natural key of each value: `(source, sensor, time, quantity)`.
public struct Reading: Hashable, Sendable {
    public var source: String
    public var sensor: String
    /// Unix seconds, UTC.
    public var time: Int64
    public var values: [Measurement]

    public init(source: String, sensor: String, time: Int64, values: [Measurement]) {
        self.source = source; self.sensor = sensor; self.time = time; self.values = values
    }
}

/// One pollen type (GRASS, TREE, WEED) or plant of a Google Pollen API day (`shared/docs/domain.md` section
/// 4). An entry without index information is out of season or unsupported: not zero.
public struct PollenEntry: Hashable, Sendable {
    public var code: String
    public var displayName: String
    public var isPlant: Bool
    /// For plants: GRASS, TREE or WEED.
    public var plantType: String?
    public var inSeason: Bool?
    /// Universal Pollen Index 0-5, nil when the source gave no index.
    public var indexValue: UInt8?
    public var category: String?
    public var indexDescription: String?
    /// `#RRGGBB` from the source's colour.
    public var colour: String?
    public var healthRecommendations: [String]
    public var family: String?
    public var season: String?
    public var specialColors: String?
    public var specialShapes: String?
    public var crossReaction: String?
    public var picture: String?
    public var pictureCloseup: String?

    public init(code: String, displayName: String, isPlant: Bool, plantType: String? = nil, inSeason: Bool? = nil,
                indexValue: UInt8? = nil, category: String? = nil, indexDescription: String? = nil,
                colour: String? = nil, healthRecommendations: [String] = [], family: String? = nil,
                season: String? = nil, specialColors: String? = nil, specialShapes: String? = nil,
                crossReaction: String? = nil, picture: String? = nil, pictureCloseup: String? = nil) {
        self.code = code; self.displayName = displayName; self.isPlant = isPlant; self.plantType = plantType
        self.inSeason = inSeason; self.indexValue = indexValue; self.category = category
        self.indexDescription = indexDescription; self.colour = colour
        self.healthRecommendations = healthRecommendations; self.family = family; self.season = season
        self.specialColors = specialColors; self.specialShapes = specialShapes; self.crossReaction = crossReaction
        self.picture = picture; self.pictureCloseup = pictureCloseup
    }
}

/// One day of pollen forecast at one place. Natural key: `(latitude, longitude, date)`.
public struct PollenForecast: Hashable, Sendable {
    public var latitude: Double
    public var longitude: Double
    public var regionCode: String?
    /// `YYYY-MM-DD`.
    public var date: String
    public var entries: [PollenEntry]

    public init(latitude: Double, longitude: Double, regionCode: String?, date: String, entries: [PollenEntry]) {
        self.latitude = latitude; self.longitude = longitude; self.regionCode = regionCode
        self.date = date; self.entries = entries
    }
}

/// The daily maximum and minimum temperature at a station, in degrees C. Natural key: `(station, date)`.
public struct DailyTemperature: Hashable, Sendable {
    public var station: String
    /// `YYYY-MM-DD`.
    public var date: String
    public var maxC: Double?
    public var minC: Double?
    public var latitude: Double?
    public var longitude: Double?

    public init(station: String, date: String, maxC: Double?, minC: Double?, latitude: Double?, longitude: Double?) {
        self.station = station; self.date = date; self.maxC = maxC; self.minC = minC
        self.latitude = latitude; self.longitude = longitude
    }
}

/// One biomarker reading (e.g. blood glucose). Natural key: `(readingType, time)`.
public struct BiomarkerReading: Hashable, Sendable {
    public var readingType: String
    /// Unix seconds, UTC.
    public var time: Int64
    public var value: Double
    /// E.g. `mg/dL`.
    public var unit: String

    public init(readingType: String, time: Int64, value: Double, unit: String) {
        self.readingType = readingType; self.time = time; self.value = value; self.unit = unit
    }
}

/// Changes to alert settings; each present field is its own last-writer-wins register.
public struct AlertChange: Hashable, Sendable {
    public var category: AQICategory?
    public var onClear: OnClear?
    public var enabled: Bool?
    public init(category: AQICategory? = nil, onClear: OnClear? = nil, enabled: Bool? = nil) {
        self.category = category; self.onClear = onClear; self.enabled = enabled
    }
    /// True when no field is set.
    public var isEmpty: Bool { category == nil && onClear == nil && enabled == nil }
}
