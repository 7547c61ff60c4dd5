internal import CLibUV
import BreezeCore
public import BreezeStore
public import BreezeSync
@preconcurrency import Glibc

/// How a node is set up.
public struct NodeConfig: Sendable {
    /// The database (it must exist: `breeze init`).
    public var dbPath: String
    /// `HOST:PORT` to accept peers on (port 0 picks a free port), or nil to only dial.
    public var listen: String?
    /// Peers to dial and keep dialling, each on its own.
    public var peers: [String] = []
    /// Servers of which this node (a device) holds one session at a time: it starts at one (chosen by its
    /// replica id, so a crowd of devices spreads over them) and moves to the next when that one goes or
    /// cannot be reached (failover). The new session's vectors exchange resumes exactly.
    public var servers: [String] = []
    /// This replica's device key, its certificate chain and the cluster authority's public key it trusts;
    /// the scope comes from the certificate, whose replica id must be the database's.
    public var credentials: SyncCredentials
    /// Commit durability.
    public var durability: EventLog.Durability = .full
    /// Stop on SIGINT and SIGTERM.
    public var handleSignals = false
    public var handshakeTimeoutMillis: UInt64 = 5000
    /// Most inbound connections allowed in the handshake at once (`HandshakeQueue`). When full, one more
    /// waits in the kernel's accept queue, unless the oldest still in its handshake has sent nothing for
    /// `silentHandshakeGraceMillis` or has taken `handshakeEvictAfterMillis`: that one is closed for it. So
    /// idle sockets cannot lock real peers out, and a crowd of real peers dialling together is let in as
    /// fast as handshakes finish.
    public var maxUnauthenticated = 256
    public var silentHandshakeGraceMillis: UInt64 = 500
    public var handshakeEvictAfterMillis: UInt64 = 1_500
    /// Most `ping`, `pong` and `vectors` messages a peer may send in one second (a correct peer sends one
    /// ping per 10 s of silence and vectors at most every 10 s): a token bucket of this many, refilled at this
    /// rate. A peer that runs out is throttled: the node stops reading its socket until the bucket refills.
    public var maxControlPerSecond = 20
    /// A peer throttled by `maxControlPerSecond` without a break (its bucket never full again) for longer
    /// than this is closed as a flood.
    public var floodCloseMillis: UInt64 = 5_000
    /// How long a closing connection may take to write its last frames before it is closed by force.
    public var closeGraceMillis: UInt64 = 2000
    public var idleTimeoutMillis: UInt64 = 30_000
    /// In ready, how long batches may wait with no acknowledgement arriving before the session is ended (a
    /// lost `ack` or `events` frame; the next session resumes from vectors).
    public var ackTimeoutMillis: UInt64 = 10_000
    /// In ready, a `ping` after this long with nothing sent (`Protocol/sync.md` section 7): a third of the idle
    /// timeout, so a live peer is never taken for a dead one, and one exchange per 10 s per idle session (a
    /// server with 10,000 idle devices answers 1,000 a second, not 2,000).
    public var pingIntervalMillis: UInt64 = 10_000
    public var reconnectMinMillis: UInt64 = 100
    public var reconnectMaxMillis: UInt64 = 5_000
    /// How often to look for commits by other processes.
    public var pollMillis: UInt64 = 10
    /// Most events in one `events` batch (`SyncSession.Config.batchEvents`). A receiving node stores each
    /// loop iteration's batches in one transaction, so larger batches spread a commit's fsync over more
    /// events; `batchBytes` (512 KiB) still bounds a batch's size.
    public var batchEvents = NodeConfig.defaultBatchEvents
    /// The default `batchEvents`.
    public static let defaultBatchEvents = 2048
    public var window = 4
    /// Above this many bytes queued on a socket, stop reading the log for that peer.
    public var maxQueuedBytes = 8 << 20
    /// Most new log rows routed to the sessions in one turn of the loop (the rest at the next turns), so a
    /// large commit does not keep the loop from its sockets.
    public var routeRowsPerTurn = 16_384
    /// Most log reads (a page, or a stream read by stream) for sessions catching up in one turn of the loop,
    /// shared in turn among them, so a crowd catching up does not keep the loop from its sockets.
    public var catchUpReadsPerTurn = 256
    /// Most authentications a device (an inbound session of `user:` scope) may make in a minute: a budget of
    /// this many, refilled at this rate; beyond, its session is closed right after its handshake. A device has
    /// one session at a time (the newest wins).
    public var deviceSessionsPerMinute = 12
    /// `onStatus` lists devices connected to this node while there are at most this many; beyond, it counts
    /// them (`NodeStatus.inboundDevices`): a server's thousands of devices are for the metrics, not a list.
    public var statusListsDevices = 64
    /// Wall time in milliseconds for event timestamps (`EventLog.Options.wallClock`); tests shift it.
    public var wallClock: @Sendable () -> UInt64 = { SystemClock.nowMillis() }
    /// Diagnostics (one line each).
    public var log: @Sendable (String) -> Void = { _ in }
    /// Called on the loop thread after each group commit that stored events received from peers, with how
    /// many were stored (so an embedding process can tell its observers without polling).
    public var onCommit: (@Sendable (_ inserted: Int) -> Void)?
    /// Called on the loop thread each time the node writes its status (every second, and soon after a peer
    /// connects or disconnects), and once when it stops.
    public var onStatus: (@Sendable (NodeStatus) -> Void)?
    /// Called on the loop thread with a renewed certificate chain (its text form) once the node installed it
    /// (`Protocol/sync.md` 4.11): `breeze node` rewrites its `--cert` file with it.
    public var onCertificate: (@Sendable (_ chainText: String) -> Void)?
    /// Counters for operators (`breeze node --metrics`), updated by the loop thread; nil collects none.
    public var metrics: NodeMetrics?
    /// On a cluster replica, when this replica's own small reading events (a live feed's) are merged into
    /// `reading.compact` events (`EventLog.compactReadings`); nil never compacts. The node looks for streams due
    /// once a minute and compacts `compactStreamsPerSecond` of them a second, so its loop never stalls.
    public var compaction: CompactionPolicy? = .default
    public var compactStreamsPerSecond = 4

    /// Checks an address to dial (`HOST:PORT`: an IPv4 address or `localhost`, a port from 1 to 65535).
    ///
    /// - Throws: `NodeError` naming the address and what is wrong with it.
    public static func checkDialAddress(_ address: String) throws(NodeError) {
        let addr: sockaddr_in
        do { addr = try SocketAddress.parse(address) } catch { throw NodeError(error.description) }
        guard addr.sin_port != 0 else { throw NodeError("address '\(address)': port 0 cannot be dialled") }
    }

    public init(dbPath: String, listen: String?, credentials: SyncCredentials) {
        self.dbPath = dbPath
        self.listen = listen
        self.credentials = credentials
    }
}

/// A running node, seen from other threads: `stop()` asks it to shut down (thread-safe, any number of
/// times), `wait()` blocks until its loop thread has finished.
///
/// `@unchecked Sendable`: its mutable state (`stopAsync`, `finished`) is guarded by `lock`; the async handle
/// is the only libuv object touched from other threads, and `uv_async_send` is documented thread-safe.
public final class NodeHandle: @unchecked Sendable {
    /// The address actually listened on (with the real port when 0 was asked), or nil.
    public let listenAddress: String?
    private var lock = pthread_mutex_t()
    private var stopAsync: UnsafeMutablePointer<uv_async_t>?
    private var wakeAsync: UnsafeMutablePointer<uv_async_t>?
    private var thread: pthread_t?
    private var finished = false

    fileprivate init(listenAddress: String?) {
        self.listenAddress = listenAddress
        pthread_mutex_init(&lock, nil)
    }

    /// Starts a node on a new thread. Returns once it is listening (or has failed to start).
    ///
    /// - Throws: `NodeError` naming what failed (database, address, ...).
    public static func start(_ config: NodeConfig) throws(NodeError) -> NodeHandle {
        // A peer that resets while we write must give EPIPE, not kill the process (libuv does not use
        // MSG_NOSIGNAL).
        signal(SIGPIPE, SIG_IGN)
        var config = config
        var seen = Set<String>()
        config.peers = config.peers.filter { seen.insert($0).inserted }
        let startup = Startup(config: config)
        var tid = pthread_t()
        let box = Unmanaged.passRetained(startup).toOpaque()
        let rc = pthread_create(&tid, nil, { arg in
            let s = Unmanaged<Startup>.fromOpaque(arg!).takeRetainedValue()
            s.runLoop()
            return nil
        }, box)
        guard rc == 0 else {
            Unmanaged<Startup>.fromOpaque(box).release()
            throw NodeError("cannot start the loop thread (error \(rc))")
        }
        startup.waitUntilStarted()
        if let e = startup.error {
            pthread_join(tid, nil)
            throw e
        }
        let handle = startup.handle!
        handle.thread = tid
        return handle
    }

    /// Asks the node to shut down cleanly.
    public func stop() {
        pthread_mutex_lock(&lock)
        defer { pthread_mutex_unlock(&lock) }
        if let a = stopAsync, !finished { uv_async_send(a) }
    }

    /// Tells the node that this process has committed events to its database (thread-safe, cheap, any number
    /// of times: wake-ups coalesce), so its sessions send them at once instead of at the next poll.
    public func wake() {
        pthread_mutex_lock(&lock)
        defer { pthread_mutex_unlock(&lock) }
        if let a = wakeAsync, !finished { uv_async_send(a) }
    }

    /// Waits for the loop thread to end.
    public func wait() {
        if let t = thread { pthread_join(t, nil) }
        thread = nil
    }

    fileprivate func setAsync(_ a: UnsafeMutablePointer<uv_async_t>?, wake w: UnsafeMutablePointer<uv_async_t>?) {
        pthread_mutex_lock(&lock)
        stopAsync = a
        wakeAsync = w
        if a == nil { finished = true }
        pthread_mutex_unlock(&lock)
    }

    /// Runs the node on its thread: created by `start`, owned by the loop thread.
    private final class Startup: @unchecked Sendable {
        // `@unchecked Sendable`: handed to the loop thread once; `error` and `handle` are written by that
        // thread before the semaphore is posted and read by the starting thread only after waiting on it.
        let config: NodeConfig
        var error: NodeError?
        var handle: NodeHandle?
        private var ready = sem_t()

        init(config: NodeConfig) {
            self.config = config
            sem_init(&ready, 0, 0)
        }

        func waitUntilStarted() { while sem_wait(&ready) != 0 {} }

        func runLoop() {
            let loop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
            uv_loop_init(loop)
            let node: Node
            do {
                node = try Node(config: config, loop: loop)
            } catch {
                self.error = NodeError("\(error)")
                uv_walk(loop, { h, _ in if uv_is_closing(h) == 0 { uv_close(h, nil) } }, nil)
                uv_run(loop, UV_RUN_DEFAULT)
                uv_loop_close(loop)
                loop.deallocate()
                sem_post(&ready)
                return
            }
            let handle = NodeHandle(listenAddress: node.listenAddress)
            self.handle = handle
            let async = UnsafeMutablePointer<uv_async_t>.allocate(capacity: 1)
            let ctx = Unmanaged.passRetained(node).toOpaque()
            uv_async_init(loop, async) { a in Node.from(a).shutdownAll() }
            async.pointee.data = ctx
            node.extraHandles.append(UnsafeMutableRawPointer(async))
            let wake = UnsafeMutablePointer<uv_async_t>.allocate(capacity: 1)
            uv_async_init(loop, wake) { a in Node.from(a).localCommit() }
            wake.pointee.data = ctx
            node.extraHandles.append(UnsafeMutableRawPointer(wake))
            var signals: [UnsafeMutablePointer<uv_signal_t>] = []
            if config.handleSignals {
                // A parent may have started us with these blocked; the node must hear them.
                var unblock = sigset_t()
                sigemptyset(&unblock)
                sigaddset(&unblock, SIGINT)
                sigaddset(&unblock, SIGTERM)
                pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
                for sig in [SIGINT, SIGTERM] {
                    let s = UnsafeMutablePointer<uv_signal_t>.allocate(capacity: 1)
                    uv_signal_init(loop, s)
                    s.pointee.data = ctx
                    uv_signal_start(s, { s, signum in
                        Node.from(s).config.log("received signal \(signum): shutting down")
                        Node.from(s).shutdownAll()
                    }, sig)
                    signals.append(s)
                    node.extraHandles.append(UnsafeMutableRawPointer(s))
                }
            }
            handle.setAsync(async, wake: wake)
            sem_post(&ready)
            uv_run(loop, UV_RUN_DEFAULT)
            handle.setAsync(nil, wake: nil)
            // Anything still open (should be nothing) is closed so the loop can be closed.
            uv_walk(loop, { h, _ in if uv_is_closing(h) == 0 { uv_close(h, nil) } }, nil)
            uv_run(loop, UV_RUN_DEFAULT)
            node.release()
            for p in node.extraHandles { p.deallocate() }
            Unmanaged<Node>.fromOpaque(ctx).release()
            uv_loop_close(loop)
            loop.deallocate()
            _ = signals
        }
    }
}

/// Why a node could not start.
public struct NodeError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

extension Node {
    /// Shutdown triggered by `NodeHandle.stop()` or a signal: the node's own shutdown, then the async and
    /// signal handles, so the loop has nothing left and `uv_run` returns.
    func shutdownAll() {
        shutdown()
        for h in extraHandles {
            let raw = h.assumingMemoryBound(to: uv_handle_t.self)
            if uv_is_closing(raw) == 0 { uv_close(raw, nil) }
        }
    }
}
