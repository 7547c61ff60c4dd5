import BreezeCore
import BreezeStore

/// The `breeze` command-line tool as a library: `run` parses arguments, runs one command and returns the
/// exit status (0 success, 1 failure, 2 usage error). It never traps on bad input.
public enum BreezeCLI {
    /// The top-level usage text.
    public static let usage = """
        usage: breeze <command> [options]

        commands:
          init                                  create the database (and this replica's identity)
          favourite add|remove SENSOR           add or remove a favourite sensor
          watch add|remove SENSOR               add or remove a watched sensor (alerts)
          alert set [--category C] [--on-clear notify|silent] [--enabled true|false]
                                                C: good|moderate|usg|unhealthy|very-unhealthy|hazardous
          alert test [--sensor ID]              request a test alert
          alert delivered KEY                   this device notified alert KEY (others then do not)
          unit set celsius|fahrenheit           temperature unit
          source list                           data sources, enabled or not, and corrections
          source enable|disable SOURCE          turn a data source on or off
          source correct SOURCE CORRECTION      choose the correction applied to a source
          biomarker target TYPE --max N         a daily target (readings a day) for the biomarker gauge
          biomarker log TYPE VALUE UNIT         a reading taken by hand (--time ISO8601, default now)
          state                                 the user's settings as merged from the log
          log [--stream S] [--type T] [--origin R] [--since X] [--until X] [--limit N] [--follow]
                                                the events, oldest first (X: SEQ, HLC or ISO8601); --follow waits for more
          verify                                check a database's integrity (hashes, gaps, conflicts, projection)
          export [--stream S] [--since X] [--until X] [--out FILE]
                                                the events as JSON Lines, byte for byte (`import jsonl FILE` reads them)
          import FORMAT FILE... [--sensor ID] [--at LAT,LON] [--unit U] [--station ID]
                                                import real data (run `breeze import --help` for formats)
          screen NAME [--user ID] [--at LAT,LON] [--sensor ID] [--now ISO8601] ...
                                                a screen's read model (run `breeze screen --help`)
          replay --until X | --step [--from X] [--until X]  --screen NAME [screen options]
                                                a screen as it was at a point of the log; --step: what each event changed
          explain favourite S|watch S|unit|alert [F]|source SRC [F]|target TYPE
                                                which events decided a setting, which won and why
          diff A.db B.db [--stream S]           two databases compared: vectors, missing events, determinism
          inspect [--listen HOST:PORT] [--compare OTHER.db]
                                                a local web page: every screen drawn, the log as a timeline, replay, explain
          node --listen HOST:PORT [--peer HOST:PORT]... --cert FILE --authority FILE [--metrics HOST:PORT]
                                                run a replica that syncs with its peers (sealed) until SIGINT/SIGTERM
          status                                the node's peers: connected, last contact, how far behind
          key show                              this replica's id and device public key, to enrol it
          authority new --out FILE              a new authority key pair (FILE private, FILE.pub public)
          enrol --signer KEY --scope S --out CERT (--device-key HEX --replica ID | --user-authority HEX)
                                                certify a replica's key (or a user authority's) for sync
          salvage --out NEW.db                  copy the intact events of a damaged --db into a new database

        options (any command):
          --db PATH            database file (default: $BREEZE_DB, else ~/.local/share/breeze/breeze.db)
          --user ID            user whose settings to read or change (default: $BREEZE_USER, else 'me')
          --json               machine-readable output
          --durability full|normal   commit durability (default full; see README)
          --help               help for a command

        testing aid: BREEZE_CLOCK_OFFSET_MS=N shifts the clock events are stamped with by N ms (N < 0: behind)
        """

    /// Runs the tool with `arguments` (without the program name).
    public static func run(_ arguments: [String], environment: [String: String], console: Console) -> Int32 {
        run(arguments, environment: environment, console: console, commands: commands, usage: usage, tool: "breeze")
    }

    /// Runs one of `commands` with `arguments`, after the global options every Breeze tool shares (`--db`,
    /// `--user`, `--json`, `--durability`, `--help`): how `breeze` and `breeze-bench` parse.
    public static func run(_ arguments: [String], environment: [String: String], console: Console, commands: [Command],
                           usage: String, tool: String) -> Int32 {
        var rest: [String] = []
        var db: String?, user: String?, json = false, help = false, durability: String?
        var i = 0
        func value(_ name: String) -> String? {
            guard i + 1 < arguments.count else { return nil }
            i += 1
            return arguments[i]
        }
        while i < arguments.count {
            let a = arguments[i]
            switch a {
            case "--db": guard let v = value(a) else { return usageError("option --db needs a value", usage, console, tool: tool) }; db = v
            case "--user": guard let v = value(a) else { return usageError("option --user needs a value", usage, console, tool: tool) }; user = v
            case "--durability": guard let v = value(a) else { return usageError("option --durability needs a value", usage, console, tool: tool) }; durability = v
            case "--json": json = true
            case "--help", "-h", "help": help = true
            default:
                if a.hasPrefix("--db=") { db = String(a.dropFirst(5)) }
                else if a.hasPrefix("--user=") { user = String(a.dropFirst(7)) }
                else if a.hasPrefix("--durability=") { durability = String(a.dropFirst(13)) }
                else { rest.append(a) }
            }
            i += 1
        }
        guard let command = rest.first else {
            if help { console.out(usage); return 0 }
            return usageError("no command given", usage, console, tool: tool)
        }
        guard let cmd = commands.first(where: { $0.name == command }) else {
            return usageError("unknown command '\(command)'", usage, console, tool: tool)
        }
        if help { console.out(cmd.help); return 0 }
        let mode: EventLog.Durability
        switch durability {
        case nil: mode = .full
        case let d?:
            guard let m = EventLog.Durability(rawValue: d) else {
                return usageError("--durability must be full or normal, not '\(d)'", cmd.help, console, tool: tool)
            }
            mode = m
        }
        if db == "" { return usageError("--db: empty path", cmd.help, console, tool: tool) }
        var ctx = Context(
            dbPath: db ?? environment["BREEZE_DB"].flatMap { $0.isEmpty ? nil : $0 }
                ?? Context.defaultDatabasePath(environment: environment),
            user: user ?? environment["BREEZE_USER"].flatMap { $0.isEmpty ? nil : $0 } ?? "me",
            json: json, durability: mode, console: console)
        ctx.userGiven = user != nil || !(environment["BREEZE_USER"] ?? "").isEmpty
        ctx.environment = environment
        if let offset = environment["BREEZE_CLOCK_OFFSET_MS"], !offset.isEmpty {
            guard let v = SystemClock.parseOffset(offset) else {
                console.err("breeze: BREEZE_CLOCK_OFFSET_MS '\(offset)': expected whole milliseconds (e.g. -21600000), within 10 years")
                return 1
            }
            ctx.clockOffsetMillis = v
        }
        do {
            try cmd.run(Array(rest.dropFirst()), ctx)
            return 0
        } catch {
            console.err("\(tool) \(command): \(error.message)")
            if let u = error.usage { console.err(u) }
            return error.exitCode
        }
    }

    private static func usageError(_ message: String, _ usage: String, _ console: Console, tool: String = "breeze") -> Int32 {
        console.err("\(tool): \(message)")
        console.err(usage)
        return 2
    }

    /// One command: its name, its help text and what runs it.
    public struct Command: Sendable {
        let name: String
        let help: String
        let run: @Sendable ([String], Context) throws(CLIError) -> Void

        /// A command named `name`.
        public init(name: String, help: String, run: @escaping @Sendable ([String], Context) throws(CLIError) -> Void) {
            self.name = name
            self.help = help
            self.run = run
        }
    }

    static let commands: [Command] = [
        Command(name: "init", help: InitCommand.usage, run: InitCommand.run),
        Command(name: "favourite", help: SetCommand.favouriteUsage) { a, c throws(CLIError) in
            try SetCommand.run(a, c, kind: .favourite) },
        Command(name: "watch", help: SetCommand.watchUsage) { a, c throws(CLIError) in
            try SetCommand.run(a, c, kind: .watch) },
        Command(name: "alert", help: SettingsCommands.alertUsage, run: SettingsCommands.alert),
        Command(name: "unit", help: SettingsCommands.unitUsage, run: SettingsCommands.unit),
        Command(name: "source", help: SettingsCommands.sourceUsage, run: SettingsCommands.source),
        Command(name: "biomarker", help: BiomarkerCommand.usage, run: BiomarkerCommand.run),
        Command(name: "state", help: StateCommand.usage, run: StateCommand.run),
        Command(name: "log", help: LogCommand.usage, run: LogCommand.run),
        Command(name: "verify", help: VerifyCommand.usage, run: VerifyCommand.run),
        Command(name: "export", help: ExportCommand.usage, run: ExportCommand.run),
        Command(name: "import", help: ImportCommand.usage, run: ImportCommand.run),
        Command(name: "screen", help: ScreenCommand.usage, run: ScreenCommand.run),
        Command(name: "replay", help: ReplayCommand.usage, run: ReplayCommand.run),
        Command(name: "explain", help: ExplainCommand.usage, run: ExplainCommand.run),
        Command(name: "diff", help: DiffCommand.usage, run: DiffCommand.run),
        Command(name: "inspect", help: InspectCommand.usage, run: InspectCommand.run),
        Command(name: "node", help: NodeCommand.usage, run: NodeCommand.run),
        Command(name: "status", help: StatusCommand.usage, run: StatusCommand.run),
        Command(name: "interest", help: InterestCommand.usage, run: InterestCommand.run),
        Command(name: "horizon", help: HorizonCommand.usage, run: HorizonCommand.run),
        Command(name: "compact", help: CompactCommand.usage, run: CompactCommand.run),
        Command(name: "rollup", help: RollupCommand.usage, run: RollupCommand.run),
        Command(name: "key", help: KeyCommand.usage, run: KeyCommand.run),
        Command(name: "authority", help: AuthorityCommand.usage, run: AuthorityCommand.run),
        Command(name: "enrol", help: EnrolCommand.usage, run: EnrolCommand.run),
        Command(name: "salvage", help: SalvageCommand.usage, run: SalvageCommand.run),
        Command(name: "backup", help: BackupCommand.usage, run: BackupCommand.backup),
        Command(name: "feed", help: FeedCommand.usage, run: FeedCommand.run),
        Command(name: "restore", help: BackupCommand.restoreUsage, run: BackupCommand.restore),
    ]
}
