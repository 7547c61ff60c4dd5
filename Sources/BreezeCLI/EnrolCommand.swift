import BreezeCore
import BreezeCrypto
import BreezeStore
import BreezeSync
import Breeze
@preconcurrency import Glibc

/// `breeze enrol`: an authority certifies a replica's device key (with its replica id and scope) or, the
/// cluster authority only, a user authority's key. Writes the certificate chain the replica then gives to
/// `breeze node --cert`: the new certificate, then the signer's own chain when the signer is a user authority.
enum EnrolCommand {
    static let usage = """
        usage: breeze enrol --signer KEY [--signer-chain CERT] --scope cluster|user:ID --out CERT [--days N]
                            (--device-key HEX --replica ID | --user-authority HEX)
               breeze enrol --request FILE --signer KEY [--signer-chain CERT] --out CERT [--days N]
               breeze enrol --renew --db DB --signer KEY [--signer-chain CERT] [--days N] [--watch SECONDS]
          --renew           answer the devices' requests for a new certificate (device.renew in their user's stream,
                            synced to the replica DB): each gets a device.certificate for the same key and replica id,
                            which its node installs; --watch keeps looking every SECONDS
          --signer          the signing authority's private key (`breeze authority new`)
          --signer-chain    the signer's own certificate when it is a user authority (the cluster authority has none)
          --request         an app's enrolment request (the JSON of `Replica.enrolmentRequest()`): its proof is checked,
                            then its device key is certified for its replica id, scope user:<its user>
          --device-key      the replica's public key, and --replica its id (`breeze key show` on that replica)
          --user-authority  the public key of a user authority to certify (cluster authority only; scope user:ID)
          --scope           cluster (servers) or user:ID (one user's devices and authority)
          --days            valid for N days from now (default 365; it starts a day early, for clocks that lag)
          --replace         certify a new key for a replica id this signer certified with another key before (only
                            once that key was revoked: `breeze authority revoke`); a replica id is bound to one key
          the signer keeps what it certified in KEY.issued (mode 0600): a replica's key certified again is a renewal
        """

    static let dayMillis: UInt64 = 86_400_000

    static func run(_ args: [String], _ ctx: Context) throws(CLIError) {
        let a = try Arguments(args, valued: ["signer", "signer-chain", "scope", "out", "days", "device-key", "replica", "user-authority", "watch", "request"],
                              flags: ["replace", "renew"], usage: usage)
        if a.options["renew"] != nil { return try renew(a, ctx) }
        _ = try a.expect([])
        guard let signerPath = a.options["signer"] else { throw .usage("--signer KEY is required", usage) }
        guard let out = a.options["out"], !out.isEmpty else { throw .usage("--out CERT is required", usage) }
        // An app's request names the device, its replica and its user (the scope), proven with its key.
        let request = try a.options["request"].map { path throws(CLIError) in try readRequest(path) }
        if request != nil {
            for bad in ["device-key", "replica", "user-authority"] where a.options[bad] != nil {
                throw .usage("--\(bad) does not go with --request (the request names the device)", usage)
            }
        }
        guard let scopeText = a.options["scope"] ?? request.map({ "user:" + $0.user }) else { throw .usage("--scope cluster|user:ID is required", usage) }
        guard let scope = Scope(scopeText) else { throw .usage("--scope '\(scopeText)': expected cluster or user:ID", usage) }
        if let request, scope != Scope("user:" + request.user) {
            throw .failure("--scope \(scope): the request is for a device of user:\(request.user)")
        }
        let days = try Arguments.positive(a.options["days"], "--days", default: 365)
        guard days <= 36_500 else { throw .failure("--days \(days): at most 36500") }
        let device = a.options["device-key"] ?? request?.deviceKey, user = a.options["user-authority"]
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
            guard let r = a.options["replica"] ?? request?.replica else { throw .usage("--device-key needs --replica ID (both from `breeze key show`)", usage) }
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
        // A replica id is bound to one key: this signer certifies another key for an id it certified only when
        // told the first was revoked (its ledger, beside its key).
        let ledger = signerPath + ".issued"
        if role == .device {
            let issued = try IssuedLedger.read(ledger)
            if let held = issued[replica], held != key, a.options["replace"] == nil {
                throw .failure("--replica \(replica): this signer certified it for key \(CertificateChain.fingerprint(held)) already (\(ledger)); a replica id is bound to one key: if that key was lost, revoke it (`breeze authority revoke`) and enrol the new one with --replace")
            }
        }
        let now = SystemClock.nowMillis()
        let certificate: Certificate
        do {
            certificate = try Certificate.issue(role: role, key: key, replica: replica, scope: scope, notBefore: now - min(now, dayMillis),
                                                notAfter: now + UInt64(days) * dayMillis, signer: signer)
        } catch { throw .failure("\(error)") }
        let chain = [certificate] + signerChain
        try CredentialFiles.writeNew(out, CertificateChain.text(chain), option: "--out")
        if role == .device { try IssuedLedger.append(ledger, replica: replica, key: key, notAfter: certificate.notAfter) }
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

extension EnrolCommand {
    /// An enrolment request file (`Replica.enrolmentRequest()` as JSON), checked: well formed, and its proof the
    /// signature of its device key.
    static func readRequest(_ path: String) throws(CLIError) -> EnrolmentRequest {
        let text = try CredentialFiles.readText(path, option: "--request")
        let json: JSONValue
        do { json = try JSONReader.parse(text) } catch { throw .failure("--request \(path): not JSON (\(error.description))") }
        guard case .object(let fields) = json else { throw .failure("--request \(path): expected a JSON object") }
        func string(_ name: String) throws(CLIError) -> String {
            guard case .string(let v)? = fields.first(where: { $0.0 == name })?.1 else { throw .failure("--request \(path): no string field '\(name)'") }
            return v
        }
        guard case .int(let created)? = fields.first(where: { $0.0 == "createdMillis" })?.1, created >= 0 else {
            throw .failure("--request \(path): no field 'createdMillis' (milliseconds since 1970)")
        }
        let request = EnrolmentRequest(replica: try string("replica"), user: try string("user"), deviceKey: try string("deviceKey"),
                                       createdMillis: UInt64(created), proof: try string("proof"))
        do { _ = try request.verify() } catch { throw .failure("--request \(path): \(error.description)") }
        return request
    }

    /// `breeze enrol --renew`: answers the `device.renew` requests of the devices this signer may certify (a user
    /// authority: its user's; the cluster authority: every user's) that the database holds and that no
    /// `device.certificate` answers yet, with a certificate for the same key, replica id and scope, written to
    /// the user's stream (`Protocol/sync.md` 4.11). A request is answered only for the key the signer's ledger
    /// binds the replica to (or a replica it does not know yet), and only when the device itself asked.
    static func renew(_ a: Arguments, _ ctx: Context) throws(CLIError) {
        _ = try a.expect([])
        guard let signerPath = a.options["signer"] else { throw .usage("--signer KEY is required", usage) }
        for bad in ["scope", "out", "device-key", "replica", "user-authority"] where a.options[bad] != nil {
            throw .usage("--\(bad) does not go with --renew (the requests name the device)", usage)
        }
        let days = try Arguments.positive(a.options["days"], "--days", default: 365)
        guard days <= 36_500 else { throw .failure("--days \(days): at most 36500") }
        let watch = try a.options["watch"].map { s throws(CLIError) in try Arguments.positive(s, "--watch", default: 10) }
        let signer: Ed25519.KeyPair
        do { signer = try KeyFile.read(signerPath).key } catch { throw .failure("--signer \(error.description)") }
        var signerChain: [Certificate] = []
        var onlyUser: String?
        if let p = a.options["signer-chain"] {
            signerChain = try CredentialFiles.readChain(p, option: "--signer-chain")
            guard signerChain.count == 1, signerChain[0].role == .userAuthority, signerChain[0].key == signer.publicKey,
                  case .user(let u) = signerChain[0].scope else {
                throw .failure("--signer-chain \(p): expected the one certificate of the --signer key's user authority")
            }
            onlyUser = u
        }
        let ledger = signerPath + ".issued"
        while true {
            let answered = try ctx.withLog { log in try answerRequests(log, signer: signer, signerChain: signerChain, onlyUser: onlyUser,
                                                                         days: days, ledger: ledger, ctx) }
            if watch == nil {
                if !ctx.json { ctx.console.out("renewed \(answered) certificate(s)") }
                return
            }
            usleep(UInt32(min(watch!, 3600)) * 1_000_000)
        }
    }

    private struct DeviceKey: Hashable { let replica: ReplicaID; let key: [UInt8] }

    private static func answerRequests(_ log: EventLog, signer: Ed25519.KeyPair, signerChain: [Certificate], onlyUser: String?,
                                       days: Int, ledger: String, _ ctx: Context) throws -> Int {
        var answered = 0
        let bound = try IssuedLedger.read(ledger)
        for stream in try log.streams() {
            guard case .user(let user) = stream, onlyUser == nil || onlyUser == user else { continue }
            var requests: [DeviceKey: UInt64] = [:], issued: [DeviceKey: UInt64] = [:]
            try log.forEach(stream: stream) { entry in
                switch try? entry.event.body() {
                case .renewalRequest(let r)? where entry.event.id.origin.replica == r.replica:
                    let k = DeviceKey(replica: r.replica, key: r.key)
                    requests[k] = max(requests[k] ?? 0, r.notAfterMillis)
                case .certificateIssued(let chain)?:
                    if let c = try? Certificate(decoding: chain[0]) {
                        let k = DeviceKey(replica: c.replica, key: c.key)
                        issued[k] = max(issued[k] ?? 0, c.notAfter)
                    }
                default: break
                }
                return true
            }
            for (k, notAfter) in requests.sorted(by: { $0.key.replica < $1.key.replica }) where (issued[k] ?? 0) <= notAfter {
                if let held = bound[k.replica], held != k.key {
                    ctx.console.err("breeze enrol: device \(k.replica) (user:\(user)) asked for key \(CertificateChain.fingerprint(k.key)), but this signer bound it to key \(CertificateChain.fingerprint(held)): not renewed")
                    continue
                }
                let now = SystemClock.nowMillis()
                let cert = try Certificate.issue(role: .device, key: k.key, replica: k.replica, scope: .user(user),
                                                 notBefore: now - min(now, dayMillis), notAfter: now + UInt64(days) * dayMillis, signer: signer)
                _ = try log.append(.certificateIssued(chain: ([cert] + signerChain).map(\.encoded)), to: stream)
                try IssuedLedger.append(ledger, replica: k.replica, key: k.key, notAfter: cert.notAfter)
                answered += 1
                let until = ISOTime.format(millis: Int64(cert.notAfter))
                if ctx.json {
                    ctx.console.out(JSONValue.object([("renewed", .string(k.replica.description)), ("scope", .string("user:\(user)")),
                                                      ("notAfter", .string(until))]).text)
                } else {
                    ctx.console.out("renewed \(cert.subject) until \(until) (device.certificate in user:\(user))")
                }
            }
        }
        return answered
    }
}

/// What an authority certified: one line a device certificate (`device REPLICA KEY NOTAFTER`), in
/// `<signer key>.issued` beside the authority's private key, mode 0600. `breeze enrol` refuses to certify a
/// second key for a replica id it knows (a replica id is bound to one key) unless told the first was revoked.
enum IssuedLedger {
    /// The key each replica was last certified for.
    static func read(_ path: String) throws(CLIError) -> [ReplicaID: [UInt8]] {
        guard access(path, F_OK) == 0 else { return [:] }
        let text: String
        do { text = String(decoding: try KeyFile.readSmallFile(path, limit: 64 << 20, what: "an authority's ledger"), as: UTF8.self) } catch {
            throw .failure("\(path): \(error.description)")
        }
        var out: [ReplicaID: [UInt8]] = [:]
        for (n, line) in text.split(separator: "\n").enumerated() where !line.hasPrefix("#") {
            let f = line.split(separator: " ")
            guard f.count >= 3, f[0] == "device", let r = ReplicaID(hex: String(f[1])), let k = Digest.bytes(hex: String(f[2])), k.count == 32 else {
                throw .failure("\(path):\(n + 1): not a line of an authority's ledger (device REPLICA KEY NOTAFTER)")
            }
            out[r] = k
        }
        return out
    }

    /// Adds a line (the file is created 0600).
    static func append(_ path: String, replica: ReplicaID, key: [UInt8], notAfter: UInt64) throws(CLIError) {
        let fd = open(path, O_CREAT | O_WRONLY | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .failure("\(path): cannot write the authority's ledger (\(String(cString: strerror(errno))))") }
        defer { close(fd) }
        let line = Array("device \(replica) \(Digest.hex(key)) \(notAfter)\n".utf8)
        guard line.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == line.count, fsync(fd) == 0 else {
            throw .failure("\(path): cannot write the authority's ledger (\(String(cString: strerror(errno))))")
        }
    }
}
