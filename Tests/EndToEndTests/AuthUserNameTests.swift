import Foundation
import RooftopShared
import Testing

/// User names are compared as people read them, not byte for byte: names that differ only in
/// case, Unicode form (precomposed or combining accents), width (fullwidth letters) or invisible
/// characters are one name. Sign-up refuses the second with `exists`; log-in finds the account
/// under any of them; the name is stored as typed, in NFC. Each case logs in from a loopback
/// address of its own: log-ins in flight from one address count against its throttle.
@Suite("Auth: look-alike user names", .sharedServer())
struct AuthUserNameTests {
    /// A name and a look-alike of it, made from one unique name.
    struct LookAlike: Sendable, CustomTestStringConvertible {
        /// The case's own last address byte.
        var index: Int
        var label: String
        var original: @Sendable (String) -> String
        var lookAlike: @Sendable (String) -> String
        var testDescription: String { label }
    }

    static let lookAlikes: [LookAlike] = [
        LookAlike(index: 1, label: "alice, Alice", original: { $0 }, lookAlike: { $0.prefix(1).uppercased() + $0.dropFirst() }),
        LookAlike(index: 2, label: "alice, ALICE", original: { $0 }, lookAlike: { $0.uppercased() }),
        LookAlike(
            index: 9, label: "é precomposed, e + U+0301", original: { "ren\u{E9}e" + $0 },
            lookAlike: { "rene\u{301}e" + $0 }),
        LookAlike(index: 3, label: "ascii, fullwidth", original: { $0 }, lookAlike: fullwidth),
        LookAlike(index: 4, label: "straße, STRASSE", original: { "stra\u{DF}e" + $0 }, lookAlike: { "STRASSE" + $0.uppercased() }),
        LookAlike(index: 5, label: "ΟΔΟΣ, οδος (final sigma)", original: { "\u{39F}\u{394}\u{39F}\u{3A3}" + $0 }, lookAlike: { "\u{3BF}\u{3B4}\u{3BF}\u{3C2}" + $0 }),
        LookAlike(index: 6, label: "a soft hyphen inside", original: { $0 }, lookAlike: { $0.prefix(1) + "\u{AD}" + $0.dropFirst() }),
        LookAlike(index: 7, label: "a zero-width space inside", original: { $0 }, lookAlike: { $0.prefix(1) + "\u{200B}" + $0.dropFirst() }),
        LookAlike(index: 8, label: "ﬁ ligature, fi", original: { "\u{FB01}" + $0 }, lookAlike: { "fi" + $0 }),
    ]

    /// Every ASCII character of `name` as its fullwidth form (U+FF01-U+FF5E).
    static func fullwidth(_ name: String) -> String {
        String(String.UnicodeScalarView(name.unicodeScalars.map {
            (0x21...0x7E).contains($0.value) ? Unicode.Scalar($0.value + 0xFEE0) ?? $0 : $0
        }))
    }

    @Test("a look-alike of a taken user name is refused with exists (409); the first account is untouched", arguments: lookAlikes)
    func lookAlikeRefused(_ pair: LookAlike) async throws {
        let (_, client) = try SharedServer.require()
        let unique = Unique.name("a")
        let original = pair.original(unique)
        let lookAlike = pair.lookAlike(unique)
        #expect(Array(original.utf8) != Array(lookAlike.utf8), "the pair must differ byte for byte")
        let first = try await client.signUp(original, password: "first-password")
        let reply = try await client.send(API.signUp, body: SignUpRequest(username: lookAlike, password: "second-password"))
        #expect(reply.status == 409, "\(reply.text)")
        #expect(reply.error?.code == .exists)
        let session = try await client.logIn(original, password: "first-password", from: "127.0.10.\(pair.index)")
            .decode(Session.self)
        #expect(session.user.objectId == first.user.objectId)
    }

    @Test("log-in finds the account under any look-alike of its name", arguments: lookAlikes)
    func logInByLookAlike(_ pair: LookAlike) async throws {
        let (_, client) = try SharedServer.require()
        let unique = Unique.name("b")
        let first = try await client.signUp(pair.original(unique), password: "the-password")
        let reply = try await client.logIn(pair.lookAlike(unique), password: "the-password", from: "127.0.11.\(pair.index)")
        #expect(reply.status == 200, "\(reply.text)")
        let session = try reply.decode(Session.self)
        #expect(session.user.objectId == first.user.objectId)
        // The account keeps the name it signed up with.
        #expect(Array(session.user.username.utf8) == Array(first.user.username.utf8))
    }

    @Test("the name is stored as typed, in NFC: combining accents are composed, case and width kept")
    func storedInNFC() async throws {
        let (_, client) = try SharedServer.require()
        let unique = Unique.name("")
        let session = try await client.signUp("Rene\u{301}e" + unique + "\u{FF21}")
        #expect(Array(session.user.username.utf8) == Array(("Ren\u{E9}e" + unique + "\u{FF21}").utf8))
        let me = try await client.call(API.getCurrentUser, token: session.sessionToken, as: UserInfo.self)
        #expect(Array(me.username.utf8) == Array(session.user.username.utf8))
    }

    @Test("a name of nothing but invisible characters, or one longer than 128 bytes in NFC, is refused with illegalArgument (400)")
    func unusableNamesRefused() async throws {
        let (_, client) = try SharedServer.require()
        // U+0958 is 3 bytes, and 6 in NFC (U+0915 U+093C): 42 of them are 126 bytes as typed, 252 in NFC.
        for name in ["\u{200B}", "\u{AD}\u{200D}", String(repeating: "\u{958}", count: 42)] {
            let reply = try await client.send(API.signUp, body: SignUpRequest(username: name, password: "password-1"))
            #expect(reply.status == 400, "\(name.unicodeScalars.count) scalars: \(reply.text)")
            #expect(reply.error?.code == .illegalArgument)
            #expect(reply.error?.field == "username")
        }
    }
}
