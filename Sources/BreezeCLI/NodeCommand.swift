import Breeze
import BreezeNet
import BreezeStore
@preconcurrency import Glibc

/// `breeze node`: runs a replica's sync node (`Replica.startSync`) until SIGINT or SIGTERM.
enum NodeCommand {
    static let usage = """
        usage: breeze node --db PATH --listen HOST:PORT [--peer HOST:PORT]... [--server HOST:PORT]... --cert FILE --authority FILE
          --listen      address to accept peers on (port 0: any free port; the address is printed)
          --peer        a peer to dial and keep dialling (repeatable)
          --server      one of the cluster's servers (repeatable): the node holds a session with one of them at a
                        time, chosen by its replica id, and fails over to the next when it goes (a device)
          --cert        this replica's certificate chain (`breeze enrol`); its scope is what the node syncs
          --authority   the cluster authority's public key (the .pub file of `breeze authority new`)
          --metrics HOST:PORT   serve Prometheus metrics at http://HOST:PORT/metrics (peers, events per stream,
                        lag per peer, commit latency, refused connections); e.g. 127.0.0.1:9464; an address off
                        loopback needs --metrics-allow-remote (no token: anyone who reaches it reads them)
          --metrics-user-labels label users' streams one by one (default: summed as user:* and health:*)
          --feeds FILE  poll the providers' APIs of FILE into this node's database while it runs (the configuration
                        of `breeze feed`; each feed's counters join --metrics as breeze_feed_*)
          the device key is DB.key beside the database (mode 0600; `breeze init` or `breeze key show` makes it)
        """

    /// True for `127.x.x.x:PORT`, `localhost:PORT` and `[::1]:PORT`.
    static func isLoopback(_ address: String) -> Bool {
        let host = address.lastIndex(of: ":").map { String(address[..<$0]) } ?? address
        return host == "localhost" || host == "[::1]" || host.hasPrefix("127.")
    }

    static func run(_ args: [String], _ ctx: Context) throws(CLIError) {
        let a = try Arguments(args, valued: ["listen", "cert", "authority", "metrics", "feeds"], flags: ["metrics-allow-remote", "metrics-user-labels"],
                              multi: ["peer", "server"], usage: usage)
        _ = try a.expect([])
        guard let certFile = a.options["cert"] else { throw .usage("--cert FILE is required (`breeze enrol` makes it)", usage) }
        guard let authorityFile = a.options["authority"] else { throw .usage("--authority FILE is required (the cluster authority's public key)", usage) }
        let peers = a.repeated["peer"] ?? [], servers = a.repeated["server"] ?? []
        guard a.options["listen"] != nil || !peers.isEmpty || !servers.isEmpty else {
            throw .usage("give --listen HOST:PORT, --peer HOST:PORT or --server HOST:PORT (or several)", usage)
        }
        for address in peers + servers {
            do { try SyncOptions.checkAddress(address) } catch { throw .usage(error.description, usage) }
        }
        var options = SyncOptions(certificateChain: try CredentialFiles.readText(certFile, option: "--cert"),
                                  authority: try CredentialFiles.readText(authorityFile, option: "--authority"),
                                  listen: a.options["listen"], peers: peers)
        options.servers = servers
        if ctx.userGiven { options.user = try ctx.userStream().userID }
        options.stopOnSignals = true
        // A renewed certificate (`Protocol/sync.md` 4.11) replaces the --cert file, so the next start uses it.
        let certPath = certFile
        options.onCertificateRenewed = { text in
            do { try CredentialFiles.replace(certPath, text, option: "--cert") } catch {
                fputs("[\(ISOTime.format(millis: Int64(SystemClock.nowMillis())))] writing the renewed certificate to \(certPath) failed: \(error)\n", stderr)
            }
        }
        options.log = { line in
            fputs("[\(ISOTime.format(millis: Int64(SystemClock.nowMillis())))] \(line)\n", stderr)
        }
        if let m = a.options["metrics"], a.options["metrics-allow-remote"] == nil, !Self.isLoopback(m) {
            throw .usage("--metrics \(m): not a loopback address; the metrics have no token, so anyone who reaches them reads them: add --metrics-allow-remote to serve them there", usage)
        }
        let metrics = a.options["metrics"].map { _ in NodeMetrics() }
        options.metrics = metrics
        // A bad feed configuration (or key file) is refused before anything starts.
        let feedConfig = try a.options["feeds"].map { f throws(CLIError) in try FeedCommand.config(f, environment: ctx.environment) }
        try ctx.withReplica { replica in
            let feeds = feedConfig.map { FeedThreads($0, replica: replica, console: ctx.console) }
            // The metrics port is bound before the node starts, so a port in use fails before any sync.
            let server = try metrics.map { m throws(CLIError) in
                try NodeMetricsEndpoint.serve(m, feeds: feeds?.runners ?? [], listen: a.options["metrics"]!,
                                              userLabels: a.options["metrics-user-labels"] != nil)
            }
            defer { server?.stop() }
            let status = try replica.startSync(options)
            if let address = status.listenAddress { ctx.console.out("listening on \(address)") }
            if let server { ctx.console.out("metrics on http://\(server.address)/metrics") }
            ctx.console.out("node running: db \(ctx.dbPath), peers \(peers.isEmpty ? "(none)" : peers.joined(separator: ", "))"
                            + (servers.isEmpty ? "" : ", servers \(servers.joined(separator: ", ")) (one at a time)"))
            // The feeds write through the same replica, so the node sends what they store at once.
            let stop = Flag()
            feeds?.start(polls: nil) { stop.isSet }
            if let feeds { ctx.console.out("feeds polling: \(feeds.runners.map(\.feed.name).joined(separator: ", "))") }
            replica.waitForSync()
            stop.set()
            feeds?.wait()
            feeds?.printSummaries(ctx)
        }
        ctx.console.out("node stopped")
    }
}
