import Crypto
import Foundation
import Testing

@testable import RooftopServer

@Suite struct SessionTokenTests {
    @Test("a token's stored form is its SHA-256 in lowercase hex, as stored before")
    func hash() {
        #expect(SessionToken.hash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SessionToken.hash("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        // Bytes below 16 keep their leading zero; any text hashes as its UTF-8.
        for text in ["r:token", "scope\u{0}user:u1", "é🙂", String(repeating: "x", count: 1000)] {
            let expected = SHA256.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined()
            #expect(SessionToken.hash(text) == expected)
        }
    }
}

@Suite struct Base64URLTests {
    @Test("unpadded base64url: the URL-safe digits, no padding, and every length reads back")
    func roundTrips() {
        #expect(Base64URL.encode([0xFB, 0xFF]) == "-_8")
        #expect(Base64URL.encode([]) == "")
        var random = SystemRandomNumberGenerator()
        for length in 0..<40 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            let text = Base64URL.encode(bytes)
            #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
            #expect(Base64URL.decode(text).map(Array.init) == bytes, "\(length) bytes")
        }
        #expect(Base64URL.decode("a") == nil, "one digit left over is not base64")
        #expect(Base64URL.decode("a b") == nil)
    }

    @Test("the same text as standard base64 with the URL-safe digits, padded text read too, anything else refused")
    func agreesWithStandardBase64() {
        var random = SystemRandomNumberGenerator()
        for length in 0..<300 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            let standard = Data(bytes).base64EncodedString()
            let urlSafe = String(standard.map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 })
            let unpadded = String(urlSafe.prefix { $0 != "=" })
            #expect(Base64URL.encode(bytes) == unpadded, "\(length) bytes")
            #expect(Base64URL.decode(urlSafe).map(Array.init) == bytes, "padded, \(length) bytes")
        }
        #expect(Base64URL.decode("AA==").map(Array.init) == [0])
        #expect(Base64URL.decode("AAA=").map(Array.init) == [0, 0])
        for text in ["AA=", "AAA==", "A===", "====", "=", "AA=A", "-_8+", "-_8/", "AB", "AAB", "é", "AA\u{0}A"] {
            #expect(Base64URL.decode(text) == nil, "\(text)")
        }
    }
}
