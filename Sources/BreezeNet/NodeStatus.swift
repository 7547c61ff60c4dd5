public import BreezeCore
public import BreezeStore

/// What a running node knows, as handed to `NodeConfig.onStatus`: its address, its peers (authenticated or
/// dialled) and this replica's own version vectors, so a caller can tell how far behind each peer is.
public struct NodeStatus: Sendable, Equatable {
    /// The address listened on, or nil for a node that only dials.
    public var listenAddress: String?
    /// False in the last status, written as the node stops.
    public var running: Bool
    /// Every authenticated inbound peer and every configured outbound one (connected or not); on a server
    /// with more devices connected than `NodeConfig.statusListsDevices`, the devices are only counted
    /// (`inboundDevices`).
    public var peers: [PeerStatus]
    /// Devices (inbound sessions of `user:` scope) connected now.
    public var inboundDevices: Int
    /// When this replica's certificate (the one new sessions use) expires, milliseconds since 1970.
    public var certificateNotAfter: UInt64?
    /// What this replica holds, per stream.
    public var localVectors: [StreamID: VersionVector]

    /// Makes a status.
    public init(listenAddress: String?, running: Bool, peers: [PeerStatus], localVectors: [StreamID: VersionVector],
                inboundDevices: Int = 0) {
        self.inboundDevices = inboundDevices
        self.listenAddress = listenAddress
        self.running = running
        self.peers = peers
        self.localVectors = localVectors
    }
}
