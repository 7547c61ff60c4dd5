public import BreezeCore

/// One event an importer produced, with where it came from.
public struct ImportRecord: Sendable, Equatable {
    /// The stream it goes to (`public` for sensors, readings, pollen and temperatures; `health:<user>` for
    /// biomarker readings).
    public var stream: StreamID
    /// The event.
    public var body: EventBody
    /// 1-based line (CSV) or element index (JSON) it came from.
    public var line: Int

    public init(stream: StreamID, body: EventBody, line: Int) {
        self.stream = stream
        self.body = body
        self.line = line
    }
}

/// A row that was skipped, and why. Reported as `file:line: reason`.
public struct ImportIssue: Sendable, Equatable, Codable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var reason: String

    public init(file: String, line: Int, reason: String) {
        self.file = file
        self.line = line
        self.reason = reason
    }

    public var description: String { "\(file):\(line): \(reason)" }
}

/// What parsing one file gave.
public struct ParseResult: Sendable {
    /// The events, in file order.
    public var records: [ImportRecord] = []
    /// Rows skipped, with reasons (malformed values, missing-value markers, failed checks).
    public var issues: [ImportIssue] = []
    /// Data rows (or JSON elements) read, whether kept or skipped.
    public var rowsRead = 0

    public init(records: [ImportRecord] = [], issues: [ImportIssue] = [], rowsRead: Int = 0) {
        self.records = records
        self.issues = issues
        self.rowsRead = rowsRead
    }
}

/// The whole file was refused: not in the named format, unreadable, or missing a required option. Nothing
/// from it is stored.
public struct ImportError: Error, Sendable, CustomStringConvertible {
    public var file: String
    public var message: String
    public init(file: String, _ message: String) {
        self.file = file
        self.message = message
    }
    public var description: String { "\(file): \(message)" }
}

/// Options from the command line (`breeze import FORMAT FILE... [--sensor ID] [--at LAT,LON] ...`).
public struct ImportOptions: Sendable {
    /// Sensor id for files whose rows carry none.
    public var sensor: String?
    /// Location for a single sensor or station.
    public var at: (latitude: Double, longitude: Double)?
    /// Unit of temperatures in the file (daily-temperature CSV).
    public var unit: TemperatureUnit?
    /// Station id (daily-temperature CSV).
    public var station: String?
    /// Whose health stream biomarker readings go to.
    public var user: String = "me"
    /// Offset of local, naive timestamps from UTC in seconds (`--utc-offset -05:00` gives -18000), for
    /// files that write local time without a zone (glucose CSV); 0 means UTC.
    public var utcOffsetSeconds: Int = 0

    public init() {}
}

/// A file format Breeze imports. Implementations are pure: bytes in, records out.
public protocol Importer: Sendable {
    /// The format name on the command line, e.g. `purpleair-csv`.
    static var format: String { get }
    /// A one-line description for `breeze import --help`.
    static var summary: String { get }
    /// Parses a whole file. Throws `ImportError` when the file is not in this format (checked from its
    /// header or structure) or a required option is missing; skips (and reports) individual bad rows.
    static func parse(_ bytes: [UInt8], file: String, options: ImportOptions) throws(ImportError) -> ParseResult
}
