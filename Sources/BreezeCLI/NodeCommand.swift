import BreezeCore
import BreezeNet
import BreezeStore
import BreezeSync
@preconcurrency import Glibc

/// `breeze node`: runs a replica until SIGINT or SIGTERM.
enum NodeCommand {
    static let usage = """
        usage: breeze node --db PATH --listen HOST:PORT [--peer HOST:PORT]... --secret-file FILE [--user ID]
          --listen      address to accept peers on (port 0: any free port; the address is printed)
          --peer        a peer to dial and keep dialling (repeatable)
          --secret-file the cluster secret, or with --user that user's key (`breeze secret derive`)
          --user        sync only this user's streams (and read public) with the user's key
        """

    static func run(_ args: [String], _ ctx: Context) throws(CLIError) {
        let a = try Arguments(args, valued: ["listen", "secret-file"], multi: ["peer"], usage: usage)
        _ = try a.expect([])
        guard let secretFile = a.options["secret-file"] else { throw .usage("--secret-file FILE is required", usage) }
        let peers = a.repeated["peer"] ?? []
        guard a.options["listen"] != nil || !peers.isEmpty else {
            throw .usage("give --listen HOST:PORT, --peer HOST:PORT, or both", usage)
        }
        let secret = try SecretCommand.readSecret(secretFile)
        var scope = Scope.cluster
        if ctx.userGiven {
            _ = try ctx.userStream()
            scope = .user(ctx.user)
        }
        try ctx.openLog().close()   // a clear error for a missing or foreign database, before starting
        var config = NodeConfig(dbPath: ctx.dbPath, listen: a.options["listen"], scope: scope, secret: secret)
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
