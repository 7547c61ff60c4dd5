import Breeze
import Glibc

/// `breeze init`: creates the database and this replica's identity (its replica id, and its device key beside
/// the database, `DB.key`, mode 0600); on an existing Breeze database it says so and changes nothing, except
/// that a database made before device keys existed gets its key.
enum InitCommand {
    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
    }

    static let usage = "usage: breeze init [--db PATH] [--durability full|normal] [--json]"

    static func run(_ args: [String], _ ctx: Context) throws(CLIError) {
        _ = try Arguments(args, usage: usage).expect([])
        let existed = access(ctx.dbPath, F_OK) == 0
        if !existed { try makeParentDirectories(of: ctx.dbPath) }
        let replica: Replica
        do { replica = try Replica(path: ctx.dbPath, options: ctx.replicaOptions(create: true)) } catch { throw .failure(error.description) }
        defer { replica.close() }
        let keyFile = replica.deviceKeyPath
        let key: [UInt8]
        do { key = try replica.devicePublicKey() } catch { throw .failure(error.description) }
        if ctx.json {
            ctx.console.out(JSONValue.object([("db", .string(ctx.dbPath)), ("replica", .string(replica.id.description)),
                                              ("epoch", .int(Int64(replica.epoch))), ("created", .bool(!existed)),
                                              ("deviceKey", .string(hex(key))), ("keyCreated", .bool(replica.deviceKeyCreated))]).text)
        } else if existed {
            ctx.console.out("\(ctx.dbPath): already a Breeze database (replica \(replica.id)); "
                            + (replica.deviceKeyCreated ? "device key created: \(keyFile)" : "nothing changed"))
        } else {
            ctx.console.out("created \(ctx.dbPath) (replica \(replica.id)); device key \(keyFile)")
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
