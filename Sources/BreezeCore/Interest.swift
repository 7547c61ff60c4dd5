/// One thing a device wants to hold (`Protocol/sync.md` 6.7): interests are kept in the device's own database
/// (not synced: each device of a user wants its own), resolved against the sensors it knows and the user's
/// state into the fact streams it subscribes to. The user's favourite and watched sensors are always
/// included, whatever the interests say; a device with no interests holds everything.
public enum Interest: Hashable, Sendable, CustomStringConvertible {
    /// The sensors registered within `km` of a point, and the pollen cells the circle touches.
    case near(latitude: Double, longitude: Double, km: Double)
    /// The sensors registered in a box (south, west, north, east, in degrees; west above east crosses the
    /// antimeridian), and the pollen cells it touches.
    case box(south: Double, west: Double, north: Double, east: Double)
    /// One sensor: of one source, or of every source with that id when `source` is nil.
    case sensor(source: String?, id: String)
    /// The pollen forecasts of the cell holding a point.
    case pollen(latitude: Double, longitude: Double)
    /// One station's daily temperatures.
    case climate(station: String)

    /// The text form, as `breeze interest add` takes it: `near LAT,LON KM`, `box S,W,N,E`,
    /// `sensor [SOURCE:]ID`, `pollen LAT,LON`, `climate STATION`.
    public var description: String {
        switch self {
        case .near(let lat, let lon, let km): return "near \(Interest.number(lat)),\(Interest.number(lon)) \(Interest.number(km))"
        case .box(let s, let w, let n, let e):
            return "box \(Interest.number(s)),\(Interest.number(w)),\(Interest.number(n)),\(Interest.number(e))"
        case .sensor(let source, let id): return "sensor " + (source.map { "\($0):\(id)" } ?? id)
        case .pollen(let lat, let lon): return "pollen \(Interest.number(lat)),\(Interest.number(lon))"
        case .climate(let station): return "climate \(station)"
        }
    }

    /// Largest radius of a `near` interest: 100 km (a region; a device that wants more holds everything,
    /// with no interests). A circle that large touches about 2,000 pollen cells at most.
    public static let maxRadiusKm = 100.0

    /// Largest side of a `box` interest: 2 degrees (about 220 km north to south), as large as a `near` circle.
    public static let maxBoxDegrees = 2.0

    /// Parses the text form from its words (`["near", "42.73,-73.69", "5"]`); throws an error naming the
    /// word and what is wrong with it.
    public init(words: [String]) throws(InterestError) {
        guard let kind = words.first else { throw InterestError("an interest is 'near LAT,LON KM', 'box S,W,N,E', 'sensor [SOURCE:]ID', 'pollen LAT,LON' or 'climate STATION'") }
        let args = Array(words.dropFirst())
        func arity(_ n: Int, _ usage: String) throws(InterestError) {
            guard args.count == n else { throw InterestError("'\(kind)' takes \(usage) (got \(args.count) argument\(args.count == 1 ? "" : "s"))") }
        }
        switch kind {
        case "near":
            try arity(2, "LAT,LON KM")
            let (lat, lon) = try Interest.point(args[0])
            guard let km = Double(args[1]), km.isFinite, km > 0, km <= Interest.maxRadiusKm else {
                throw InterestError("radius '\(args[1])' must be a number of kilometres above 0 and at most \(Int(Interest.maxRadiusKm))")
            }
            self = .near(latitude: lat, longitude: lon, km: km)
        case "box":
            try arity(1, "S,W,N,E")
            let parts = args[0].split(separator: ",", omittingEmptySubsequences: false).map { Double($0) }
            guard parts.count == 4, let s = parts[0], let w = parts[1], let n = parts[2], let e = parts[3],
                  [s, w, n, e].allSatisfy(\.isFinite), (-90...90).contains(s), (-90...90).contains(n), s <= n,
                  (-180...180).contains(w), (-180...180).contains(e) else {
                throw InterestError("box '\(args[0])' must be S,W,N,E: latitudes from -90 to 90 (south at most north), longitudes from -180 to 180")
            }
            let width = w <= e ? e - w : e + 360 - w
            guard n - s <= Interest.maxBoxDegrees, width <= Interest.maxBoxDegrees else {
                throw InterestError("box '\(args[0])' spans \(Interest.number(n - s)) by \(Interest.number(width)) degrees; at most \(Int(Interest.maxBoxDegrees)) each way")
            }
            self = .box(south: s, west: w, north: n, east: e)
        case "sensor":
            try arity(1, "[SOURCE:]ID")
            let ref = args[0]
            guard !ref.isEmpty, ref.utf8.count <= 128, !ref.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7f }) else {
                throw InterestError("sensor '\(ref)' must be 1-128 characters without spaces or control characters")
            }
            if let colon = ref.firstIndex(of: ":") {
                let source = String(ref[..<colon]), id = String(ref[ref.index(after: colon)...])
                guard !source.isEmpty, !id.isEmpty else { throw InterestError("sensor '\(ref)' must be ID or SOURCE:ID") }
                self = .sensor(source: source, id: id)
            } else {
                self = .sensor(source: nil, id: ref)
            }
        case "pollen":
            try arity(1, "LAT,LON")
            let (lat, lon) = try Interest.point(args[0])
            self = .pollen(latitude: lat, longitude: lon)
        case "climate":
            try arity(1, "STATION")
            guard !args[0].isEmpty, args[0].utf8.count <= 128 else { throw InterestError("station '\(args[0])' must be 1-128 characters") }
            self = .climate(station: args[0])
        default:
            throw InterestError("unknown interest '\(kind)': use near, box, sensor, pollen or climate")
        }
    }

    /// Parses the stored text form (one line, as `description` writes it).
    public init(parsing line: String) throws(InterestError) {
        try self.init(words: line.split(separator: " ").map(String.init))
    }

    private static func point(_ text: String) throws(InterestError) -> (Double, Double) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 2, let lat = Double(parts[0]), let lon = Double(parts[1]),
              lat.isFinite, lon.isFinite, (-90...90).contains(lat), (-180...180).contains(lon) else {
            throw InterestError("place '\(text)' must be LAT,LON with a latitude from -90 to 90 and a longitude from -180 to 180")
        }
        return (lat, lon)
    }

    /// A number without a trailing `.0` (`5`, `42.73`).
    private static func number(_ v: Double) -> String {
        v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : String(v)
    }
}

/// Why an interest was refused.
public struct InterestError: Error, Equatable, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
