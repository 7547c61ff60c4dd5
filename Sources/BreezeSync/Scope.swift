public import BreezeCore

/// What a replica may sync, fixed by its certificate (`Certificate.scope`): `cluster` grants every stream;
/// `user:<id>` grants read and write on `user:<id>` and `health:<id>` and read-only on the shared streams
/// (`public` and the fact streams, `StreamID.isShared`).
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
}

/// What each side of a session may do with a stream, given the session scope and which side is the cluster.
public struct Grants: Sendable, Equatable {
    /// The session scope.
    public let scope: Scope
    /// Whether this side's certificate has scope `cluster` (it may send `public` to a user-scoped peer).
    public let localIsCluster: Bool
    /// Whether the peer's certificate, verified against the cluster authority, has scope `cluster`.
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
            if s.isShared { return localIsCluster }
            return s.userID == id
        }
    }

    /// May the peer write (send) this stream to us?
    public func peerMayWrite(_ s: StreamID) -> Bool {
        switch scope {
        case .cluster: return true
        case .user(let id):
            if s.isShared { return peerIsCluster }
            return s.userID == id
        }
    }
}
