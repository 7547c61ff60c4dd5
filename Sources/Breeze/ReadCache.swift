import BreezeStore

/// What one connection remembers between reads: each user's state, and how far the log is known to hold no
/// facts after the projection's checkpoint.
///
/// Each user's state is reduced once and then kept up to date by applying only the events that arrived since
/// (`UserState` is a join-semilattice, so applying the new events of the stream to the old state gives the
/// state of the whole stream). Observations re-read a user's state after every commit; without the cache
/// each read would reduce the whole stream again.
///
/// Used with one `EventLog` only (the one it was filled from: sequence numbers are per database), by one
/// thread at a time: the replica's, under its lock, or the observation thread's.
final class ReadCache {
    private var entries: [String: (state: UserState, seq: Int64)] = [:]
    /// Events with `seq` up to this hold no fact: the projection has nothing to apply from them, even when its
    /// checkpoint is behind (an event never changes at its `seq`).
    var factFreeThrough: Int64 = 0
    /// The sensors, their spatial index and the pipelines already run (`LogWorld` reads through it).
    let world = WorldCache()

    /// The state of `user`'s stream as committed now.
    func state(of user: String, in log: EventLog) throws -> UserState {
        try log.withSnapshot { () throws -> UserState in
            let last = try log.lastSeq()
            if var entry = entries[user] {
                if entry.seq < last {
                    try log.forEach(stream: .user(user), afterSeq: entry.seq) { e in
                        entry.state.apply(e.event)
                        return true
                    }
                    entry.seq = last
                    entries[user] = entry
                }
                return entry.state
            }
            let state = try log.userState(user: user)
            if entries.count >= 64 { entries.removeAll() }   // a bound: replicas see a handful of users
            entries[user] = (state, last)
            return state
        }
    }
}

// Confined to the connection (and thread) it serves.
@available(*, unavailable)
extension ReadCache: Sendable {}
