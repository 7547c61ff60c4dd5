import Breeze
import BreezeCore
import BreezeCrypto
import BreezeSync
import Glibc

/// `breeze secret new` and `breeze secret derive`: secrets live in files, as hex, never on the command line.
enum SecretCommand {
    static let usage = """
        usage: breeze secret new                                  print a new cluster secret (64 hex digits)
               breeze secret derive --user ID --secret-file FILE  print the key of one user, for their devices
        """

    static func run(_ args: [String], _ ctx: Context) throws(CLIError) {
        let a = try Arguments(args, valued: ["secret-file"], usage: usage)
        guard let verb = a.positionals.first else { throw .usage("missing new or derive", usage) }
        switch verb {
        case "new":
            _ = try a.expect(["new"])
            ctx.console.out(Digest.hex(SecureRandom.bytes(32)))
        case "derive":
            _ = try a.expect(["derive"])
            guard ctx.userGiven else { throw .usage("derive needs --user ID", usage) }
            guard let file = a.options["secret-file"] else { throw .usage("derive needs --secret-file FILE", usage) }
            _ = try ctx.userStream()
            let secret = try readSecret(file)
            ctx.console.out(Digest.hex(Scope.userKey(clusterSecret: secret, user: ctx.user)))
        default:
            throw .usage("expected new or derive, not '\(verb)'", usage)
        }
    }

    /// Reads a secret file (`SyncOptions.readSecret`), with the option's name in the message.
    static func readSecret(_ path: String) throws(CLIError) -> [UInt8] {
        do { return try SyncOptions.readSecret(file: path) } catch {
            let d = error.description
            throw .failure(d.hasPrefix("secret file ") ? "--secret-file " + d.dropFirst("secret file ".count) : d)
        }
    }
}
