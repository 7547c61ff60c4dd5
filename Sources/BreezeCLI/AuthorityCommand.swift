import BreezeCore
import BreezeCrypto
import BreezeStore

/// `breeze authority new --out FILE`: a new authority key pair. The private key goes to FILE (mode 0600), the
/// public key to FILE.pub. The cluster authority's public key is what every replica trusts
/// (`breeze node --authority FILE.pub`); a user authority's is certified by the cluster authority
/// (`breeze enrol --user-authority`) and then enrols that user's devices.
enum AuthorityCommand {
    static let usage = """
        usage: breeze authority new --out FILE
          writes the private key to FILE (mode 0600; keep it offline) and the public key to FILE.pub
        """

    static func run(_ args: [String], _ ctx: Context) throws(CLIError) {
        let a = try Arguments(args, valued: ["out"], usage: usage)
        guard a.positionals.first == "new" else { throw .usage(a.positionals.isEmpty ? "missing new" : "expected new, not '\(a.positionals[0])'", usage) }
        _ = try a.expect(["new"])
        guard let out = a.options["out"], !out.isEmpty else { throw .usage("--out FILE is required", usage) }
        let key = Ed25519.KeyPair.generate()
        let created: Bool
        do { created = try KeyFile.create(out, KeyFile.Contents(replica: nil, key: key), comment: "Breeze authority key") } catch {
            throw .failure("--out \(error.description)")
        }
        guard created else { throw .failure("--out \(out): exists; not overwritten") }
        try CredentialFiles.writeNew(out + ".pub", CredentialFiles.authorityText(key.publicKey), option: "--out")
        let hex = Digest.hex(key.publicKey)
        if ctx.json {
            ctx.console.out(JSONValue.object([("key", .string(out)), ("publicKeyFile", .string(out + ".pub")), ("publicKey", .string(hex))]).text)
        } else {
            ctx.console.out("authority key \(out) (private, mode 0600); public key \(out).pub: \(hex)")
        }
    }
}
