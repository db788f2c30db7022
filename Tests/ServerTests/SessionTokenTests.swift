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
