import Foundation
import NIOSSL
@testable import Rooftop
import RooftopShared
import Testing

/// How ``LiveSocketTarget`` turns the server URL and trust policy into the WebSocket URL, TLS
/// configuration, SNI name and upgrade headers.
@Suite struct LiveSocketTargetTests {
    private let ca = TrustPolicy.certificateAuthority(pem: NetworkCertificates.selfSigned)

    private func target(_ url: String, trust: TrustPolicy = .systemRoots) throws -> LiveSocketTarget {
        try LiveSocketTarget(serverURL: try #require(URL(string: url)), appId: "my-app", trust: trust)
    }

    @Test func httpsBecomesWSSOnTheLivePath() throws {
        let target = try target("https://rooftop.example.com:8443")
        #expect(target.url == "wss://rooftop.example.com:8443/v1/live")
        #expect(target.tls != nil)
        // A host name is verified (and sent as SNI) by the WebSocket client itself.
        #expect(target.configuration.sniHostname == nil)
        #expect(target.tls?.certificateVerification == .fullVerification)
    }

    @Test func aPathPrefixIsKeptAndTrailingSlashesDropped() throws {
        #expect(try target("https://example.com/rooftop/").url == "wss://example.com/rooftop/v1/live")
        #expect(try target("https://example.com/").url == "wss://example.com/v1/live")
        #expect(try target("https://example.com/a?x=1#f").url == "wss://example.com/a/v1/live")
    }

    @Test func plainHTTPBecomesWSWithoutTLS() throws {
        let target = try target("http://localhost:8080")
        #expect(target.url == "ws://localhost:8080/v1/live")
        #expect(target.tls == nil)
    }

    @Test func theUpgradeCarriesOnlyTheApplicationID() throws {
        let headers = try target("https://example.com").configuration.additionalHeaders
        #expect(headers.count == 1)
        #expect(headers.first?.name.rawName == "X-Rooftop-Application-Id")
        #expect(headers.first?.value == "my-app")
    }

    @Test func closingIsBoundedByShortTimeouts() throws {
        let target = try target("https://example.com")
        #expect(target.configuration.closeTimeout == .seconds(1))
        #expect(target.tls?.shutdownTimeout == .milliseconds(100))
    }

    @Test func theTrustPolicyGivesTheRoots() throws {
        let target = try target("https://example.com", trust: ca)
        let expected = try NIOSSLCertificate.fromPEMBytes(Array(NetworkCertificates.selfSigned.utf8))
        #expect(target.tls?.trustRoots == .certificates(expected))
    }

    @Test(arguments: [TrustPolicy.systemRoots, .certificateAuthority(pem: NetworkCertificates.selfSigned)])
    func loopbackIsVerifiedAsLocalhost(_ trust: TrustPolicy) throws {
        let target = try target("https://127.0.0.1:9000", trust: trust)
        #expect(target.url == "wss://127.0.0.1:9000/v1/live")
        #expect(target.configuration.sniHostname == "localhost")
        #expect(target.tls?.certificateVerification == .fullVerification)
    }

    @Test func anotherIPAddressNeedsANarrowTrustPolicy() throws {
        let error = #expect(throws: RooftopError.self) { try target("https://10.0.0.5", trust: .systemRoots) }
        #expect(error?.code == .tls)
        let narrow = try target("https://10.0.0.5", trust: ca)
        #expect(narrow.tls?.certificateVerification == .noHostnameVerification)
        #expect(narrow.configuration.sniHostname == "localhost")
        // Without TLS there is nothing to verify.
        #expect(try target("http://10.0.0.5").tls == nil)
    }

    @Test(arguments: ["https://[::1]:8443", "ftp://example.com", "https:///nohost", "mailto:a@b.c"])
    func unusableURLsAreIllegalArguments(_ url: String) {
        let error = #expect(throws: RooftopError.self) { try target(url) }
        #expect(error?.code == .illegalArgument)
    }

    @Test func ipv4Recognition() {
        #expect(LiveSocketTarget.isIPv4("192.168.1.20"))
        #expect(LiveSocketTarget.isIPv4("127.0.0.1"))
        #expect(!LiveSocketTarget.isIPv4("256.1.1.1"))
        #expect(!LiveSocketTarget.isIPv4("1.2.3"))
        #expect(!LiveSocketTarget.isIPv4("1..2.3"))
        #expect(!LiveSocketTarget.isIPv4("example.com"))
        #expect(!LiveSocketTarget.isIPv4("1.2.3.4.example"))
        #expect(LiveSocketTarget.isLoopback("127.8.9.10"))
        #expect(!LiveSocketTarget.isLoopback("128.0.0.1"))
    }
}
