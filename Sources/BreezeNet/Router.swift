import BreezeCore
import BreezeSync

/// The node's fan-out, with no I/O: which sessions want each new row of the log, and what the log holds.
///
/// The shell reads each commit's new rows once (`EventLog.page` after `tail`), decodes them once, and hands
/// them to `route`, which returns for each interested session the rows it may want; the shell offers them
/// (`SyncSession.offerRouted`). A session's interest is indexed by what decides it (`Protocol/sync.md` 5
/// and 6.7): the fact streams it subscribed to, its user's streams, `public` for every session that may read
/// the shared streams, everything for a cluster peer. So a commit costs the (event, interested session)
/// pairs, not the number of sessions, as in Electric's shape matching and Centrifugo's channel index.
///
/// It also keeps `heads`, the version vector of every stream held, up to date from the rows it routes, so a
/// new session's vectors and its catch-up plan (`catchUpStreams`) are read from memory, not from the log:
/// a reconnect costs what the device lacks.
///
/// Members are the shell's sessions, named by a small integer the shell chooses.
struct Router {
    typealias Member = Int

    /// What decides a member's interest.
    struct Interest: Equatable {
        /// The session scope.
        var scope: Scope
        /// Whether the peer may read the shared streams (`public` and the fact streams) from this side.
        var readsShared: Bool
        /// The fact streams it subscribed to; nil: all of them.
        var subscription: Set<StreamID>?
    }

    /// Every row of the log up to this sequence number has been routed.
    private(set) var tail: Int64
    /// Per stream, what the log holds of it and the members subscribed to it: one dictionary, so a routed row
    /// costs one lookup of its stream (a row of a stream nobody wants, the most common on a server, costs that
    /// and nothing more, however many members there are).
    private struct Slot {
        /// What the log holds of the stream (empty: nothing, yet).
        var head = VersionVector()
        /// Members that subscribed to the stream (a fact stream).
        var subscribers = Set<Member>()
        var isEmpty: Bool { head.counters.isEmpty && subscribers.isEmpty }
    }
    private var slots: [StreamID: Slot] = [:]
    private var members: [Member: Interest] = [:]
    /// Members that read the shared streams with no subscription: every fact stream and `public`.
    private var wholeShared = Set<Member>()
    /// Members that read the shared streams with a subscription: `public` and their streams' `subscribers`.
    private var subscribed = Set<Member>()
    /// Members of scope `cluster`: every user's streams.
    private var clusterScope = Set<Member>()
    /// Members of scope `user:<id>`, by id: that user's streams.
    private var byUser: [String: Set<Member>] = [:]

    /// A router whose log holds `heads` and ends at sequence number `tail` (read in one snapshot).
    init(tail: Int64, heads: [StreamID: VersionVector]) {
        self.tail = tail
        for (s, v) in heads where !v.counters.isEmpty { slots[s] = Slot(head: v) }
    }

    /// The version vector of every stream held (as of `tail`). Built on each call (it costs the streams held):
    /// for status and tests; `head(of:)` for one stream.
    var heads: [StreamID: VersionVector] {
        var out: [StreamID: VersionVector] = [:]
        out.reserveCapacity(slots.count)
        for (s, slot) in slots where !slot.head.counters.isEmpty { out[s] = slot.head }
        return out
    }

    /// Every stream the router knows (held, or subscribed to by a member): `head(of:)` says what is held.
    var streams: Dictionary<StreamID, some Any>.Keys { slots.keys }

    /// What the log holds of `stream` (as of `tail`), nil when nothing.
    func head(of stream: StreamID) -> VersionVector? {
        guard let v = slots[stream]?.head, !v.counters.isEmpty else { return nil }
        return v
    }

    /// Members registered now.
    var count: Int { members.count }

    /// The interest of a member, if registered.
    func interest(of m: Member) -> Interest? { members[m] }

    /// Registers `m` (or changes its interest) from its session's grants and the peer's subscription.
    mutating func register(_ m: Member, grants: Grants, subscription: Set<StreamID>?) {
        let interest = Interest(scope: grants.scope, readsShared: grants.peerMayRead(.public), subscription: subscription)
        guard members[m] != interest else { return }
        unregister(m)
        members[m] = interest
        if interest.readsShared {
            if let sub = interest.subscription {
                subscribed.insert(m)
                for s in sub { slots[s, default: Slot()].subscribers.insert(m) }
            } else {
                wholeShared.insert(m)
            }
        }
        switch interest.scope {
        case .cluster: clusterScope.insert(m)
        case .user(let id): byUser[id, default: []].insert(m)
        }
    }

    /// Forgets `m`.
    mutating func unregister(_ m: Member) {
        guard let old = members.removeValue(forKey: m) else { return }
        wholeShared.remove(m)
        subscribed.remove(m)
        for s in old.subscription ?? [] {
            slots[s]?.subscribers.remove(m)
            if slots[s]?.isEmpty == true { slots[s] = nil }
        }
        switch old.scope {
        case .cluster: clusterScope.remove(m)
        case .user(let id):
            byUser[id]?.remove(m)
            if byUser[id]?.isEmpty == true { byUser[id] = nil }
        }
    }

    /// Calls `body` for every member that may want events of `stream` (its grants and subscription).
    func forEachInterested(in stream: StreamID, _ body: (Member) -> Void) {
        forEachInterested(in: stream, subscribers: slots[stream]?.subscribers ?? [], body)
    }

    private func forEachInterested(in stream: StreamID, subscribers: Set<Member>, _ body: (Member) -> Void) {
        switch stream {
        case .public:
            for m in wholeShared { body(m) }
            for m in subscribed { body(m) }
        case .sensor, .pollen, .climate:
            for m in wholeShared { body(m) }
            for m in subscribers { body(m) }
        case .user(let id), .health(let id):
            for m in clusterScope { body(m) }
            for m in byUser[id] ?? [] { body(m) }
        }
    }

    /// Routes rows read after `tail`, in log order: `tail` and `heads` move past them, and the result holds,
    /// for every member that may want some of them, those rows in log order. Rows at or before `tail` (read
    /// twice) are passed over.
    mutating func route(_ rows: [(seq: Int64, event: Event)]) -> [Member: [(seq: Int64, event: Event)]] {
        var out: [Member: [(seq: Int64, event: Event)]] = [:]
        for row in rows where row.seq > tail {
            tail = row.seq
            let subscribers = Self.advance(&slots[row.event.stream, default: Slot()], to: row.event.id)
            forEachInterested(in: row.event.stream, subscribers: subscribers) { out[$0, default: []].append(row) }
        }
        return out
    }

    /// One lookup of the row's stream: its head moves, its subscribers are read.
    private static func advance(_ slot: inout Slot, to id: EventID) -> Set<Member> {
        slot.head.advance(to: id)
        return slot.subscribers
    }

    /// Moves `tail` to `seq` without rows (the log ends there with nothing new to route).
    mutating func skip(to seq: Int64) { tail = max(tail, seq) }

    /// Replaces what the log holds (after rows were dropped: a device's streams no longer wanted). The tail
    /// stays: rows committed since are still to be routed (their events may be in `heads` already, which
    /// only makes a catch-up plan read a stream the tail would have brought too).
    mutating func reload(heads: [StreamID: VersionVector]) {
        for s in Array(slots.keys) {
            slots[s]!.head = heads[s] ?? VersionVector()
            if slots[s]!.isEmpty { slots[s] = nil }
        }
        for (s, v) in heads where slots[s] == nil && !v.counters.isEmpty { slots[s] = Slot(head: v) }
    }

    /// The vectors a session sends (`Protocol/sync.md` 6.1): every stream the peer may write here. A device
    /// served by the cluster may write only its user's streams, so it gets two entries, not the city's.
    func vectors(for grants: Grants) -> [StreamID: VersionVector] {
        if case .user(let id) = grants.scope, !grants.peerMayWrite(.public) {
            var out: [StreamID: VersionVector] = [:]
            for s in [StreamID.user(id), .health(id)] { if let v = head(of: s) { out[s] = v } }
            return out
        }
        var out: [StreamID: VersionVector] = [:]
        for (s, slot) in slots where !slot.head.counters.isEmpty && grants.peerMayWrite(s) { out[s] = slot.head }
        return out
    }

    /// The streams a session that reads by stream must catch up (`SyncSession.catchUpByStream`): those it
    /// wants of which this side holds events the peer lacks (by its vectors and what was sent since). Costs
    /// the streams the peer wants, not the log.
    func catchUpStreams(for session: SyncSession) -> [StreamID] {
        guard let grants = session.grants, let sub = session.peerSubscription else { return [] }
        var out: [StreamID] = []
        func consider(_ s: StreamID) {
            guard let held = head(of: s), (session.peerVectors[s] ?? VersionVector()).missing(from: held) > 0 else { return }
            out.append(s)
        }
        consider(.public)
        switch grants.scope {
        case .user(let id):
            consider(.user(id))
            consider(.health(id))
        case .cluster:
            for s in slots.keys where !s.isFactPartition && s != .public { consider(s) }
        }
        for s in sub { consider(s) }
        return out
    }

    /// Events the peer of `session` lacks in the streams `streams` (by its vectors and what was sent since).
    func lag(of session: SyncSession, over streams: some Sequence<StreamID>) -> UInt64 {
        var n: UInt64 = 0
        for s in streams {
            guard let held = head(of: s) else { continue }
            n += (session.peerVectors[s] ?? VersionVector()).missing(from: held)
        }
        return n
    }
}
