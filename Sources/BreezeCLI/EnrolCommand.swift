import BreezeCore
import BreezeCrypto
import BreezeStore
import BreezeSync

/// `breeze enrol`: an authority certifies a replica's device key (with its replica id and scope) or, the
/// cluster authority only, a user authority's key. Writes the certificate chain the replica then gives to
/// `breeze node --cert`: the new certificate, then the signer's own chain when the signer is a user authority.
enum EnrolCommand {
    static let usage = """
        usage: breeze enrol --signer KEY [--signer-chain CERT] --scope cluster|user:ID --out CERT [--days N]
                            (--device-key HEX --replica ID | --user-authority HEX)
          --signer          the signing authority's private key (`breeze authority new`)
          --signer-chain    the signer's own certificate when it is a user authority (the cluster authority has none)
          --device-key      the replica's public key, and --replica its id (`breeze key show` on that replica)
          --user-authority  the public key of a user authority to certify (cluster authority only; scope user:ID)
          --scope           cluster (servers) or user:ID (one user's devices and authority)
          --days            valid for N days from now (default 365; it starts a day early, for clocks that lag)
        """

    static let dayMillis: UInt64 = 86_400_000

    static func run(_ args: [String], _ ctx: Context) throws(CLIError) {
        let a = try Arguments(args, valued: ["signer", "signer-chain", "scope", "out", "days", "device-key", "replica", "user-authority"],
                              usage: usage)
        _ = try a.expect([])
        guard let signerPath = a.options["signer"] else { throw .usage("--signer KEY is required", usage) }
        guard let out = a.options["out"], !out.isEmpty else { throw .usage("--out CERT is required", usage) }
        guard let scopeText = a.options["scope"] else { throw .usage("--scope cluster|user:ID is required", usage) }
        guard let scope = Scope(scopeText) else { throw .usage("--scope '\(scopeText)': expected cluster or user:ID", usage) }
        let days = try Arguments.positive(a.options["days"], "--days", default: 365)
        guard days <= 36_500 else { throw .failure("--days \(days): at most 36500") }
        let device = a.options["device-key"], user = a.options["user-authority"]
        guard (device == nil) != (user == nil) else { throw .usage("give either --device-key HEX --replica ID or --user-authority HEX", usage) }

        let signer: Ed25519.KeyPair
        do { signer = try KeyFile.read(signerPath).key } catch { throw .failure("--signer \(error.description)") }
        var signerChain: [Certificate] = []
        if let p = a.options["signer-chain"] {
            signerChain = try CredentialFiles.readChain(p, option: "--signer-chain")
            guard signerChain.count == 1, signerChain[0].role == .userAuthority else {
                throw .failure("--signer-chain \(p): expected the one certificate of a user authority")
            }
            guard signerChain[0].key == signer.publicKey else {
                throw .failure("--signer-chain \(p): certifies key \(CertificateChain.fingerprint(signerChain[0].key)), not the --signer key \(CertificateChain.fingerprint(signer.publicKey))")
            }
            guard signerChain[0].scope == scope else {
                throw .failure("--scope \(scope): the signer is the \(signerChain[0].subject) and can enrol nothing else")
            }
        }

        let role: Certificate.Role, key: [UInt8], replica: ReplicaID
        if let device {
            guard let r = a.options["replica"] else { throw .usage("--device-key needs --replica ID (both from `breeze key show`)", usage) }
            guard let id = ReplicaID(hex: r), id.rawValue != 0 else { throw .failure("--replica '\(r)': expected 16 hex digits (not all zero)") }
            role = .device
            key = try CredentialFiles.publicKey(hexText: device, what: "--device-key")
            replica = id
        } else {
            guard case .user = scope else { throw .failure("--scope \(scope): a user authority's scope is user:ID") }
            guard signerChain.isEmpty else { throw .failure("--signer-chain: a user authority is certified by the cluster authority itself") }
            guard a.options["replica"] == nil else { throw .usage("--replica goes with --device-key", usage) }
            role = .userAuthority
            key = try CredentialFiles.publicKey(hexText: user!, what: "--user-authority")
            replica = ReplicaID(rawValue: 0)
        }
        let now = SystemClock.nowMillis()
        let certificate: Certificate
        do {
            certificate = try Certificate.issue(role: role, key: key, replica: replica, scope: scope, notBefore: now - min(now, dayMillis),
                                                notAfter: now + UInt64(days) * dayMillis, signer: signer)
        } catch { throw .failure("\(error)") }
        let chain = [certificate] + signerChain
        try CredentialFiles.writeNew(out, CertificateChain.text(chain), option: "--out")
        let until = ISOTime.format(millis: Int64(certificate.notAfter))
        if ctx.json {
            ctx.console.out(JSONValue.object([("certificate", .string(out)), ("subject", .string(certificate.subject)),
                                              ("scope", .string(scope.description)), ("notAfter", .string(until)),
                                              ("chain", .int(Int64(chain.count)))]).text)
        } else {
            ctx.console.out("certified \(certificate.subject) until \(until): \(out)")
        }
    }
}
