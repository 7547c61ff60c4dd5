/// A hybrid logical clock timestamp (Kulkarni et al., "Logical Physical Clocks", 2014): 48 bits of
/// physical time in milliseconds since the Unix epoch and a 16-bit logical counter, packed so that the
/// numeric order of `rawValue` is the timestamp order.
public struct HLC: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// `physicalMillis << 16 | logical`.
    public let rawValue: UInt64

    /// Wraps a packed value.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// Packs a physical time and a logical counter.
    public init(physicalMillis: UInt64, logical: UInt16) {
        rawValue = (physicalMillis << 16) | UInt64(logical)
    }

    /// Milliseconds since 1970-01-01T00:00:00Z.
    public var physicalMillis: UInt64 { rawValue >> 16 }
    /// Tie-breaking counter within one millisecond.
    public var logical: UInt16 { UInt16(truncatingIfNeeded: rawValue) }

    /// The smallest timestamp.
    public static let zero = HLC(rawValue: 0)

    /// `physicalMillis.logical`, e.g. `1700000000123.4`.
    public var description: String { "\(physicalMillis).\(logical)" }

    public static func < (a: HLC, b: HLC) -> Bool { a.rawValue < b.rawValue }
}

/// The hybrid logical clock of one replica, as a value with no I/O: the caller passes wall time in.
///
/// Rules (documented in `Protocol/encoding.md`, "Clocks"):
/// - A local event gets `max(wall, last + 1)`: the clock never runs backwards, even if the wall clock does.
/// - A remote timestamp at most `maxSkewMillis` ahead of the wall clock advances the clock to it, so later
///   local events order after what this replica has seen (causality).
/// - A remote timestamp further ahead is still stored (the event is valid), but it is flagged as skewed and
///   only drags the local clock as far as `wall + maxSkewMillis`: one replica with a bad clock cannot push
///   everybody's clock into the future.
/// - A local event that supersedes what this replica has seen is stamped after it, however far ahead it is
///   (`tick(wallMillis:after:)`, the HLC receive rule applied when a write needs it): `EventLog.append`
///   stamps every local event of a stream after every flagged event of that stream, so a causally later
///   write always wins a last-writer-wins merge, while streams nobody writes to leave the clock alone.
public struct HybridClock: Sendable {
    /// The last timestamp issued or observed.
    public private(set) var last: HLC
    /// How far ahead of local wall time a remote timestamp may pull the clock.
    public let maxSkewMillis: UInt64

    /// The default skew bound: 5 minutes.
    public static let defaultMaxSkewMillis: UInt64 = 5 * 60 * 1000
    /// How far ahead of the receiver's wall clock a device's event may be stamped (`Protocol/sync.md` 6.6):
    /// 24 hours. Further ahead, a session refuses it; and a device's event that is let through beyond it
    /// (one superseding a far-ahead value) moves the receiver's ahead floor no further than this.
    public static let deviceMaxAheadMillis: UInt64 = 24 * 3_600_000

    /// A clock that has issued or observed `last`.
    public init(last: HLC = .zero, maxSkewMillis: UInt64 = HybridClock.defaultMaxSkewMillis) {
        self.last = last
        self.maxSkewMillis = maxSkewMillis
    }

    /// A timestamp for a new local event, greater than every timestamp issued or observed before, except at
    /// the very top: the clock saturates at 2^64 - 1 instead of wrapping to 0 (an event stamped there by a
    /// bad peer would otherwise make every later local write the oldest of all, and lose every merge for
    /// good). At the top a new event ties and the last-writer-wins tie-break orders it; sessions refuse such
    /// stamps from devices (`SyncSession.Config.maxFutureMillis`).
    public mutating func tick(wallMillis: UInt64) -> HLC {
        let wall = HLC(physicalMillis: wallMillis, logical: 0)
        last = wall > last ? wall : HLC(rawValue: last.rawValue == .max ? .max : last.rawValue + 1)
        return last
    }

    /// A timestamp for a new local event that must order after `observed` (a value it supersedes), even when
    /// `observed` is beyond the skew bound: the clock first moves to `observed` (it never moves back), then
    /// ticks. The clock stays monotonic, and the new event is greater than `observed` and than everything
    /// issued or observed before.
    public mutating func tick(wallMillis: UInt64, after observed: HLC) -> HLC {
        if observed > last { last = observed }
        return tick(wallMillis: wallMillis)
    }

    /// Takes a remote event's timestamp into account. Returns true when the timestamp is beyond the skew
    /// bound, in which case the clock moved only to the bound.
    @discardableResult
    public mutating func observe(_ remote: HLC, wallMillis: UInt64) -> Bool {
        let bound = HLC(physicalMillis: wallMillis &+ maxSkewMillis, logical: .max)
        let skewed = remote > bound
        let target = skewed ? HLC(physicalMillis: wallMillis &+ maxSkewMillis, logical: 0) : remote
        if target > last { last = target }
        return skewed
    }
}

extension HLC: Codable {}
