/// Why one field of a user's state has its value: the events that wrote it and how the CRDT merge decided
/// between them. Built by `UserState.explain(_:events:)` from the same `apply` and merge code that computes
/// the state, so the explanation cannot disagree with the state (`consistent` checks it).
public struct FieldExplanation: Sendable {
    /// A write to a last-writer-wins field.
    public struct Write: Sendable {
        /// The event that wrote it.
        public let event: Event
        /// The value it wrote, as text.
        public let value: String
        /// For a losing write, the stamp component on which it lost to the winner (`hlc` when its clock was
        /// smaller; `replica`, `epoch` or `counter` for a tie-break on equal clocks); nil for the winner.
        public let lostOn: Stamp.Component?
    }

    /// An add to an add-wins set, identified by its dot (the id of the event that made it).
    public struct Add: Sendable {
        /// The dot.
        public let dot: EventID
        /// The add event, nil when a remove observed this dot but the add itself is not held here.
        public let event: Event?
        /// The removes that observed (and so removed) this add, by event id; empty when the add is live.
        public let removedBy: [EventID]
    }

    /// A remove from an add-wins set.
    public struct Remove: Sendable {
        /// The remove event.
        public let event: Event
        /// The add dots its writer had observed: exactly what it removes.
        public let observed: [EventID]
    }

    /// The field explained.
    public let field: UserStateField
    /// The value in effect, as text (`true`/`false` for set membership).
    public let value: String
    /// True when no event decided the value (it is the default).
    public let isDefault: Bool
    /// Register fields: the winning write (nil when none).
    public let winner: Write?
    /// Register fields: the writes that lost, greatest stamp first.
    public let losers: [Write]
    /// Set fields: every add of the element, by dot.
    public let adds: [Add]
    /// Set fields: the removes of the element, in stamp order.
    public let removes: [Remove]
    /// The test-alert field: every request (a grow-only set keeps them all), in stamp order.
    public let requests: [Event]
    /// True when the winner found by folding the writes with `LWWRegister.winner(of:)` (or the set's
    /// membership) equals what the state computed from all events holds.
    public let consistent: Bool
}

extension UserState {
    /// Explains `field` from the events of one user's stream (any order; events of other streams or types
    /// are ignored).
    ///
    /// Each event's contribution is found by applying it alone to an empty state (the same `apply`), the
    /// winner of a register is the write whose stamp the full state holds, cross-checked with
    /// `LWWRegister.winner(of:)`, and each loser says on which `Stamp.Component` it lost. For a set field,
    /// each add dot lists the removes that observed it (from `ORSet.coverage(of:)`): the element is present
    /// while an add was observed by no remove.
    public static func explain<S: Sequence>(_ field: UserStateField, events: S) -> FieldExplanation where S.Element == Event {
        let list = Array(events)
        let full = UserState(events: list)
        let value = field.effectiveValue(in: full)
        if let element = field.element {
            let set = field.set(in: full)!
            var addEvents: [EventID: Event] = [:]
            var removes: [FieldExplanation.Remove] = []
            var unheldDots = Set<EventID>()     // observed by a remove of this element, add not held here
            let dotsOfElement = set.adds[element] ?? []
            for e in list {
                var one = UserState()
                one.apply(e)
                let s = field.set(in: one)!
                if s.adds[element] != nil { addEvents[e.id] = e }
                let observed = s.removed.sorted()
                guard !observed.isEmpty else { continue }
                var named: String?
                switch try? e.body() {
                case .favouriteRemove(let x, _)?, .watchRemove(let x, _)?: named = x
                default: break
                }
                if named == element { unheldDots.formUnion(observed) }
                if named == element || !dotsOfElement.isDisjoint(with: observed) {
                    removes.append(.init(event: e, observed: observed))
                }
            }
            removes.sort { $0.event.stamp < $1.event.stamp }
            func removers(_ dot: EventID) -> [EventID] { removes.filter { $0.observed.contains(dot) }.map(\.event.id) }
            var adds: [FieldExplanation.Add] = set.coverage(of: element).map { c in
                .init(dot: c.dot, event: addEvents[c.dot], removedBy: c.removed ? removers(c.dot) : [])
            }
            for d in unheldDots.subtracting(dotsOfElement).sorted() {
                adds.append(.init(dot: d, event: nil, removedBy: removers(d)))
            }
            let present = adds.contains { $0.event != nil && $0.removedBy.isEmpty }
            return FieldExplanation(field: field, value: value, isDefault: adds.isEmpty, winner: nil, losers: [],
                                    adds: adds, removes: removes, requests: [], consistent: present == set.contains(element))
        }
        if field == .testAlerts {
            let requests = list.filter { e in
                var one = UserState()
                one.apply(e)
                return one.testAlerts.count > 0
            }.sorted { $0.stamp < $1.stamp }
            return FieldExplanation(field: field, value: value, isDefault: requests.isEmpty, winner: nil, losers: [],
                                    adds: [], removes: [], requests: requests,
                                    consistent: Set(requests.map(\.id)).count == full.testAlerts.count)
        }
        var writes: [(event: Event, register: LWWRegister<String>)] = []
        for e in list {
            var one = UserState()
            one.apply(e)
            if let r = field.register(in: one) { writes.append((e, r)) }
        }
        let held = field.register(in: full)
        let folded = LWWRegister.winner(of: writes.map(\.register))
        guard let held, let w = writes.first(where: { $0.register.stamp == held.stamp }) else {
            return FieldExplanation(field: field, value: value, isDefault: true, winner: nil, losers: [], adds: [],
                                    removes: [], requests: [], consistent: held == nil && folded == nil)
        }
        let losers = writes.filter { $0.register.stamp != held.stamp }
            .sorted { $0.register.stamp > $1.register.stamp }
            .map { FieldExplanation.Write(event: $0.event, value: $0.register.value,
                                          lostOn: held.stamp.decidingComponent(against: $0.register.stamp)) }
        return FieldExplanation(field: field, value: value, isDefault: false,
                                winner: .init(event: w.event, value: w.register.value, lostOn: nil), losers: losers,
                                adds: [], removes: [], requests: [],
                                consistent: folded == held && losers.allSatisfy { $0.event.stamp < held.stamp })
    }
}
