import BreezeCore
import BreezeStore
import BreezeSync

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
    }

    /// What this replica's certificate is now (nil before its first sync or installation).
    ///
    /// ```swift
    /// if let c = try replica.certificateStatus(), c.notAfter < nowMillis + 7 * 86_400_000 { print("renewal pending") }
    /// ```
    public func certificateStatus() throws(BreezeError) -> CertificateStatus? {
        let (text, renewal) = try withLog { log in (try log.certificateText(), try log.renewalRequested()) }
        guard let text, let c = try? CertificateChain.parse(text: text).first else { return nil }
        return CertificateStatus(subject: c.subject, notBefore: c.notBefore, notAfter: c.notAfter,
                                 renewalRequestedMillis: renewal.flatMap { $0.notAfter == c.notAfter ? $0.atMillis : nil })
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
    }
}
