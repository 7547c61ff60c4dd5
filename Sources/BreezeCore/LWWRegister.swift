/// A last-writer-wins register: the value written by the write with the greatest `Stamp`.
///
/// `Stamp` is a total order (HLC, then origin replica, epoch and counter), so merge is commutative,
/// associative and idempotent even when two writes carry the same clock reading; a tie-break on the clock
/// alone would not be (the bug `swift-distributed-actors`' old LWW register had).
public struct LWWRegister<Value: Hashable & Sendable>: Hashable, Sendable {
    /// The winning value.
    public private(set) var value: Value
    /// The stamp of the write that set it.
    public private(set) var stamp: Stamp

    /// A register holding one write.
    public init(_ value: Value, stamp: Stamp) {
        self.value = value
        self.stamp = stamp
    }

    /// Applies a write; it wins when its stamp is greater.
    public mutating func set(_ value: Value, stamp: Stamp) {
        if stamp > self.stamp {
            self.value = value
            self.stamp = stamp
        }
    }

    /// The join of two registers.
    public func merged(with other: LWWRegister) -> LWWRegister {
        other.stamp > stamp ? other : self
    }

    /// The register that a set of writes leaves, by the same join `merged(with:)` that state uses (nil for
    /// no writes); `explain` names its write as the winner.
    public static func winner(of writes: [LWWRegister]) -> LWWRegister? {
        writes.reduce(nil) { Optional<Any>.merge($0, $1) }
    }
}

extension Optional {
    /// Join of optional registers: an absent register is the bottom element.
    static func merge<V>(_ a: LWWRegister<V>?, _ b: LWWRegister<V>?) -> LWWRegister<V>? {
        switch (a, b) {
        case (nil, nil): return nil
        case (let x?, nil): return x
        case (nil, let y?): return y
        case (let x?, let y?): return x.merged(with: y)
        }
    }
}

/// A map of independent last-writer-wins registers, one per key (used for per-source settings and
/// biomarker targets). Keys are never removed; writing a new value replaces the old one.
public struct LWWMap<Key: Hashable & Comparable & Sendable, Value: Hashable & Sendable>: Hashable, Sendable {
    /// The register for each key written so far.
    public private(set) var entries: [Key: LWWRegister<Value>] = [:]

    /// An empty map.
    public init() {}

    /// The current value for `key`.
    public subscript(key: Key) -> Value? { entries[key]?.value }

    /// Applies a write to one key.
    public mutating func set(_ key: Key, _ value: Value, stamp: Stamp) {
        if entries[key] == nil {
            entries[key] = LWWRegister(value, stamp: stamp)
        } else {
            entries[key]!.set(value, stamp: stamp)
        }
    }

    /// Point-wise join.
    public func merged(with other: LWWMap) -> LWWMap {
        var out = self
        for (k, r) in other.entries { out.entries[k] = Optional<Any>.merge(out.entries[k], r) }
        return out
    }

    /// Keys in ascending order.
    public var sortedKeys: [Key] { entries.keys.sorted() }
}

// Codable when the values are (a `UserState` stored by an app, say): the fields as declared.
extension LWWRegister: Codable where Value: Codable {}
extension LWWMap: Codable where Key: Codable, Value: Codable {}
