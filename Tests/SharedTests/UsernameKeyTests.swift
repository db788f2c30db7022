import Foundation
import RooftopShared
import RooftopTestSupport
import Testing

/// User names are compared by their keys (``SignUpRequest/usernameKey(_:)``) and stored in NFC
/// (``SignUpRequest/normalizedUsername(_:)``). Strings are compared here byte for byte: Swift's
/// `==` already takes canonically equivalent strings as equal, which would hide what is checked.
@Suite("User names: keys and the stored form")
struct UsernameKeyTests {
    private static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
    private static func key(_ name: String) -> [UInt8] { bytes(SignUpRequest.usernameKey(name)) }
    private static func scalars(_ text: String) -> String {
        text.unicodeScalars.map { String($0.value, radix: 16, uppercase: true) }.joined(separator: " ")
    }

    @Test(
        "look-alikes have one key: case, Unicode form, width, ligatures, invisible characters",
        arguments: [
            ("alice", "ALICE"), ("alice", "Alice"), ("stra\u{DF}e", "STRASSE"), ("\u{1E9E}", "ss"),
            ("\u{3C2}", "\u{3C3}"), ("\u{3A3}", "\u{3C2}"), ("\u{17F}", "s"), ("\u{E9}", "e\u{301}"),
            ("\u{C9}", "e\u{301}"), ("\u{FF41}\u{FF4C}\u{FF49}\u{FF43}\u{FF45}", "alice"), ("\u{FB01}", "fi"),
            ("al\u{AD}ice", "alice"), ("al\u{200B}ice", "alice"), ("al\u{200D}ice", "alice"), ("\u{212A}", "k"),
            ("\u{212B}", "\u{E5}"), ("\u{2126}", "\u{3C9}"), ("\u{1C5}", "d\u{17E}"), ("\u{390}", "\u{3B9}\u{308}\u{301}"),
            ("a\u{323}\u{307}", "a\u{307}\u{323}"), ("\u{1E0C}\u{307}", "D\u{307}\u{323}"),
            // Tibetan marks whose decomposition Foundation on Linux leaves out of canonical order.
            ("\u{F40}\u{301}\u{F73}", "\u{F40}\u{F71}\u{F72}\u{301}"), ("\u{F40}\u{F73}\u{F73}", "\u{F40}\u{F71}\u{F71}\u{F72}\u{F72}"),
            ("\u{13A0}", "\u{AB70}"), ("\u{131}", "i"), ("a\u{FE0F}", "a"), ("a\u{202E}b", "ab"),
        ])
    func lookAlikes(_ first: String, _ second: String) {
        #expect(Self.key(first) == Self.key(second), "\(Self.scalars(first)) | \(Self.scalars(second))")
    }

    @Test(
        "names that read differently keep different keys: accents, other letters, other scripts",
        arguments: [("alice", "alicf"), ("\u{E4}", "a"), ("\u{E9}", "e"), ("a", "\u{430}"), ("o", "0"), ("a b", "ab"), ("\u{130}", "i")])
    func distinct(_ first: String, _ second: String) {
        #expect(Self.key(first) != Self.key(second), "\(Self.scalars(first)) | \(Self.scalars(second))")
    }

    @Test("the key is deterministic and locale-free: plain ASCII folds to lower case, nothing else")
    func asciiKeys() {
        #expect(SignUpRequest.usernameKey("Ada.Lovelace_1815-X") == "ada.lovelace_1815-x")
        #expect(SignUpRequest.usernameKey("\u{FF21}\u{FF24}\u{FF21}") == "ada")
        #expect(Self.bytes(SignUpRequest.usernameKey("\u{C9}MILE")) == Self.bytes("e\u{301}mile"))
    }

    /// Characters where normal forms, case mappings and ignorables interact.
    private static let pool: [Unicode.Scalar] = [
        0x41, 0x61, 0x49, 0x69, 0x130, 0x131, 0xDF, 0x1E9E, 0x3A3, 0x3C2, 0x3C3, 0x345, 0x390, 0x3B9, 0x301, 0x308,
        0x307, 0x323, 0x31B, 0x327, 0x34F, 0x1C5, 0x1C4, 0x1F0, 0x149, 0xFB03, 0xFF21, 0xFF41, 0x2126, 0x212A, 0x212B,
        0xC5, 0xE5, 0x17F, 0x13A0, 0xAB70, 0x1F88, 0x1F80, 0x1FB3, 0x1FBC, 0x3392, 0x3381, 0x2460, 0x24B6, 0xFDFA,
        0x958, 0x915, 0x93C, 0x1100, 0x1161, 0x11A8, 0xAC00, 0x344, 0xF73, 0xF71, 0xF72, 0xF75, 0xF81, 0xF77, 0x1E9B,
        0x1E0C, 0x313, 0x342, 0x1F00, 0x1FE2, 0x1D400, 0x10400, 0x10428, 0x1E900, 0x1E922, 0xAD, 0x200B, 0x200D,
        0xFE0F, 0x202E, 0x5B0, 0x5BC, 0xE48, 0xE38,
    ].compactMap(Unicode.Scalar.init)

    @Test("keys are idempotent, the same for every canonically equivalent form, and the stored form is NFC and stable")
    func randomNames() {
        var generator = SeededGenerator(seed: 0x5EED_0017)
        for _ in 0..<3_000 {
            var scalars = String.UnicodeScalarView()
            for _ in 0..<generator.int(1...6) { scalars.append(generator.pick(Self.pool)) }
            let name = String(scalars)
            let key = SignUpRequest.usernameKey(name)
            let context = "seed \(generator.seed): \(Self.scalars(name))"
            #expect(Self.key(key) == Self.bytes(key), "not idempotent: \(context)")
            let normalized = SignUpRequest.normalizedUsername(name)
            for form in [
                name.decomposedStringWithCanonicalMapping, name.precomposedStringWithCanonicalMapping, normalized,
            ] {
                #expect(Self.key(form) == Self.bytes(key), "\(context) as \(Self.scalars(form))")
            }
            #expect(
                Self.bytes(SignUpRequest.normalizedUsername(normalized)) == Self.bytes(normalized),
                "NFC not stable: \(context)")
            #expect(
                Self.bytes(SignUpRequest.normalizedUsername(name.decomposedStringWithCanonicalMapping))
                    == Self.bytes(normalized), "NFC of NFD differs: \(context)")
            #expect(!key.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "control in key: \(context)")
        }
    }

    @Test("a key is at most 11 times its name: U+FDFA (3 bytes) is the largest, 33 bytes")
    func keyBound() throws {
        let name = String(repeating: "\u{FDFA}", count: SignUpRequest.maxUsernameBytes / 3)
        try SignUpRequest.validateUsername(name)
        let key = SignUpRequest.usernameKey(name)
        #expect(key.utf8.count == 42 * 33)
        #expect(key.utf8.count <= SignUpRequest.maxUsernameKeyBytes)
        for scalar in Self.pool {
            let single = String(scalar)
            #expect(SignUpRequest.usernameKey(single).utf8.count <= 11 * single.utf8.count, "\(Self.scalars(single))")
        }
    }

    @Test("the stored form is NFC: combining accents composed, case and width kept")
    func storedForm() {
        #expect(Self.bytes(SignUpRequest.normalizedUsername("Rene\u{301}e")) == Self.bytes("Ren\u{E9}e"))
        #expect(Self.bytes(SignUpRequest.normalizedUsername("\u{FF21}da")) == Self.bytes("\u{FF21}da"))
        #expect(Self.bytes(SignUpRequest.normalizedUsername("STRASSE")) == Self.bytes("STRASSE"))
        // U+0958 is excluded from composition: NFC decomposes it.
        #expect(Self.bytes(SignUpRequest.normalizedUsername("\u{958}")) == Self.bytes("\u{915}\u{93C}"))
    }

    @Test("sign-up refuses a name of only invisible characters, or longer than 128 bytes in NFC; log-in's check stays the length as typed")
    func validation() throws {
        for name in ["\u{200B}", "\u{AD}\u{200D}", "\u{FE0F}", String(repeating: "\u{958}", count: 42)] {
            #expect {
                try SignUpRequest(username: name, password: "password-1").validate()
            } throws: { error in
                (error as? RooftopError)?.code == .illegalArgument && (error as? RooftopError)?.field == "username"
            }
        }
        try SignUpRequest.validateUsername(String(repeating: "\u{958}", count: 42))
        try SignUpRequest(username: "Zo\u{EB} \u{FF21}", password: "password-1").validate()
        try SignUpRequest(username: String(repeating: "\u{E9}", count: 64), password: "password-1").validate()
    }
}
