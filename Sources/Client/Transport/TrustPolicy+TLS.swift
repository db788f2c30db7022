import NIOSSL
import RooftopShared

extension TrustPolicy {
    /// The client TLS configuration that trusts exactly what this policy says: the system's
    /// roots, or only the given CA or pinned certificate as trust roots. Hostname verification
    /// stays on in every case. Used by both ``AsyncHTTPTransport`` and ``LiveConnection`` so the
    /// REST calls and the live socket trust the same server.
    ///
    /// A pinned certificate is installed as the only trust root, which BoringSSL accepts only
    /// for a self-signed certificate: pinning a CA-issued leaf fails every handshake with `tls`.
    ///
    /// - Throws: `illegalArgument` when the PEM holds no valid certificate.
    func tlsConfiguration() throws(RooftopError) -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        switch self {
        case .systemRoots:
            break
        case .certificateAuthority(let pem), .pinnedCertificate(let pem):
            let certificates: [NIOSSLCertificate]
            do {
                certificates = try NIOSSLCertificate.fromPEMBytes(Array(pem.utf8))
            } catch {
                throw RooftopError(.illegalArgument, "the trusted certificate is not valid PEM", cause: error)
            }
            // An empty root set would fail every handshake with a misleading TLS error.
            guard !certificates.isEmpty else {
                throw RooftopError(.illegalArgument, "the trusted certificate PEM contains no certificate")
            }
            tls.trustRoots = .certificates(certificates)
        }
        return tls
    }

    /// Whether the trust roots identify one deployment (a private CA or a pinned certificate)
    /// rather than the public web PKI.
    var isNarrow: Bool {
        switch self {
        case .systemRoots: false
        case .certificateAuthority, .pinnedCertificate: true
        }
    }
}
