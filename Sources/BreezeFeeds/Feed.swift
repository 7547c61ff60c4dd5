public import Breeze
import BreezeStore
@preconcurrency import Glibc

/// One provider feed a server polls (`breeze feed --config FILE`): where to ask, how the answer is imported,
/// how often, and the key.
public struct Feed: Sendable {
    /// A name for logs (`purpleair`, `pollen-de`).
    public var name: String
    /// The URL to GET. `{key}` is replaced by the key (Google Pollen `key=`, AirNow `API_KEY=`), `{since}` by
    /// the Unix time the last successful poll started (PurpleAir `modified_since`; 0 before the first).
    public var url: String
    /// The importer of the answer (`purpleair-json`, `google-pollen`, `airnow-api`, `daily-temperature`).
    public var format: String
    /// What the importer needs besides the bytes (a place, a station, a unit).
    public var options: ImportOptions
    /// Seconds between successful polls (default 120).
    public var intervalSeconds: Double = 120
    /// At least this long between two requests of this feed, whatever happens (a rate limit; default 1 s).
    public var minSpacingSeconds: Double = 1
    /// A request gives up after this long (default 30 s).
    public var timeoutSeconds: Double = 30
    /// The key: a file (mode 0600, refused when others may read it) or an environment variable; nil for
    /// providers without one (Open-Meteo).
    public var key: String?
    /// The header that carries the key (PurpleAir: `X-API-Key`); without one the key goes where `{key}` is.
    public var keyHeader: String?

    public init(name: String, url: String, format: String, options: ImportOptions = ImportOptions()) {
        self.name = name
        self.url = url
        self.format = format
        self.options = options
    }

    /// Reads a key file: its first line that is not a comment, trimmed. Refused as a private key is
    /// (`KeyFile.readSecretFile`): readable or writable by group or others (`chmod 600`), owned by another user,
    /// not a regular file, larger than 64 KiB; and when it holds no key or cannot be read.
    public static func readKey(file path: String) throws(FeedError) -> String {
        let bytes: [UInt8]
        do { bytes = try KeyFile.readSecretFile(path, limit: 65536, what: "API key") } catch { throw FeedError(error.description) }
        let line = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
            .map { $0.trimmingCharacters(in: " \t\r") }.first { !$0.isEmpty && !$0.hasPrefix("#") }
        guard let line else { throw FeedError("\(path): no key in the file") }
        return line
    }
}

/// A feed that cannot run, or a configuration that is wrong: one line naming what.
public struct FeedError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
