import Breeze
import Glibc

/// `breeze init`: creates the database and this replica's identity; on an existing Breeze database it
/// says so and changes nothing.
enum InitCommand {
    static let usage = "usage: breeze init [--db PATH] [--durability full|normal] [--json]"

    static func run(_ args: [String], _ ctx: Context) throws(CLIError) {
        _ = try Arguments(args, usage: usage).expect([])
        let existed = access(ctx.dbPath, F_OK) == 0
        if !existed { try makeParentDirectories(of: ctx.dbPath) }
        let replica: Replica
        do { replica = try Replica(path: ctx.dbPath, options: ctx.replicaOptions(create: true)) } catch { throw .failure(error.description) }
        defer { replica.close() }
        if ctx.json {
            ctx.console.out(JSONValue.object([("db", .string(ctx.dbPath)), ("replica", .string(replica.id.description)),
                                              ("epoch", .int(Int64(replica.epoch))), ("created", .bool(!existed))]).text)
        } else if existed {
            ctx.console.out("\(ctx.dbPath): already a Breeze database (replica \(replica.id)); nothing changed")
        } else {
            ctx.console.out("created \(ctx.dbPath) (replica \(replica.id))")
        }
    }

    /// `mkdir -p` of the directory part of `path`.
    static func makeParentDirectories(of path: String) throws(CLIError) {
        guard let slash = path.lastIndex(of: "/") else { return }
        let dir = String(path[..<slash])
        var prefix = dir.hasPrefix("/") ? "" : "."
        for component in dir.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o755) != 0 && errno != EEXIST {
                throw .failure("\(path): cannot create directory \(prefix) (\(String(cString: strerror(errno))))")
            }
        }
    }
}
