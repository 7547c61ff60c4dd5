import BreezeCore
import BreezeStore
import BreezeSync

/// A device's certificate over the years (`Protocol/sync.md` 4.11): before it expires the node asks for a new
/// one (a `device.renew` event in its user's stream, which reaches the authority's holder through the cluster
/// over the sealed sessions), and installs the `device.certificate` that answers it: new sessions use it, the
/// embedding process is told (`NodeConfig.onCertificate`: `breeze node` rewrites its `--cert` file) and the
/// database keeps it (`EventLog.setCertificateText`).
extension Node {
    /// How long before its certificate expires a device asks for a new one: a third of its lifetime, at most
    /// 30 days (a year's certificate is renewed a month ahead; a short one in tests, a third ahead).
    static func renewalWindow(_ c: Certificate) -> UInt64 {
        min(30 * 86_400_000, (c.notAfter - min(c.notAfter, c.notBefore)) / 3)
    }

    /// A request not answered is asked again after this long.
    static let renewalRetryMillis: UInt64 = 86_400_000

    /// Installs a certificate issued for this device since the last look, and asks for one when due. Cheap when
    /// nothing changed (the user's stream read from where the last look ended); nothing for a cluster node
    /// (servers are renewed by their operator, `breeze enrol`).
    func checkCertificate() {
        guard case .user(let user) = credentials.scope else { return }
        installIssuedCertificates(user: user)
        requestRenewalIfDue(user: user)
    }

    private func installIssuedCertificates(user: String) {
        var found: [[Certificate]] = []
        do {
            try log.forEach(stream: .user(user), afterSeq: certificateSeq) { entry in
                certificateSeq = entry.seq
                guard entry.event.type == "device.certificate", case .certificateIssued(let chain)? = try? entry.event.body() else { return true }
                if let certs = try? chain.map({ b throws(CertificateError) in try Certificate(decoding: b) }) { found.append(certs) }
                return true
            }
        } catch {
            config.log("reading issued certificates failed: \(error)")
            return
        }
        let mine = credentials.chain[0]
        for chain in found {
            guard let device = chain.first, device.replica == credentials.replica, device.key == mine.key,
                  device.notAfter > mine.notAfter else { continue }
            let now = SystemClock.nowMillis()
            let renewed: SyncCredentials
            do { renewed = try SyncCredentials(deviceKey: credentials.deviceKey, chain: chain, authority: credentials.authority, nowMillis: now) } catch {
                config.log("an issued certificate for this device is not taken: \(error.description)")
                continue
            }
            credentials = renewed
            let text = CertificateChain.text(chain)
            do { try log.setCertificateText(text) } catch { config.log("recording the renewed certificate failed: \(error)") }
            config.onCertificate?(text)
            statusReportDue = true
            config.log("certificate renewed: \(device.subject) valid until \(ISOTime.format(millis: Int64(clamping: device.notAfter))); new sessions use it")
        }
    }

    private func requestRenewalIfDue(user: String) {
        let cert = credentials.chain[0]
        let now = SystemClock.nowMillis()
        guard now + Node.renewalWindow(cert) >= cert.notAfter else { return }
        if let asked = try? log.renewalRequested(), asked.notAfter == cert.notAfter, now < asked.atMillis + Node.renewalRetryMillis { return }
        do {
            try log.requestRenewal(RenewalRequest(key: cert.key, replica: credentials.replica, notAfterMillis: cert.notAfter), user: user, atMillis: now)
            config.log("certificate expires \(ISOTime.format(millis: Int64(clamping: cert.notAfter))): asked the authority for a new one (device.renew in user:\(user))")
            route()
        } catch {
            config.log("asking for a new certificate failed: \(error)")
        }
    }
}
