import BreezeCore
import BreezeCrypto
import BreezeStore

/// `breeze key show`: this replica's id and the public half of its device key, which an authority certifies
/// with `breeze enrol`. The key is made (beside the database, `DB.key`, mode 0600) if the database has none yet.
enum KeyCommand {
    static let usage = "usage: breeze key show [--db PATH] [--json]"

    static func run(_ args: [String], _ ctx: Context) throws(CLIError) {
        let a = try Arguments(args, usage: usage)
        guard a.positionals.first == "show" else { throw .usage(a.positionals.isEmpty ? "missing show" : "expected show, not '\(a.positionals[0])'", usage) }
        _ = try a.expect(["show"])
        let log = try ctx.openLog()
        let replica = log.replica
        log.close()
        let key: Ed25519.KeyPair
        do { key = try KeyFile.deviceKey(forDatabase: ctx.dbPath, replica: replica, create: true) } catch { throw .failure(error.description) }
        let hex = Digest.hex(key.publicKey), file = KeyFile.devicePath(forDatabase: ctx.dbPath)
        if ctx.json {
            ctx.console.out(JSONValue.object([("replica", .string(replica.description)), ("deviceKey", .string(hex)),
                                              ("keyFile", .string(file))]).text)
        } else {
            ctx.console.out("replica     \(replica)")
            ctx.console.out("device key  \(hex)  (Ed25519 public key; the private key is \(file))")
            ctx.console.out("enrol it:   breeze enrol --signer AUTHORITY.key --device-key \(hex) --replica \(replica) --scope cluster|user:ID --out CERT")
        }
    }
}
