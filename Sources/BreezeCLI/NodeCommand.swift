import Breeze
import BreezeStore
@preconcurrency import Glibc

/// `breeze node`: runs a replica's sync node (`Replica.startSync`) until SIGINT or SIGTERM.
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
        var options = SyncOptions(secret: secret, user: ctx.userGiven ? ctx.user : nil, listen: a.options["listen"], peers: peers)
        options.stopOnSignals = true
        options.log = { line in
            fputs("[\(ISOTime.format(millis: Int64(SystemClock.nowMillis())))] \(line)\n", stderr)
        }
        try ctx.withReplica { replica in
            let status = try replica.startSync(options)
            if let address = status.listenAddress { ctx.console.out("listening on \(address)") }
            ctx.console.out("node running: db \(ctx.dbPath), scope \(options.user.map { "user:\($0)" } ?? "cluster"), peers \(peers.isEmpty ? "(none)" : peers.joined(separator: ", "))")
            replica.waitForSync()
        }
        ctx.console.out("node stopped")
    }
}
