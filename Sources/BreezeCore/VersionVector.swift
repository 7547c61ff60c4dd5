/// What a replica holds of one stream: for each origin, the highest counter it holds, knowing that it holds
/// every counter from 1 up to that one (the log refuses gaps). Merge is the point-wise maximum
/// (Parker et al., "Detection of Mutual Inconsistency in Distributed Systems", 1983).
public struct VersionVector: Hashable, Sendable, CustomStringConvertible {
    /// Highest contiguous counter per origin; absent means 0.
    public private(set) var counters: [Origin: UInt64]

    /// An empty vector, or one from counters (zeros are dropped).
    public init(_ counters: [Origin: UInt64] = [:]) {
        self.counters = counters.filter { $0.value > 0 }
    }

    /// The counter held for `origin` (0 when none).
    public subscript(origin: Origin) -> UInt64 {
        get { counters[origin] ?? 0 }
        set { counters[origin] = newValue == 0 ? nil : newValue }
    }

    /// True when the event with this id is summarised by the vector.
    public func contains(_ id: EventID) -> Bool { self[id.origin] >= id.counter }

    /// Records that `id` (the next counter for its origin) is held.
    public mutating func advance(to id: EventID) {
        guard id.counter > 0 else { return }
        Self.raise(&counters[id.origin, default: 0], to: id.counter)     // one lookup of the origin
    }

    private static func raise(_ c: inout UInt64, to n: UInt64) { if n > c { c = n } }

    /// Point-wise maximum.
    public func merged(with other: VersionVector) -> VersionVector {
        var out = self
        for (o, c) in other.counters where c > out[o] { out[o] = c }
        return out
    }

    /// Total number of events the vector summarises.
    public var total: UInt64 { counters.values.reduce(0, +) }

    /// How many events `other` holds that `self` lacks.
    public func missing(from other: VersionVector) -> UInt64 {
        other.counters.reduce(0) { $0 + ($1.value > self[$1.key] ? $1.value - self[$1.key] : 0) }
    }

    /// How two vectors relate.
    public enum Order: Sendable, Equatable { case before, after, same, concurrent }

    /// `.before` when `self` holds a strict subset of `other`, `.after` for a strict superset.
    public func compare(_ other: VersionVector) -> Order {
        var less = false, greater = false
        for o in Set(counters.keys).union(other.counters.keys) {
            let a = self[o], b = other[o]
            if a < b { less = true } else if a > b { greater = true }
        }
        switch (less, greater) {
        case (false, false): return .same
        case (true, false): return .before
        case (false, true): return .after
        case (true, true): return .concurrent
        }
    }

    /// Entries sorted by origin, for stable display and encoding.
    public var sorted: [(origin: Origin, counter: UInt64)] {
        counters.sorted { $0.key < $1.key }.map { (origin: $0.key, counter: $0.value) }
    }

    /// `{replica.epoch: counter, ...}` sorted by origin.
    public var description: String {
        "{" + sorted.map { "\($0.origin): \($0.counter)" }.joined(separator: ", ") + "}"
    }
}
