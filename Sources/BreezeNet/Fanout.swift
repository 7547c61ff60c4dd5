import BreezeCore
import BreezeStore
import BreezeSync

/// What the fan-out reads: the log after a position, and one stream by stream (`EventLog` in a node, an
/// in-memory log in tests).
protocol FanoutLog {
    /// Up to `limit` rows after sequence number `seq`, in log order.
    func rows(after seq: Int64, limit: Int) throws -> [(seq: Int64, event: Event)]
    /// Events of `stream` beyond `vector`, each origin's in counter order (`EventLog.streamEvents`).
    func streamEvents(_ stream: StreamID, beyond vector: VersionVector, limit: Int) throws -> [Event]
}

extension EventLog: FanoutLog {
    func rows(after seq: Int64, limit: Int) throws -> [(seq: Int64, event: Event)] {
        try page(afterSeq: seq, limit: limit).map { ($0.seq, $0.event) }
    }
}

/// A session as the fan-out sees it (the node's `Peer`; a test's stand-in).
protocol FanoutMember: AnyObject {
    /// The member's number (the router's).
    var id: Int { get }
    var session: SyncSession { get set }
    /// Every routed row up to the router's tail was offered to it.
    var live: Bool { get set }
    /// Has something to read for itself (streams to catch up, or a scan behind the tail).
    var busy: Bool { get set }
    /// Busy, but waiting for acknowledgements or room on its socket: out of the queue until `Fanout.unpark`.
    var parked: Bool { get set }
    /// Room on its socket for more (the node stops reading the log for a peer above `maxQueuedBytes` queued).
    var hasRoom: Bool { get }
    /// Carries out the session's actions (sends, closes; a `.rescan` comes back to `planCatchUp`).
    func perform(_ actions: [SyncSession.Action])
}

/// Sending, with no sockets: every new row of the log is read once and handed to the sessions that want it
/// (`Router`); a session behind the tail catches up by itself, by stream (a device that subscribed: what it
/// lacks, planned from the router's heads) or in log order (a cluster peer), served in turn within a budget of
/// reads per turn of the loop. The node drives it (`Node+Fanout.swift`); tests drive it with an in-memory log
/// and pairs of sessions.
final class Fanout<Member: FanoutMember> {
    private(set) var router: Router
    /// Most new rows routed per call of `route`, and most log reads (and rows read) for catching up per call
    /// of `pump`.
    let routeRowsPerTurn: Int
    let catchUpReadsPerTurn: Int
    var catchUpRowsPerTurn = 32_768
    /// Called after an offer with the member (the node counts what it sent, for its metrics).
    var onSent: ((Member) -> Void)?
    /// Reading the log failed (the node logs it).
    var onError: ((String) -> Void)?
    private var members: [Int: Member] = [:]
    private var busyQueue: [Int] = []
    private var busyHead = 0

    init(router: Router, routeRowsPerTurn: Int, catchUpReadsPerTurn: Int) {
        self.router = router
        self.routeRowsPerTurn = routeRowsPerTurn
        self.catchUpReadsPerTurn = catchUpReadsPerTurn
    }

    /// Members waiting in the busy queue (some may have left it since).
    var busyCount: Int { busyQueue.count - busyHead }

    /// What `route` left.
    enum Routed: Equatable {
        /// Every row committed so far was routed.
        case done
        /// The turn's bound was reached: more may be waiting.
        case more
        /// Reading the log failed (a busy database, say): the same rows are to be read again later.
        case failed
    }

    /// Reads the rows committed since the router's tail once and hands each to the members that want it: a
    /// commit costs the (event, interested member) pairs, whatever the number of members. At most
    /// `routeRowsPerTurn` rows.
    @discardableResult
    func route(_ log: FanoutLog) -> Routed {
        var routed = 0
        while routed < routeRowsPerTurn {
            let rows: [(seq: Int64, event: Event)]
            do { rows = try log.rows(after: router.tail, limit: min(4096, routeRowsPerTurn - routed)) } catch {
                onError?("reading the log's new rows failed: \(error)")
                return .failed
            }
            guard !rows.isEmpty else { return .done }
            routed += rows.count
            let before = router.tail
            let byMember = router.route(rows)
            let through = router.tail
            for (id, entries) in byMember {
                guard let m = members[id], m.live else { continue }
                offerRouted(m, entries, after: before, through: through)
            }
        }
        return .more
    }

    /// Offers routed rows to a member at the tail; one that cannot take them all falls behind (streams to
    /// catch up, or its scan) and joins the busy queue.
    private func offerRouted(_ m: Member, _ entries: [(seq: Int64, event: Event)], after: Int64, through: Int64) {
        m.perform(m.session.offerRouted(entries, after: after, through: through, room: m.hasRoom))
        onSent?(m)
        if !m.session.caughtUpToTail(through) { m.live = false }
        markBusy(m)
    }

    /// The member's vectors arrived (or changed, or it subscribed anew): registers it and plans its catch-up.
    /// A device that subscribed reads by stream what it lacks (streams whose held vectors it does not cover,
    /// from the router's heads) and takes the rest from the tail: its cost is what it lacks, not the log. A
    /// member that wants everything scans the log from its cursor.
    func planCatchUp(_ m: Member) {
        guard let grants = m.session.grants, m.session.sending else { return }
        members[m.id] = m
        router.register(m.id, grants: grants, subscription: m.session.peerSubscription)
        if m.session.readsByStream {
            m.session.catchUpByStream(router.catchUpStreams(for: m.session), tail: router.tail)
            m.live = true
        } else {
            m.live = m.session.caughtUpToTail(router.tail)
        }
        markBusy(m)
    }

    /// The member sent `subscribe`: the index follows; one behind the tail that now reads by stream plans
    /// its catch-up that way.
    func resubscribed(_ m: Member) {
        guard members[m.id] != nil, let grants = m.session.grants else { return }
        router.register(m.id, grants: grants, subscription: m.session.peerSubscription)
        if m.session.readsByStream && !m.live { planCatchUp(m) }
        markBusy(m)
    }

    /// The member is gone.
    func remove(_ m: Member) {
        guard members.removeValue(forKey: m.id) != nil else { return }
        router.unregister(m.id)
    }

    /// Whether `m` is registered (its vectors arrived).
    func contains(_ m: Member) -> Bool { members[m.id] === m }

    /// Every registered member.
    var all: Dictionary<Int, Member>.Values { members.values }

    private func markBusy(_ m: Member) {
        guard !m.busy, !m.live || !m.session.catchingUp.isEmpty else { return }
        m.busy = true
        m.parked = false
        busyQueue.append(m.id)
    }

    /// A parked member got acknowledgements or room on its socket: back in the queue when it can send.
    /// Returns true when it went back (the shell lets the loop turn once more).
    @discardableResult
    func unpark(_ m: Member) -> Bool {
        guard m.parked, m.session.wantsEvents, m.hasRoom, members[m.id] === m else { return false }
        m.parked = false
        busyQueue.append(m.id)
        return true
    }

    /// Serves the busy members in turn, each with room in its window, within `catchUpReadsPerTurn` reads (so
    /// a crowd catching up cannot keep the loop from its sockets). Returns true when one could go on now
    /// (the budget ran out), false when the rest wait for acknowledgements or room.
    func pump(_ log: FanoutLog) -> Bool {
        var reads = 0, rows = 0, more = false
        var left = busyQueue.count - busyHead
        while left > 0 && reads < catchUpReadsPerTurn && rows < catchUpRowsPerTurn {
            left -= 1
            let id = busyQueue[busyHead]
            busyHead += 1
            guard let m = members[id], m.session.sending else {
                members[id]?.busy = false
                continue
            }
            serve(m, log, reads: &reads, rows: &rows)
            if m.live && m.session.catchingUp.isEmpty {
                m.busy = false
            } else if m.session.wantsEvents && m.hasRoom {
                busyQueue.append(id)
                more = true
            } else {
                // Waiting for acknowledgements or room: out of the queue, so a crowd waiting costs no turn.
                m.parked = true
            }
        }
        if left > 0 { more = true }
        if busyHead > 1024 && busyHead * 2 > busyQueue.count {
            busyQueue.removeFirst(busyHead)
            busyHead = 0
        }
        return more
    }

    /// One member's turn: at most four batches' worth.
    private func serve(_ m: Member, _ log: FanoutLog, reads: inout Int, rows read: inout Int) {
        var rounds = 0
        // Streams read by stream (sync.md 6.7): each origin's events beyond what the peer holds, along the id
        // index; a stream with nothing more is caught up, and the tail sends its new events. An origin whose next
        // event cannot go (an old build's longer encoding, or a relay without its origin's signature: each must be
        // the next the peer lacks, so nothing after it of that origin goes either) is read past, so the origins
        // after it in the stream still go.
        var past: [StreamID: VersionVector] = [:]
        while m.session.wantsEvents, let s = m.session.catchingUp.first, m.hasRoom && rounds < 4 && reads < catchUpReadsPerTurn
                && read < catchUpRowsPerTurn {
            reads += 1
            var beyond = m.session.peerVectors[s] ?? VersionVector()
            for (o, c) in past[s]?.counters ?? [:] where c > beyond[o] { beyond[o] = c }
            let rows: [Event]
            do { rows = try log.streamEvents(s, beyond: beyond, limit: m.session.readLimit) } catch {
                onError?("reading stream \(s) failed: \(error)")
                m.perform(m.session.storageFailed("reading stream \(s) failed"))
                return
            }
            if rows.isEmpty { m.session.caughtUp(s); continue }
            read += rows.count
            let actions = m.session.offer(stream: s, rows)
            if actions.isEmpty {
                // None of these could go (the window had room): their origins are blocked; read past them.
                var p = past[s] ?? VersionVector()
                for e in rows where e.id.counter > p[e.id.origin] { p[e.id.origin] = e.id.counter }
                past[s] = p
                continue
            }
            m.perform(actions)
            onSent?(m)
            rounds += 1
        }
        // Behind the tail, in log order (a cluster peer, or a device that wants everything).
        while !m.live, m.session.wantsEvents, m.hasRoom && rounds < 4 && reads < catchUpReadsPerTurn && read < catchUpRowsPerTurn {
            reads += 1
            let rows: [(seq: Int64, event: Event)]
            do { rows = try log.rows(after: m.session.cursor, limit: m.session.readLimit) } catch {
                onError?("reading the log failed: \(error)")
                // A damaged row is never sent; end the session (the peer redials with backoff) rather than
                // retry the same read at every turn.
                if let e = error as? StoreError, e ~= .corrupt {
                    m.perform(m.session.storageFailed("the sending replica's database is damaged"))
                }
                return
            }
            guard let last = rows.last else {
                m.live = true           // nothing after the cursor: the tail brings what comes next
                break
            }
            read += rows.count
            m.perform(m.session.offer(rows, scannedTo: last.seq))
            onSent?(m)
            if m.session.caughtUpToTail(router.tail) { m.live = true }
            rounds += 1
        }
    }

    /// The log lost rows (streams no longer wanted were dropped): the router reads what it holds again.
    func reload(heads: [StreamID: VersionVector]) { router.reload(heads: heads) }
}
