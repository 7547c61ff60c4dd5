/// A partition of the log. Replication and access control work per stream, and each stream has its own
/// version vector, so a replica that holds a stream holds all of it (`Protocol/sync.md` 6.7).
///
/// - `public`: facts everybody may read that every replica holds: sensor registrations (the directory a
///   device's interests are resolved against), revocations, and facts written before facts had streams of
///   their own.
/// - `sensor:<key>`: one sensor's readings (`StreamID.sensor(source:sensor:)`).
/// - `pollen:<cell>`: the pollen forecasts of one cell of 0.1 by 0.1 degrees (`StreamID.pollen(latitude:longitude:)`).
/// - `climate:<key>`: one station's daily temperatures (`StreamID.climate(station:)`).
/// - `user:<id>`: one person's settings (favourites, alerts, unit, sources, targets).
/// - `health:<id>`: one person's biomarker readings.
///
/// `public` and the fact streams are the *shared* streams: the cluster writes them and every user may read
/// them. A device that declared interests holds `public` and only the fact streams they name.
public enum StreamID: Hashable, Comparable, Sendable, CustomStringConvertible {
    case `public`
    case user(String)
    case health(String)
    case sensor(String)
    case pollen(String)
    case climate(String)

    /// The text form: `public`, `user:<id>`, `health:<id>`, `sensor:<key>`, `pollen:<cell>` or `climate:<key>`.
    public var description: String {
        switch self {
        case .public: return "public"
        case .user(let id): return "user:\(id)"
        case .health(let id): return "health:\(id)"
        case .sensor(let k): return "sensor:\(k)"
        case .pollen(let k): return "pollen:\(k)"
        case .climate(let k): return "climate:\(k)"
        }
    }

    /// True for `public` and the fact streams (`sensor:`, `pollen:`, `climate:`): written by the cluster,
    /// readable by every user.
    public var isShared: Bool {
        switch self {
        case .public, .sensor, .pollen, .climate: return true
        case .user, .health: return false
        }
    }

    /// True for the fact streams, the ones a device's interests choose among.
    public var isFactPartition: Bool {
        switch self {
        case .sensor, .pollen, .climate: return true
        case .public, .user, .health: return false
        }
    }

    /// Parses the text form; throws a `StreamError` naming what is wrong.
    public init(parsing text: String) throws(StreamError) {
        if text == "public" { self = .public; return }
        guard let colon = text.firstIndex(of: ":") else { throw StreamError.unknownKind(text) }
        let kind = text[..<colon], id = String(text[text.index(after: colon)...])
        try StreamID.validateUserID(id)
        switch kind {
        case "user": self = .user(id)
        case "health": self = .health(id)
        case "sensor": self = .sensor(id)
        case "pollen": self = .pollen(id)
        case "climate": self = .climate(id)
        default: throw StreamError.unknownKind(text)
        }
    }

    /// Bytes of the text form.
    var nameLength: Int {
        switch self {
        case .public: return 6
        case .user(let id): return 5 + id.utf8.count
        case .health(let id): return 7 + id.utf8.count
        case .sensor(let k): return 7 + k.utf8.count
        case .pollen(let k): return 7 + k.utf8.count
        case .climate(let k): return 8 + k.utf8.count
        }
    }

    /// Writes the text form as a length-prefixed string (what `ByteWriter.string(description)` writes, without
    /// building the string), into memory sized in advance (`nameLength`).
    func encodeName(into c: inout ByteCursor) {
        switch self {
        case .public: c.string("public")
        case .user(let id):
            c.varint(UInt64(nameLength))
            c.utf8("user:")
            c.utf8(id)
        case .health(let id):
            c.varint(UInt64(nameLength))
            c.utf8("health:")
            c.utf8(id)
        case .sensor(let k), .pollen(let k), .climate(let k):
            c.varint(UInt64(nameLength))
            c.utf8(kindPrefix)
            c.utf8(k)
        }
    }

    /// Parses the text form from its UTF-8 bytes: the same rules and errors as `init(parsing:)`, without
    /// building the whole name first.
    init(parsingUTF8 b: UnsafeBufferPointer<UInt8>) throws(StreamError) {
        func hasPrefix(_ p: StaticString) -> Bool {
            let n = p.utf8CodeUnitCount
            guard b.count >= n else { return false }
            for i in 0..<n where b[i] != p.utf8Start[i] { return false }
            return true
        }
        func id(after n: Int) throws(StreamError) -> String {
            let rest = UnsafeBufferPointer(rebasing: b[n...])
            guard !rest.isEmpty, rest.count <= 64, rest.allSatisfy(StreamID.isUserIDByte) else {
                throw StreamError.badUserID(String(decoding: rest, as: UTF8.self))
            }
            return String(decoding: rest, as: UTF8.self)   // ASCII, checked above
        }
        if b.count == 6 && hasPrefix("public") { self = .public; return }
        if hasPrefix("user:") { self = .user(try id(after: 5)); return }
        if hasPrefix("health:") { self = .health(try id(after: 7)); return }
        if hasPrefix("sensor:") { self = .sensor(try id(after: 7)); return }
        if hasPrefix("pollen:") { self = .pollen(try id(after: 7)); return }
        if hasPrefix("climate:") { self = .climate(try id(after: 8)); return }
        try self.init(parsing: String(decoding: b, as: UTF8.self))   // refused with the same error
    }

    static func isUserIDByte(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || b == 0x2e || b == 0x5f || b == 0x2d
    }

    /// User ids are 1 to 64 characters from `A-Z a-z 0-9 . _ -` (they appear in stream names, file names
    /// and grants, so they are kept plain).
    public static func validateUserID(_ id: String) throws(StreamError) {
        let ok = !id.isEmpty && id.utf8.count <= 64 && id.utf8.allSatisfy(StreamID.isUserIDByte)
        guard ok else { throw StreamError.badUserID(id) }
    }

    /// The user the stream belongs to, nil for the shared streams.
    public var userID: String? {
        switch self {
        case .public, .sensor, .pollen, .climate: return nil
        case .user(let id), .health(let id): return id
        }
    }

    /// `sensor:`, `pollen:` or `climate:` (the fact streams' prefixes), `""` otherwise.
    private var kindPrefix: String {
        switch self {
        case .sensor: return "sensor:"
        case .pollen: return "pollen:"
        case .climate: return "climate:"
        case .public, .user, .health: return ""
        }
    }

    public static func < (a: StreamID, b: StreamID) -> Bool { a.description < b.description }
}

/// Why a stream name or user id was refused.
public enum StreamError: Error, Equatable, Sendable, CustomStringConvertible {
    case unknownKind(String)
    case badUserID(String)

    public var description: String {
        switch self {
        case .unknownKind(let s):
            return "stream '\(s)' is not 'public', 'user:<id>', 'health:<id>', 'sensor:<key>', 'pollen:<cell>' or 'climate:<key>'"
        case .badUserID(let s):
            return "user id '\(s)' must be 1-64 characters from A-Z a-z 0-9 . _ -"
        }
    }
}

/// A stream is encoded as its text form (`user:ana`, `sensor:purpleair:123`), and decoded by `init(parsing:)`:
/// a dictionary keyed by streams (`SyncStatus.Peer.lag`) becomes a JSON object.
extension StreamID: Codable, CodingKeyRepresentable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        self = try StreamID(parsing: try c.decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }

    public var codingKey: any CodingKey { StreamCodingKey(stringValue: description) }

    public init?<T: CodingKey>(codingKey: T) {
        guard let s = try? StreamID(parsing: codingKey.stringValue) else { return nil }
        self = s
    }

    private struct StreamCodingKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
