import Foundation
import NIOSSL
@testable import Rooftop
import RooftopShared
import Testing

/// ``TrustPolicy/tlsConfiguration()``: the one conversion the HTTP transport and the live
/// connection share.
@Suite struct TransportTrustTests {
    @Test func systemRootsKeepTheDefaultRoots() throws {
        let tls = try TrustPolicy.systemRoots.tlsConfiguration()
        #expect(tls.trustRoots == .default)
        #expect(tls.minimumTLSVersion == .tlsv12)
        #expect(tls.certificateVerification == .fullVerification)
    }

    @Test(arguments: [
        TrustPolicy.certificateAuthority(pem: NetworkCertificates.selfSigned),
        .pinnedCertificate(pem: NetworkCertificates.selfSigned),
    ])
    func aGivenCertificateIsTheOnlyRoot(_ policy: TrustPolicy) throws {
        let tls = try policy.tlsConfiguration()
        let expected = try NIOSSLCertificate.fromPEMBytes(Array(NetworkCertificates.selfSigned.utf8))
        #expect(tls.trustRoots == .certificates(expected))
        #expect(tls.certificateVerification == .fullVerification)
        #expect(policy.isNarrow)
    }

    @Test(arguments: ["", "not a certificate", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"])
    func unusablePEMIsAnIllegalArgument(_ pem: String) {
        for policy in [TrustPolicy.certificateAuthority(pem: pem), .pinnedCertificate(pem: pem)] {
            let error = #expect(throws: RooftopError.self) { try policy.tlsConfiguration() }
            #expect(error?.code == .illegalArgument)
        }
    }

    @Test func theHTTPTransportRefusesUnusablePEM() {
        let error = #expect(throws: RooftopError.self) {
            _ = try AsyncHTTPTransport(
                baseURL: URL(string: "https://localhost:1")!, trust: .certificateAuthority(pem: "nope"),
                timeout: .seconds(1))
        }
        #expect(error?.code == .illegalArgument)
    }
}
