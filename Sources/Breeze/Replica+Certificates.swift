import BreezeCore
import BreezeStore
import BreezeSync
import BreezeCrypto

/// A device's certificate over the years (`Protocol/sync.md` 4.11): what it holds and until when, a renewal
/// asked for and received over the wire (the sync node does both by itself, a month before expiry), and a
/// certificate installed out of band (an expired device renewed by its authority with `breeze enrol`).
extension Replica {
    /// The certificate the sync node last used (or was installed), if any.
    public struct CertificateStatus: Equatable, Sendable {
        /// `device <replica> (user:<id>)`.
        public var subject: String
        /// Valid from and until, milliseconds since 1970.
        public var notBefore: UInt64, notAfter: UInt64
        /// When this replica asked for a new one for this certificate (the node does a month before expiry).
        public var renewalRequestedMillis: UInt64?

        /// True when the certificate expires within `window` milliseconds of `now` (or has expired).
        public func expires(withinMillis window: UInt64, atMillis now: UInt64) -> Bool { notAfter <= now + window }
    }

    /// What this replica's certificate is now (nil before its first sync or installation).
    ///
    /// ```swift
    /// if let c = try replica.certificateStatus(), c.notAfter < nowMillis + 7 * 86_400_000 { print("renewal pending") }
    /// ```
    public func certificateStatus() throws(BreezeError) -> CertificateStatus? {
        try withLog { log in try Replica.certificateStatus(log) }
    }

    static func certificateStatus(_ log: EventLog) throws -> CertificateStatus? {
        let (text, renewal) = (try log.certificateText(), try log.renewalRequested())
        guard let text, let c = try? CertificateChain.parse(text: text).first else { return nil }
        return CertificateStatus(subject: c.subject, notBefore: c.notBefore, notAfter: c.notAfter,
                                 renewalRequestedMillis: renewal.flatMap { $0.notAfter == c.notAfter ? $0.atMillis : nil })
    }

    /// The certificate's status, observed: a new value when one is installed (by `installCertificate`, or by the
    /// sync node when a renewal arrives) or a renewal is asked for. An app shows the expiry from `notAfter`
    /// (`CertificateStatus.expires(withinMillis:atMillis:)`) and asks for a renewal when it nears.
    ///
    /// ```swift
    /// for try await status in replica.observeCertificate() { expiryLabel.text = status.map { "\($0.notAfter)" } ?? "not enrolled" }
    /// ```
    public func observeCertificate() -> ValueObservation<CertificateStatus?> {
        let user = options.user
        return observe { try $0.certificateStatus(user: user) }
    }

    /// The request to send to the backend that enrols this device (`EnrolmentRequest`): this replica's id,
    /// its user (default `options.user`), its device key and the key's proof. The backend answers with a
    /// certificate chain, installed with `installCertificate`.
    ///
    /// ```swift
    /// let request = try replica.enrolmentRequest()
    /// let chain = try await backend.enrol(request)      // your API: `breeze enrol --request` on its side
    /// try replica.installCertificate(chain)
    /// ```
    ///
    /// - Throws: `BreezeError.invalidArgument` when the device key file is unreadable or readable by others.
    public func enrolmentRequest(user: String? = nil) throws(BreezeError) -> EnrolmentRequest {
        let u = try resolve(user)
        let key: Ed25519.KeyPair
        do { key = try KeyFile.deviceKey(forDatabase: path, replica: id, create: true) } catch {
            throw BreezeError(.invalidArgument, error.description, underlying: error)
        }
        return EnrolmentRequest(key: key, replica: id, user: u, createdMillis: nowMillis)
    }

    /// Asks the authority for a new certificate for this device's key now (a `device.renew` event in the user's
    /// stream, as the sync node does by itself a month before expiry: `Protocol/sync.md` 4.11); the answer
    /// comes back by sync and is installed by the node. Returns false when there is no certificate to renew.
    ///
    /// ```swift
    /// if let c = try replica.certificateStatus(), c.expires(withinMillis: 30 * 86_400_000, atMillis: nowMillis) {
    ///     _ = try replica.requestCertificateRenewal()
    /// }
    /// ```
    @discardableResult
    public func requestCertificateRenewal() throws(BreezeError) -> Bool {
        let asked: Bool = try withLog { log in
            guard let text = try log.certificateText(), let cert = try? CertificateChain.parse(text: text).first else { return false }
            try log.requestRenewal(RenewalRequest(key: cert.key, replica: id, notAfterMillis: cert.notAfter), user: options.user, atMillis: nowMillis)
            return true
        }
        if asked { committed() }
        return asked
    }

    /// Installs a certificate chain (its text form, `breeze enrol`'s) for this replica's key, out of band: the
    /// next `startSync` uses it when it expires later than the one given there. For a device whose certificate
    /// expired before a renewal reached it: its authority certifies the same key again and the app installs it.
    ///
    /// - Throws: `BreezeError.invalidArgument` when the chain does not parse or certifies another key or replica.
    public func installCertificate(_ chainText: String) throws(BreezeError) {
        let chain: [Certificate]
        do { chain = try CertificateChain.parse(text: chainText) } catch {
            throw BreezeError(.invalidArgument, "certificate: \(error.description)", underlying: error)
        }
        let key = try devicePublicKey()
        guard let device = chain.first, device.role == .device, device.key == key, device.replica == id else {
            throw BreezeError(.invalidArgument, "certificate: it is not for this replica (\(id)) and its key")
        }
        try withLog { log in try log.setCertificateText(chainText) }
        observers.invalidate()   // no event: the certificate's observers are told directly
    }
}
