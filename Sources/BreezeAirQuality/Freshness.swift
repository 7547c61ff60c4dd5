/// How current a reading is, for greying out or hiding it (`shared/docs/domain.md` sections 7 and 9).
///
/// There is no official EPA or PurpleAir number; these are the project's conventions: PurpleAir readings
/// are stale after 60 minutes (they arrive every 2 minutes), monitor readings after 3 hours (they are
/// hourly and posted after the hour), and anything is hidden after 7 days (PurpleAir's default `max_age`).
public enum Freshness: String, CaseIterable, Comparable, Sendable {
    /// Show normally.
    case fresh
    /// Show, marked as old.
    case stale
    /// Do not show.
    case hidden

    /// The kind of source, which sets the stale threshold.
    public enum SourceKind: String, CaseIterable, Sendable {
        /// A low-cost PurpleAir sensor; age = now − `last_seen`.
        case purpleAir = "purpleair"
        /// A regulatory monitor (AirNow, AQS, OpenAQ); age = now − end of the observation hour.
        case monitor = "monitor"

        /// Seconds after which a reading of this kind is stale.
        public var staleAfterSeconds: Int64 {
            switch self {
            case .purpleAir: return 60 * 60
            case .monitor: return 3 * 60 * 60
            }
        }
    }

    /// Seconds after which any reading is hidden (7 days).
    public static let hiddenAfterSeconds: Int64 = 7 * 24 * 60 * 60

    /// Classifies a reading by age. "After" is strict: a PurpleAir reading exactly 60 minutes old is still
    /// fresh. A negative age (a clock ahead of ours) counts as fresh.
    public init(ageSeconds: Int64, kind: SourceKind) {
        if ageSeconds > Self.hiddenAfterSeconds {
            self = .hidden
        } else if ageSeconds > kind.staleAfterSeconds {
            self = .stale
        } else {
            self = .fresh
        }
    }

    private var order: Int {
        switch self {
        case .fresh: return 0
        case .stale: return 1
        case .hidden: return 2
        }
    }

    /// fresh < stale < hidden.
    public static func < (a: Freshness, b: Freshness) -> Bool { a.order < b.order }
}
