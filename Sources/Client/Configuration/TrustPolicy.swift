import Foundation

/// Which server certificates a client accepts.
public enum TrustPolicy: Sendable, Hashable {
    /// The operating system's trusted roots (for servers with a public certificate).
    case systemRoots
    /// Only certificates issued by this CA (PEM), e.g. the development CA `rooftop-server`
    /// creates and prints on first start.
    case certificateAuthority(pem: String)
    /// Only this exact certificate (PEM), used as the sole trust root. Meant for a server's own
    /// self-signed certificate: a certificate issued by a CA cannot act as a trust root here, so
    /// pin its CA with ``certificateAuthority(pem:)`` instead.
    case pinnedCertificate(pem: String)
}
