/// An add-wins observed-remove set (Shapiro et al., "A comprehensive study of Convergent and Commutative
/// Replicated Data Types", 2011, section 3.3.5, with dots as in Almeida et al.'s delta-state OR-Set).
///
/// Each add is tagged with a unique dot: the id of the event that made it. A remove carries the dots of the
/// adds its writer had observed and removes exactly those; an add the writer had not seen (a concurrent add)
/// survives, so add wins. An element is present while it has an add dot that no remove has covered.
public struct ORSet<Element: Hashable & Comparable & Sendable>: Hashable, Sendable {
    /// Every add dot seen, per element.
    public private(set) var adds: [Element: Set<EventID>] = [:]
    /// Every dot removed.
    public private(set) var removed: Set<EventID> = []

    /// An empty set.
    public init() {}

    /// Records an add of `element` with dot `dot`.
    public mutating func add(_ element: Element, dot: EventID) {
        adds[element, default: []].insert(dot)
    }

    /// Records a remove that had observed `observed`.
    public mutating func remove(observed: [EventID]) {
        removed.formUnion(observed)
    }

    /// The live add dots of `element`: what a remove issued now must carry.
    public func liveDots(of element: Element) -> [EventID] {
        (adds[element] ?? []).subtracting(removed).sorted()
    }

    /// Every add dot of `element`, each with whether a remove has covered it (observed it): the element is
    /// present exactly when one of them is not covered. Sorted by dot.
    public func coverage(of element: Element) -> [(dot: EventID, removed: Bool)] {
        (adds[element] ?? []).sorted().map { ($0, removed.contains($0)) }
    }

    /// True when `element` has a live add.
    public func contains(_ element: Element) -> Bool {
        guard let dots = adds[element] else { return false }
        return !dots.isSubset(of: removed)
    }

    /// The present elements, sorted.
    public var elements: [Element] {
        adds.compactMap { $0.value.isSubset(of: removed) ? nil : $0.key }.sorted()
    }

    /// The join: union of adds and union of removes.
    public func merged(with other: ORSet) -> ORSet {
        var out = self
        for (e, dots) in other.adds { out.adds[e, default: []].formUnion(dots) }
        out.removed.formUnion(other.removed)
        return out
    }
}

/// A grow-only set of facts keyed by their natural key. The same key written twice with the same value is
/// one fact; if two writes disagree (a corrected re-import, say), the one with the greater `Stamp` is kept,
/// so every replica keeps the same one whatever the order of arrival.
public struct FactSet<Key: Hashable & Comparable & Sendable, Value: Hashable & Sendable>: Hashable, Sendable {
    /// The fact kept for each key, with the stamp of the write that gave it.
    public private(set) var facts: [Key: LWWRegister<Value>] = [:]

    /// An empty set.
    public init() {}

    /// Number of distinct keys.
    public var count: Int { facts.count }

    /// The fact for `key`.
    public subscript(key: Key) -> Value? { facts[key]?.value }

    /// Adds a fact. Returns false when the key was already there with the same value (a duplicate).
    @discardableResult
    public mutating func insert(_ key: Key, _ value: Value, stamp: Stamp) -> Bool {
        let isNew = facts[key]?.value != value
        facts[key] = Optional<Any>.merge(facts[key], LWWRegister(value, stamp: stamp))
        return isNew
    }

    /// Union, keeping the greater stamp per key.
    public func merged(with other: FactSet) -> FactSet {
        var out = self
        for (k, r) in other.facts { out.facts[k] = Optional<Any>.merge(out.facts[k], r) }
        return out
    }
}

// Codable when the elements are: the fields as declared.
extension ORSet: Codable where Element: Codable {}
extension FactSet: Codable where Key: Codable, Value: Codable {}
