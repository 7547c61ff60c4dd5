import BreezeCrypto
public import BreezeNet
import BreezeStore
import BreezeSync

/// How `Replica.startSync(_:)` runs a node in the app's process.
///
/// Sync is sealed (`Protocol/sync.md`, version 3): each replica has its own device key, kept beside its
/// database (`<db>.key`, mode 0600; `Replica.devicePublicKey()` makes it), and a certificate chain an
/// authority signed for that key (`breeze enrol`). A node trusts peers whose chains lead to the cluster
/// authority's public key. What a replica may sync follows from its certificate's scope (`cluster`, or
/// `user:<id>`: that user's streams, and `public` to read).
public struct SyncOptions: Sendable {
    /// `HOST:PORT` to accept peers on (port 0: any free port), or nil for a device that only dials.
    public var listen: String?
    /// Peers to dial and keep dialling (with backoff), `HOST:PORT`, each on its own.
    public var peers: [String]
    /// The cluster's servers, `HOST:PORT`, of which a device holds one session at a time: it starts at one
    /// (chosen by its replica id, so devices spread over the servers) and fails over to the next when that
    /// one goes or cannot be reached. Nothing is lost or sent twice on the way: each new session starts
    /// with a vectors exchange.
    ///
    /// ```swift
    /// var options = try SyncOptions(certificateFile: "phone.cert", authorityFile: "cluster.pub")
    /// options.servers = ["10.0.0.2:7000", "10.0.0.3:7000", "10.0.0.4:7000"]
    /// ```
    public var servers: [String] = []
    /// This replica's certificate chain as `breeze enrol` writes it (text; public, no secret in it).
    public var certificateChain: String
    /// The cluster authority's public key as its `.pub` file holds it (64 hex digits; `#` lines are comments).
    public var authority: String
    /// When set, the certificate must grant exactly `user:<id>` (a check against starting a device with the
    /// wrong certificate); nil accepts whatever scope it grants.
    public var user: String?
    /// Diagnostics from the node, one line each (default: none).
    public var log: (@Sendable (String) -> Void)?
    /// Stop the node on SIGINT and SIGTERM (for a command-line node, such as `breeze node`; an app leaves
    /// signals alone). Default false.
    public var stopOnSignals = false
    /// How often the node looks for commits made by other processes (`NodeConfig.pollMillis`); nil keeps the
    /// node's default. Commits through this replica wake the node and do not wait for it (tests set it long
    /// to show that).
    var pollMillis: UInt64?
    /// Counters the node keeps for operators (`breeze node --metrics` serves them); nil keeps none.
    public var metrics: NodeMetrics?
    /// Called with a renewed certificate chain (its text form, as `breeze enrol` writes it) once the node
    /// installed it: the node asks its authority for one before the certificate expires (`Protocol/sync.md`
    /// 4.11), and the database keeps it too, so a restart with the old chain uses the newer one.
    public var onCertificateRenewed: (@Sendable (_ chainText: String) -> Void)?

    /// Options for a node holding `certificateChain`, trusting `authority`.
    ///
    /// ```swift
    /// let options = SyncOptions(certificateChain: enrolment.chain, authority: enrolment.authority,
    ///                           peers: ["203.0.113.7:7000"])
    /// ```
    public init(certificateChain: String, authority: String, listen: String? = nil, peers: [String] = []) {
        self.certificateChain = certificateChain
        self.authority = authority
        self.listen = listen
        self.peers = peers
    }

    /// Options read from a certificate chain file and an authority public key file.
    ///
    /// ```swift
    /// let options = try SyncOptions(certificateFile: "phone.cert", authorityFile: "cluster.pub", peers: ["10.0.0.2:7000"])
    /// ```
    ///
    /// - Throws: `BreezeError.invalidArgument` naming a file that cannot be read.
    public init(certificateFile: String, authorityFile: String, listen: String? = nil, peers: [String] = []) throws(BreezeError) {
        self.init(certificateChain: try SyncOptions.readText(certificateFile, what: "certificate"),
                  authority: try SyncOptions.readText(authorityFile, what: "authority"), listen: listen, peers: peers)
    }

    /// Checks a peer or server address (`HOST:PORT`, IPv4 or `localhost`, port 1-65535).
    ///
    /// - Throws: `BreezeError.invalidArgument` naming the address and what is wrong with it.
    public static func checkAddress(_ address: String) throws(BreezeError) {
        do { try NodeConfig.checkDialAddress(address) } catch {
            throw BreezeError(.invalidArgument, "peer \(error.description)")
        }
    }

    static func readText(_ path: String, what: String) throws(BreezeError) -> String {
        do { return String(decoding: try KeyFile.readSmallFile(path, limit: 65536, what: "a key or certificate file"), as: UTF8.self) } catch {
            throw BreezeError(.invalidArgument, "\(what) \(error.description)", underlying: error)
        }
    }

    /// An Ed25519 public key written as 64 hex digits (the one line of a `.pub` file that is not a comment).
    ///
    /// - Throws: `BreezeError.invalidArgument` when the text holds anything else.
    public static func publicKey(hexText: String, what: String) throws(BreezeError) -> [UInt8] {
        let lines = hexText.split(separator: "\n").map { $0.filter { $0 != " " && $0 != "\t" && $0 != "\r" } }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
        guard lines.count == 1, let key = Digest.bytes(hex: lines[0]), key.count == Ed25519.publicKeyLength,
              Ed25519.x25519PublicKey(key) != nil else {
            throw BreezeError(.invalidArgument, "\(what): expected an Ed25519 public key (64 hex digits)")
        }
        return key
    }

    /// The credentials these options name, for the replica whose database is `db`: its device key, the chain
    /// (which must certify that key) and the authority, checked together now.
    /// The credentials to sync with: the key beside `db` and the chain given, or the newer one the database
    /// holds for the same key (a renewal the node installed since: `Protocol/sync.md` 4.11), which may be the
    /// only one still valid.
    func credentials(db: String, replica: ReplicaID, nowMillis: UInt64, held: String? = nil) throws(BreezeError) -> SyncCredentials {
        let key: Ed25519.KeyPair
        do { key = try KeyFile.deviceKey(forDatabase: db, replica: replica, create: true) } catch {
            throw BreezeError(.invalidArgument, error.description, underlying: error)
        }
        var chain: [Certificate]
        do { chain = try CertificateChain.parse(text: certificateChain) } catch {
            throw BreezeError(.invalidArgument, "certificate: \(error.description)", underlying: error)
        }
        if let held, let newer = try? CertificateChain.parse(text: held), let n = newer.first, let c = chain.first,
           n.key == c.key, n.replica == c.replica, n.scope == c.scope, n.notAfter > c.notAfter {
            chain = newer
        }
        let authorityKey = try SyncOptions.publicKey(hexText: authority, what: "authority")
        let credentials: SyncCredentials
        do { credentials = try SyncCredentials(deviceKey: key, chain: chain, authority: authorityKey, nowMillis: nowMillis) } catch {
            throw BreezeError(.invalidArgument, "certificate: \(error.description)", underlying: error)
        }
        if let user, credentials.scope != .user(user) {
            throw BreezeError(.invalidArgument, "certificate: scope \(credentials.scope), not user:\(user)")
        }
        return credentials
    }
}
