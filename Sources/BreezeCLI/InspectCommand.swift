import Breeze
import BreezeInspect
import BreezeStore
@preconcurrency import Glibc

/// `breeze inspect`: a local web page over a database, opened read-only: every screen drawn from its read
/// model, the log as a timeline with a scrubber that replays every screen to any point, `explain` of a
/// setting, two databases side by side (`--compare`), and live updates as the database changes. Runs until
/// SIGINT or SIGTERM. The server and the page are `BreezeInspect`; what they show is `Inspector`.
enum InspectCommand {
    static let usage = """
        usage: breeze inspect [--db PATH] [--listen HOST:PORT] [--compare OTHER.db] [--user ID] [--allow-remote]
          --listen HOST:PORT   where to serve (default 127.0.0.1:0, any free port on loopback)
          --compare OTHER.db   a second database beside the first, with `breeze diff`'s differences marked
          --user ID            whose settings the screens use (default: the user found in the data)
          --allow-remote       allow a --listen address other than loopback (the page is plain HTTP)

        Prints the page's address with a random token (http://127.0.0.1:PORT/?token=...); requests without the
        token are refused (403), so other users of this machine cannot read the data. The databases are opened
        read-only: a running node is not disturbed, and a copy from a bug report stays as it is. The page
        updates within a second when a database gains events (a peer, another process).
        """

    static func run(_ args: [String], _ ctx: Context) throws(CLIError) {
        let a = try Arguments(args, valued: ["listen", "compare"], flags: ["allow-remote"], usage: usage)
        _ = try a.expect([])
        let listen = a.options["listen"] ?? "127.0.0.1:0"
        if !HTTPServer.isLoopback(listen) && a.options["allow-remote"] == nil {
            throw .failure("--listen \(listen): not a loopback address; the page would be readable over the network in plain HTTP (add --allow-remote to mean it)")
        }
        if ctx.userGiven { _ = try ctx.userStream() }
        func open(_ path: String) throws(CLIError) -> Inspector.Side {
            do { return Inspector.Side(path: path, log: try EventLog.openReadOnly(at: path)) } catch { throw .failure(error.description) }
        }
        let main = try open(ctx.dbPath)
        let other: Inspector.Side
        do { other = try a.options["compare"].map { p throws(CLIError) in try open(p) } ?? main } catch {
            main.log.close()
            throw error
        }
        let inspector = Inspector(main, other === main ? nil : other, ctx: ctx)
        defer { inspector.close() }

        // SIGINT and SIGTERM are blocked before any thread starts (the server's, the observers'), so every
        // thread inherits the mask and only `sigwait` below takes them.
        var signals = sigset_t(), previous = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGINT)
        sigaddset(&signals, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &signals, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }

        let token = AccessToken.random()
        let server: HTTPServer
        do {
            server = try HTTPServer(listen: listen, token: token, streams: [inspector.events]) { inspector.handle($0) }
        } catch { throw .failure("--listen \(error.description)") }
        defer { server.stop() }
        // Live: each database's event count observed read-only (inotify on its write-ahead log); every change
        // is a `log` event to the page, which fetches what it shows again.
        var observers: [ReadOnlyObserver] = []
        var tokens: [ObservationToken] = []
        for (name, side) in [("a", main), ("b", inspector.b)].compactMap({ n, s in s.map { (n, $0) } }) {
            let observer = ReadOnlyObserver(path: side.path)
            let events = inspector.events
            tokens.append(observer.observe { try $0.eventCount() }.start(onChange: { n in
                events.publish(event: "log", data: "{\"db\":\"\(name)\",\"events\":\(n)}")
            }, onError: { e in
                events.publish(event: "failure", data: JSONValue.object([("db", .string(name)), ("error", .string(e.description))]).text)
            }))
            observers.append(observer)
        }
        defer {
            for t in tokens { t.cancel() }
            for o in observers { o.close() }
        }
        ctx.console.out("inspecting \(ctx.dbPath)\(inspector.b.map { " beside \($0.path)" } ?? "") (read-only); Ctrl-C to stop")
        ctx.console.out("open http://\(server.address)/?token=\(token)")
        var received: Int32 = 0
        sigwait(&signals, &received)
        ctx.console.out("inspect stopped")
    }
}
