@testable import RooftopServer
import RooftopShared
import Testing

/// The client address behind trusted proxies: `X-Forwarded-For` is read only from a trusted peer,
/// right to left, skipping trusted hops.
@Suite("Trusted proxies")
struct TrustedProxiesTests {
    @Test("the right-most untrusted forwarded address, only from a trusted peer")
    func clientAddress() throws {
        let proxies = try TrustedProxies(["10.0.0.0/8", "::1", "192.168.1.10"])
        #expect(proxies.clientAddress(peer: "10.1.2.3", forwardedFor: ["198.51.100.1, 203.0.113.7"]) == "203.0.113.7")
        // Trusted hops are skipped; the header may come as several fields.
        #expect(proxies.clientAddress(peer: "::1", forwardedFor: ["203.0.113.7", "10.9.9.9 , 192.168.1.10"]) == "203.0.113.7")
        // From an untrusted peer the header is ignored.
        #expect(proxies.clientAddress(peer: "203.0.113.50", forwardedFor: ["10.0.0.1"]) == "203.0.113.50")
        // No header, or only trusted hops: the peer, or the left-most hop.
        #expect(proxies.clientAddress(peer: "10.0.0.1", forwardedFor: []) == "10.0.0.1")
        #expect(proxies.clientAddress(peer: "10.0.0.1", forwardedFor: ["10.0.0.2, 10.0.0.3"]) == "10.0.0.2")
        // Garbage ends the walk at the last trusted hop; addresses come out canonical.
        #expect(proxies.clientAddress(peer: "10.0.0.1", forwardedFor: ["evil, 10.0.0.3"]) == "10.0.0.3")
        #expect(proxies.clientAddress(peer: "10.0.0.1", forwardedFor: ["2001:DB8:0:0::1"]) == "2001:db8::1")
        #expect(proxies.clientAddress(peer: "10.0.0.1", forwardedFor: ["::ffff:203.0.113.7"]) == "203.0.113.7")
        #expect(proxies.contains("192.168.1.10") && !proxies.contains("192.168.1.11") && !proxies.contains("11.0.0.1"))
    }

    @Test("entries that are not addresses or ranges are refused by the configuration")
    func invalidEntries() {
        for entry in ["proxy.internal", "10.0.0.0/33", "::1/129", "10.0.0.0/x", ""] {
            #expect(throws: RooftopError.self, "\(entry)") { try TrustedProxies([entry]) }
        }
        var configuration = ServerConfiguration()
        configuration.trustedProxies = ["not-an-address"]
        #expect(throws: RooftopError.self) { try configuration.validate() }
    }
}
