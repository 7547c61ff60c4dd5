import BreezeCore
import BreezeCrypto
import BreezeStore
import Glibc

/// `breeze init`: creates the database and this replica's identity (its replica id, and its device key beside
/// the database, `DB.key`, mode 0600); on an existing Breeze database it says so and changes nothing, except
/// that a database made before device keys existed gets its key.
enum InitCommand {
    static let usage = "usage: breeze init [--db PATH] [--durability full|normal] [--json]"

    static func run(_ args: [String], _ ctx: Context) throws(CLIError) {
        _ = try Arguments(args, usage: usage).expect([])
        let existed = access(ctx.dbPath, F_OK) == 0
        if !existed { try makeParentDirectories(of: ctx.dbPath) }
        let log: EventLog
        do { log = try EventLog.create(at: ctx.dbPath, options: ctx.logOptions()) } catch { throw .failure(error.description) }
        defer { log.close() }
        let keyFile = KeyFile.devicePath(forDatabase: ctx.dbPath)
        let keyExisted = access(keyFile, F_OK) == 0
        let key: Ed25519.KeyPair
        do { key = try KeyFile.deviceKey(forDatabase: ctx.dbPath, replica: log.replica, create: true) } catch { throw .failure(error.description) }
        if ctx.json {
            ctx.console.out(JSONValue.object([("db", .string(ctx.dbPath)), ("replica", .string(log.replica.description)),
                                              ("epoch", .int(Int64(log.epoch))), ("created", .bool(!existed)),
                                              ("deviceKey", .string(Digest.hex(key.publicKey))), ("keyCreated", .bool(!keyExisted))]).text)
        } else if existed {
            ctx.console.out("\(ctx.dbPath): already a Breeze database (replica \(log.replica)); "
                            + (keyExisted ? "nothing changed" : "device key created: \(keyFile)"))
        } else {
            ctx.console.out("created \(ctx.dbPath) (replica \(log.replica)); device key \(keyFile)")
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
