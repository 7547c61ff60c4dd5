public import BreezeCore
import BreezeCrypto

/// What a replica may sync, fixed by the secret it holds: the cluster secret grants every stream; a user's
/// secret (derived from the cluster secret) grants read and write on `user:<id>` and `health:<id>` and
/// read-only on `public`.
public enum Scope: Hashable, Sendable, CustomStringConvertible {
    case cluster
    case user(String)

    /// `cluster` or `user:<id>`.
    public var description: String {
        switch self {
        case .cluster: return "cluster"
        case .user(let id): return "user:\(id)"
        }
    }

    /// Parses `cluster` or `user:<id>`.
    public init?(_ text: String) {
        if text == "cluster" { self = .cluster; return }
        guard text.hasPrefix("user:") else { return nil }
        let id = String(text.dropFirst(5))
        guard (try? StreamID.validateUserID(id)) != nil else { return nil }
        self = .user(id)
    }

    /// The scope of a session between a replica of scope `a` and one of scope `b`: the narrower of the two;
    /// nil when they cannot sync (two different users).
    public static func session(_ a: Scope, _ b: Scope) -> Scope? {
        switch (a, b) {
        case (.cluster, .cluster): return .cluster
        case (.cluster, .user(let x)), (.user(let x), .cluster): return .user(x)
        case (.user(let x), .user(let y)): return x == y ? .user(x) : nil
        }
    }

    /// The shared key for a session of this scope, from the secret a replica holds (`own` is that replica's
    /// scope). A cluster replica derives any user's key; a user replica has only its own.
    public func key(ownScope: Scope, secret: [UInt8]) -> [UInt8]? {
        switch (self, ownScope) {
        case (.cluster, .cluster): return secret
        case (.user(let id), .cluster): return Scope.userKey(clusterSecret: secret, user: id)
        case (.user(let id), .user(let mine)) where id == mine: return secret
        default: return nil
        }
    }

    /// A user's secret: HMAC-SHA-256(cluster secret, "breeze user key v1" 0x00 user id). A device gets this
    /// value (`breeze secret derive`), never the cluster secret.
    public static func userKey(clusterSecret: [UInt8], user: String) -> [UInt8] {
        HMAC.sha256(key: clusterSecret, message: Array("breeze user key v1".utf8) + [0] + Array(user.utf8))
    }
}

/// What each side of a session may do with a stream, given the session scope and which side is the cluster.
public struct Grants: Sendable, Equatable {
    /// The session scope.
    public let scope: Scope
    /// Whether this side holds the cluster secret (it may send `public` to a user-scoped peer).
    public let localIsCluster: Bool
    /// Whether the peer holds the cluster secret.
    public let peerIsCluster: Bool

    /// Makes grants.
    public init(scope: Scope, localIsCluster: Bool, peerIsCluster: Bool) {
        self.scope = scope
        self.localIsCluster = localIsCluster
        self.peerIsCluster = peerIsCluster
    }

    /// May the peer read (receive) this stream from us?
    public func peerMayRead(_ s: StreamID) -> Bool {
        switch scope {
        case .cluster: return true
        case .user(let id):
            if s == .public { return localIsCluster }
            return s.userID == id
        }
    }

    /// May the peer write (send) this stream to us?
    public func peerMayWrite(_ s: StreamID) -> Bool {
        switch scope {
        case .cluster: return true
        case .user(let id):
            if s == .public { return peerIsCluster }
            return s.userID == id
        }
    }
}
