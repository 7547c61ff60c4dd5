import BreezeCore
import BreezeNet
import BreezeStore
import BreezeSync
@preconcurrency import Glibc

/// `breeze node`: runs a replica until SIGINT or SIGTERM.
enum NodeCommand {
    static let usage = """
        usage: breeze node --db PATH --listen HOST:PORT [--peer HOST:PORT]... --cert FILE --authority FILE
          --listen      address to accept peers on (port 0: any free port; the address is printed)
          --peer        a peer to dial and keep dialling (repeatable)
          --cert        this replica's certificate chain (`breeze enrol`); its scope is what the node syncs
          --authority   the cluster authority's public key (the .pub file of `breeze authority new`)
          the device key is DB.key beside the database (mode 0600; `breeze init` or `breeze key show` makes it)
        """

    static func run(_ args: [String], _ ctx: Context) throws(CLIError) {
        let a = try Arguments(args, valued: ["listen", "cert", "authority"], multi: ["peer"], usage: usage)
        _ = try a.expect([])
        guard let certFile = a.options["cert"] else { throw .usage("--cert FILE is required (`breeze enrol` makes it)", usage) }
        guard let authorityFile = a.options["authority"] else { throw .usage("--authority FILE is required (the cluster authority's public key)", usage) }
        let peers = a.repeated["peer"] ?? []
        guard a.options["listen"] != nil || !peers.isEmpty else {
            throw .usage("give --listen HOST:PORT, --peer HOST:PORT, or both", usage)
        }
        let log = try ctx.openLog()   // a clear error for a missing or foreign database, before starting
        let replica = log.replica
        log.close()
        let credentials = try CredentialFiles.credentials(db: ctx.dbPath, replica: replica, certPath: certFile, authorityPath: authorityFile)
        let scope = credentials.scope
        if ctx.userGiven {
            _ = try ctx.userStream()
            guard scope == .user(ctx.user) else { throw .failure("--cert \(certFile): scope \(scope), not user:\(ctx.user) as --user says") }
        }
        var config = NodeConfig(dbPath: ctx.dbPath, listen: a.options["listen"], credentials: credentials)
        config.peers = peers
        config.durability = ctx.durability
        config.wallClock = ctx.logOptions().wallClock
        config.handleSignals = true
        config.log = { line in
            fputs("[\(ISOTime.format(millis: Int64(SystemClock.nowMillis())))] \(line)\n", stderr)
        }
        let handle: NodeHandle
        do { handle = try NodeHandle.start(config) } catch { throw .failure(error.description) }
        if let address = handle.listenAddress { ctx.console.out("listening on \(address)") }
        ctx.console.out("node running: db \(ctx.dbPath), scope \(scope), peers \(peers.isEmpty ? "(none)" : peers.joined(separator: ", "))")
        handle.wait()
        ctx.console.out("node stopped")
    }
}
