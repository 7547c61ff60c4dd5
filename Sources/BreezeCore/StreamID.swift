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

    /// User ids are 1 to 64 characters from `A-Z a-z 0-9 . _ -` (they appear in stream names, file names
    /// and grants, so they are kept plain).
    public static func validateUserID(_ id: String) throws(StreamError) {
        let ok = !id.isEmpty && id.utf8.count <= 64 && id.utf8.allSatisfy { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a)
                || b == 0x2e || b == 0x5f || b == 0x2d
        }
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
