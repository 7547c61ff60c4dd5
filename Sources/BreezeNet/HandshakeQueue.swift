/// The inbound connections still in their handshake, in accept order, and the rule for one more, with no
/// I/O (`Protocol/sync.md` section 7): at most `limit` at once. When full, a newcomer waits in the kernel's
/// accept queue (the node stops accepting) unless the oldest can go: one that has sent nothing for
/// `silentGraceMillis` (an idle socket), or any that has taken `evictAfterMillis` (a real handshake takes
/// milliseconds). So idle sockets cannot lock real peers out, and a crowd of real peers dialling together
/// (a server restart) is let in as fast as handshakes finish instead of evicting one another.
///
/// Entries are the shell's connection numbers; those that left (authenticated or closed) are skipped and
/// compacted away lazily, so entering and leaving cost O(1) during an accept storm.
struct HandshakeQueue {
    /// Most connections in their handshake at once.
    var limit: Int
    var silentGraceMillis: UInt64
    var evictAfterMillis: UInt64
    private var entries: [(id: Int, opened: UInt64)] = []
    private var head = 0
    /// Connection number -> whether it has sent anything yet.
    private var live: [Int: Bool] = [:]

    init(limit: Int, silentGraceMillis: UInt64, evictAfterMillis: UInt64) {
        self.limit = limit
        self.silentGraceMillis = silentGraceMillis
        self.evictAfterMillis = evictAfterMillis
    }

    /// Connections in their handshake now.
    var count: Int { live.count }

    func contains(_ id: Int) -> Bool { live[id] != nil }

    /// What to do with one more connection waiting to be accepted.
    enum Admission: Equatable {
        /// Accept it.
        case accept
        /// Close this one (the oldest) and accept.
        case evict(Int)
        /// Leave it waiting until a handshake ends or the oldest ages.
        case wait
    }

    mutating func admit(now t: UInt64) -> Admission {
        guard live.count >= limit, let oldest = oldest() else { return .accept }
        let age = t >= oldest.opened ? t - oldest.opened : 0
        if age >= evictAfterMillis || (live[oldest.id] == false && age >= silentGraceMillis) { return .evict(oldest.id) }
        return .wait
    }

    /// A connection accepted at `t`.
    mutating func enter(_ id: Int, now t: UInt64) {
        live[id] = false
        entries.append((id, t))
    }

    /// The connection sent its first message.
    mutating func heard(_ id: Int) {
        if live[id] == false { live[id] = true }
    }

    /// The connection left its handshake (authenticated or closing).
    mutating func leave(_ id: Int) {
        guard live.removeValue(forKey: id) != nil else { return }
        compact()
    }

    /// The oldest connection still in its handshake.
    mutating func oldest() -> (id: Int, opened: UInt64)? {
        while head < entries.count, live[entries[head].id] == nil { head += 1 }
        compact()
        return head < entries.count ? entries[head] : nil
    }

    /// The connections in their handshake opened before `t` (oldest first): those past the handshake timeout.
    mutating func expired(openedBefore t: UInt64) -> [Int] {
        var out: [Int] = []
        var i = head
        while i < entries.count, entries[i].opened < t {
            if live[entries[i].id] != nil { out.append(entries[i].id) }
            i += 1
        }
        return out
    }

    private mutating func compact() {
        if head == entries.count {
            entries.removeAll(keepingCapacity: entries.count <= 4096)
            head = 0
        } else if entries.count - head > 2 * max(live.count, 64) {
            entries = entries[head...].filter { live[$0.id] != nil }
            head = 0
        } else if head > max(64, entries.count / 2) {
            entries.removeFirst(head)
            head = 0
        }
    }
}
