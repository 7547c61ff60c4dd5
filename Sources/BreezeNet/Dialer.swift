internal import CLibUV
import BreezeStore

/// A configured peer this node keeps dialling (`NodeConfig.peers`, `NodeConfig.servers`): one address, or a
/// group of servers of which it holds one session at a time and moves to the next when its server goes
/// (failover; the vectors exchange of the new session resumes exactly where the old one ended: nothing
/// committed is sent twice, nothing the device holds is lost).
///
/// The rule, with no I/O (`Protocol/sync.md` section 7): after a failed connect or a close, the next dial waits
/// `min(max, min × 2^attempt) × r`, r uniform in [0.5, 1.0]; `attempt` is reset by a session that lasted.
/// In a group, a session that did not last moves to the next server at once (its first try waits only the
/// shortest delay), and the backoff grows per round of every server tried.
final class Dialer {
    /// The addresses to dial, in the order tried; one for a plain peer.
    let addresses: [String]
    /// The address dialled now (an index in `addresses`).
    private(set) var current: Int
    /// Failed tries since the last session that lasted.
    private(set) var attempt = 0
    var peer: Node.Peer?
    var timer: UnsafeMutablePointer<uv_timer_t>?
    var lastError: String?
    var lastStatus: PeerStatus?
    weak var node: Node?

    /// A dialler of `addresses`, starting at `start` (a device spreads over its servers by its replica id).
    init(addresses: [String], start: Int = 0, node: Node?) {
        precondition(!addresses.isEmpty)
        self.addresses = addresses
        current = start % addresses.count
        self.node = node
    }

    /// The address to dial now.
    var address: String { addresses[current] }

    /// The key of its status row: the address, or the group's addresses (the same whichever server it is on, so
    /// a failover rewrites one row rather than leaving the old server's behind).
    var label: String { addresses.joined(separator: ",") }

    /// A session lasted: the backoff starts over.
    func lasted() { attempt = 0 }

    /// A connect failed or a session ended: the delay (milliseconds) before the next dial, which goes to the
    /// next server of a group. `unit` is uniform in [0, 1) (injected for tests).
    func failed(minMillis: UInt64, maxMillis: UInt64, unit: Double) -> UInt64 {
        attempt += 1
        let rounds: Int
        if addresses.count > 1 {
            current = (current + 1) % addresses.count
            rounds = (attempt - 1) / addresses.count
        } else {
            rounds = attempt - 1
        }
        let base = min(maxMillis, minMillis << UInt64(min(rounds, 20)))
        return UInt64(Double(base) * (0.5 + 0.5 * unit))
    }
}
