import BreezeCore

/// Where two replays of the same events in two orders first disagree: the determinism check of
/// `breeze diff`.
///
/// Both orders are walked side by side. After `n` events of each, the two replays have applied the same
/// *set* of events exactly when every id seen in one order has been seen in the other (a common cut); only
/// there can their states be compared. The first common cut at which the states differ is reported, with the
/// events each order applied since the previous common cut (where the states still agreed). With correct
/// CRDTs this never happens: every order of the same events gives the same state.
struct ReplayDivergence {
    /// Events applied by each replay at the first differing cut.
    let applied: Int
    /// The previous common cut (events applied when the states last agreed).
    let lastAgreed: Int
    /// The events (local seq and event) each order applied between the two cuts.
    let sinceA: [(seq: Int64, event: Event)]
    let sinceB: [(seq: Int64, event: Event)]

    /// The first common cut at which `apply` folded over `a` and over `b` disagree, or nil when they agree at
    /// every common cut. `a` and `b` must hold the same events.
    static func first<S: Equatable>(_ a: [(seq: Int64, event: Event)], _ b: [(seq: Int64, event: Event)], initial: S,
                                    progress: (Int) -> Void = { _ in },
                                    apply: (inout S, Event) -> Void) -> ReplayDivergence? {
        var sa = initial, sb = initial
        var balance: [EventID: Int] = [:]      // +1 seen in a only, -1 seen in b only
        var last = 0
        for i in 0..<min(a.count, b.count) {
            apply(&sa, a[i].event)
            apply(&sb, b[i].event)
            for (id, d) in [(a[i].event.id, 1), (b[i].event.id, -1)] {
                let v = balance[id, default: 0] + d
                balance[id] = v == 0 ? nil : v
            }
            if i % 10_000 == 0 { progress(i) }
            guard balance.isEmpty else { continue }
            if sa != sb {
                return ReplayDivergence(applied: i + 1, lastAgreed: last, sinceA: Array(a[last...i]), sinceB: Array(b[last...i]))
            }
            last = i + 1
        }
        return nil
    }
}
