import BreezeCore
import BreezeCrypto
import BreezeStore
import BreezeSync
import Breeze

/// `breeze authority new --out FILE`: a new authority key pair. The private key goes to FILE (mode 0600), the
/// public key to FILE.pub. The cluster authority's public key is what every replica trusts
/// (`breeze node --authority FILE.pub`); a user authority's is certified by the cluster authority
/// (`breeze enrol --user-authority`) and then enrols that user's devices.
enum AuthorityCommand {
    static let usage = """
        usage: breeze authority new --out FILE
          writes the private key to FILE (mode 0600; keep it offline) and the public key to FILE.pub
               breeze [--db DB] authority revoke --signer KEY [--signer-chain CERT] (--cert CERT | --device-key HEX --replica ID)
                      [--reason TEXT]
          records in DB that the device of CERT (or that key) is revoked, signed by the cluster authority (or by
          a user authority with its --signer-chain, for that user's devices); every node that has it closes the
          device's sessions and refuses it, while every other device keeps syncing
               breeze [--db DB] authority retention --signer KEY [--days N|none]
          records in DB the cluster's retention policy, signed by the cluster authority KEY: every server keeps
          raw readings N days (default 30; none: for good), then each sensor's hours as rollups for good
        """

    static func run(_ args: [String], _ ctx: Context) throws(CLIError) {
        if args.first == "revoke" { return try revoke(Array(args.dropFirst()), ctx) }
        if args.first == "retention" { return try retention(Array(args.dropFirst()), ctx) }
        let a = try Arguments(args, valued: ["out"], usage: usage)
        guard a.positionals.first == "new" else { throw .usage(a.positionals.isEmpty ? "missing new, revoke or retention" : "expected new, revoke or retention, not '\(a.positionals[0])'", usage) }
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

    /// `breeze authority revoke`: signs a revocation and records it in the database's log.
    static func revoke(_ args: [String], _ ctx: Context) throws(CLIError) {
        let a = try Arguments(args, valued: ["signer", "signer-chain", "cert", "device-key", "replica", "reason"], usage: usage)
        _ = try a.expect([])
        guard let signerPath = a.options["signer"] else { throw .usage("--signer KEY is required (the authority that revokes)", usage) }
        let signer: Ed25519.KeyPair
        do { signer = try KeyFile.read(signerPath).key } catch { throw .failure("--signer \(error.description)") }
        var chain: [[UInt8]] = []
        if let p = a.options["signer-chain"] {
            let certs = try CredentialFiles.readChain(p, option: "--signer-chain")
            guard certs.count == 1, certs[0].role == .userAuthority, certs[0].key == signer.publicKey else {
                throw .failure("--signer-chain \(p): expected the one certificate of the --signer user authority")
            }
            chain = [certs[0].encoded]
        }
        let key: [UInt8], replica: ReplicaID
        if let certPath = a.options["cert"] {
            guard a.options["device-key"] == nil, a.options["replica"] == nil else { throw .usage("give either --cert or --device-key and --replica", usage) }
            let certs = try CredentialFiles.readChain(certPath, option: "--cert")
            key = certs[0].key
            replica = certs[0].replica
        } else {
            guard let hex = a.options["device-key"], let r = a.options["replica"] else {
                throw .usage("give --cert CERT, or --device-key HEX and --replica ID", usage)
            }
            key = try CredentialFiles.publicKey(hexText: hex, what: "--device-key")
            guard let id = ReplicaID(hex: r) else { throw .failure("--replica '\(r)': expected 16 hex digits") }
            replica = id
        }
        let reason = a.options["reason"] ?? ""
        guard reason.utf8.count <= Revocation.maxReasonBytes else { throw .failure("--reason: at most \(Revocation.maxReasonBytes) bytes") }
        let revocation = Revocation.sign(key: key, replica: replica, revokedAtMillis: SystemClock.nowMillis(), reason: reason,
                                         signer: signer, signerChain: chain)
        let event = try ctx.withReplica { r in try r.revoke(revocation) }
        let fp = CertificateChain.fingerprint(key)
        if ctx.json {
            ctx.console.out(JSONValue.object([("revoked", .string(Digest.hex(key))), ("replica", .string(replica.description)),
                                              ("event", .string(event.id.description)), ("reason", .string(reason))]).text)
        } else {
            ctx.console.out("revoked key \(fp)… of replica \(replica) (event \(event.id)); nodes enforce it as soon as they have it")
        }
    }

    /// `breeze authority retention`: signs the cluster's retention policy and records it in `public`, from where
    /// it reaches every server (`RetentionPolicy`, `Protocol/sync.md` 6.11).
    static func retention(_ args: [String], _ ctx: Context) throws(CLIError) {
        let a = try Arguments(args, valued: ["signer", "days"], usage: usage)
        _ = try a.expect([])
        guard let signerPath = a.options["signer"] else { throw .usage("--signer KEY is required (the cluster authority)", usage) }
        let signer: Ed25519.KeyPair
        do { signer = try KeyFile.read(signerPath).key } catch { throw .failure("--signer \(error.description)") }
        var days = RetentionPolicy.defaultRawDays
        if let d = a.options["days"] {
            if d == "none" { days = 0 } else {
                guard let n = UInt32(d), (1...RetentionPolicy.maxRawDays).contains(n) else {
                    throw .usage("--days '\(d)': expected a number of days from 1 to \(RetentionPolicy.maxRawDays), or none", usage)
                }
                days = n
            }
        }
        let policy = RetentionPolicy.sign(rawDays: days, issuedAtMillis: SystemClock.nowMillis(), authority: signer)
        let event = try ctx.withLog { log in try log.append(.retentionPolicy(policy), to: .public) }
        if ctx.json {
            ctx.console.out(JSONValue.object([("rawDays", .int(Int64(days))), ("event", .string(event.id.description))]).text)
        } else {
            ctx.console.out(days == 0 ? "retention policy: raw readings kept for good (event \(event.id))"
                                      : "retention policy: raw readings kept \(days) days, then each sensor's hours as rollups (event \(event.id)); servers that trust this authority follow it as soon as they have it")
        }
    }
}
