/// A partition of the log. Replication and access control work per stream, and each stream has its own
/// version vector.
///
/// - `public`: facts everybody may read: sensors, readings, pollen forecasts, daily temperatures.
/// - `user:<id>`: one person's settings (favourites, alerts, unit, sources, targets).
/// - `health:<id>`: one person's biomarker readings.
public enum StreamID: Hashable, Comparable, Sendable, CustomStringConvertible {
    case `public`
    case user(String)
    case health(String)

    /// The text form: `public`, `user:<id>` or `health:<id>`.
    public var description: String {
        switch self {
        case .public: return "public"
        case .user(let id): return "user:\(id)"
        case .health(let id): return "health:\(id)"
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
        default: throw StreamError.unknownKind(text)
        }
    }

    /// Bytes of the text form.
    var nameLength: Int {
        switch self {
        case .public: return 6
        case .user(let id): return 5 + id.utf8.count
        case .health(let id): return 7 + id.utf8.count
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

    /// The user the stream belongs to, nil for `public`.
    public var userID: String? {
        switch self {
        case .public: return nil
        case .user(let id), .health(let id): return id
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
            return "stream '\(s)' is not 'public', 'user:<id>' or 'health:<id>'"
        case .badUserID(let s):
            return "user id '\(s)' must be 1-64 characters from A-Z a-z 0-9 . _ -"
        }
    }
}
