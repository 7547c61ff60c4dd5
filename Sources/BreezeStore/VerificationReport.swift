/// What `EventLog.verify(at:)` found in a database: problems (integrity broken: `breeze verify` exits 1),
/// notes (recorded conditions the design accepts, reported but not failures) and what was checked.
public struct VerificationReport: Sendable {
    /// Which check a finding comes from.
    public enum Kind: String, Sendable, CaseIterable {
        /// SQLite's `PRAGMA integrity_check`, or a snapshot that could not be taken.
        case sqlite
        /// The stored bytes of an event do not match the hash they end with.
        case hash
        /// The bytes match their hash but do not decode as an event.
        case decode
        /// The row's indexed columns (stream, origin, epoch, counter, hlc, type) disagree with its bytes.
        case columns
        /// Counters of one origin in one stream are not 1, 2, 3, ... in arrival order (a missing event).
        case gap
        /// The `heads` table (the version vectors) disagrees with the events held.
        case head
        /// The same id was offered with different content (recorded by ingest in `conflicts`).
        case conflict
        /// An event type in a kind of stream it does not belong to, or a misplacement flag that is wrong.
        case stream
        /// The replica's clock (`meta.hlc`) is behind an event it has accepted.
        case clock
        /// The projection tables at their checkpoint differ from a fresh rebuild of the same events.
        case projection
    }

    /// One finding, with where it is: the local sequence number, the event id, the stream, when they apply.
    public struct Finding: Sendable, CustomStringConvertible {
        /// Which check.
        public let kind: Kind
        /// What is wrong, in one line.
        public let message: String
        /// The event's local sequence number (`events.seq`), when the finding is about one row.
        public let seq: Int64?
        /// The event id (`replica.epoch:counter`), when known.
        public let eventID: String?
        /// The stream name, when known.
        public let stream: String?

        /// Makes a finding.
        public init(_ kind: Kind, _ message: String, seq: Int64? = nil, eventID: String? = nil, stream: String? = nil) {
            self.kind = kind
            self.message = message
            self.seq = seq
            self.eventID = eventID
            self.stream = stream
        }

        /// `kind: seq N, id X, stream S: message`.
        public var description: String {
            var at: [String] = []
            if let seq { at.append("seq \(seq)") }
            if let eventID { at.append("id \(eventID)") }
            if let stream { at.append("stream \(stream)") }
            return "\(kind.rawValue): " + (at.isEmpty ? "" : at.joined(separator: ", ") + ": ") + message
        }
    }

    /// What the projection check did.
    public enum ProjectionCheck: Sendable, Equatable {
        /// The stored tables at checkpoint `seq` equal a rebuild of the events up to `seq` (digest given).
        case equal(seq: Int64, digest: String)
        /// They differ (details are in `problems`).
        case different(seq: Int64, stored: String, rebuilt: String)
        /// Not compared, and why (an older schema, a projection built by another mapping version, undecodable
        /// events).
        case skipped(String)
    }

    /// The database verified.
    public var path: String
    /// Events held in the snapshot that was checked.
    public var events = 0
    /// The highest local sequence number in the snapshot.
    public var lastSeq: Int64 = 0
    /// Streams and (stream, origin) pairs seen.
    public var streams = 0, origins = 0
    /// Integrity broken: each makes `breeze verify` fail.
    public var problems: [Finding] = []
    /// Problems beyond the first `VerificationReport.maxFindings`, counted but not listed.
    public var omittedProblems = 0
    /// Accepted conditions worth knowing (misplaced events stored flagged, timestamps beyond the skew bound).
    public var notes: [Finding] = []
    /// Notes beyond the first `VerificationReport.maxFindings`, counted but not listed.
    public var omittedNotes = 0
    /// The projection comparison.
    public var projection: ProjectionCheck = .skipped("not run")

    /// At most this many problems are listed (a badly damaged log could have millions).
    public static let maxFindings = 1000

    /// True when no problem was found.
    public var isClean: Bool { problems.isEmpty && omittedProblems == 0 }

    /// Number of problems found, listed or not.
    public var problemCount: Int { problems.count + omittedProblems }

    /// Makes an empty report for `path`.
    public init(path: String) { self.path = path }

    mutating func problem(_ f: Finding) {
        if problems.count < VerificationReport.maxFindings { problems.append(f) } else { omittedProblems += 1 }
    }

    mutating func note(_ f: Finding) {
        if notes.count < VerificationReport.maxFindings { notes.append(f) } else { omittedNotes += 1 }
    }
}
