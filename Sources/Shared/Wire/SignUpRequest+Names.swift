import Foundation

// How user names are compared: as people read them, not byte for byte (see `usernameKey(_:)`).
extension SignUpRequest {
    /// The longest key a valid user name has, in UTF-8 bytes: 1,408, 11 times
    /// ``maxUsernameBytes``. A character's key is at most 11 times its own UTF-8 length (U+FDFA,
    /// 3 bytes, decomposes to 18 letters and spaces, 33 bytes), and a name's key is the keys of
    /// its characters, reordered.
    public static let maxUsernameKeyBytes = 11 * maxUsernameBytes

    /// A user name as it is stored: in Unicode Normalization Form C (NFC), so that an accent typed
    /// as a combining mark and one typed precomposed store alike. Case, width and everything else
    /// are kept as typed.
    ///
    /// Foundation's normalization is used, with the canonical order of combining marks (by their
    /// combining class) enforced here, because Foundation on Linux leaves the marks of some
    /// decompositions (U+0F73, U+0F75, U+0F81) out of order.
    public static func normalizedUsername(_ username: String) -> String {
        canonicallyOrdered(username.decomposedStringWithCanonicalMapping).precomposedStringWithCanonicalMapping
    }

    /// The key user names are compared by: names with equal keys are one name. Sign-up refuses a
    /// name whose key another user has; log-in finds the account by it.
    ///
    /// Names that differ only in case (`alice`, `Alice`, `ALICE`; `straße`, `STRASSE`), in Unicode
    /// form (`é` precomposed, or `e` and a combining U+0301), in width or compatibility form
    /// (fullwidth `ａｌｉｃｅ`, the ligature `ﬁ`) or in invisible characters (a soft hyphen, a
    /// zero-width space) have one key. Letters of different scripts that merely look alike
    /// (Cyrillic `а`, Latin `a`) do not.
    ///
    /// The key is a compatibility caseless form of the name, after Unicode's definition D146
    /// (compatibility caseless match) and its `NFKC_Casefold` mapping:
    ///
    /// 1. compatibility decomposition (NFKD, combining marks in canonical order): fullwidth
    ///    letters become ASCII, ligatures their letters, `é` becomes `e` and U+0301;
    /// 2. a case fold: lowercased, uppercased and lowercased again with the standard library's
    ///    full case mappings, which take no locale (the key is the same on every server), so that
    ///    `ß`, `ẞ` and `ss` meet, as do `ς`, `σ` and `Σ`, or `ſ` and `s` (and, further than
    ///    Unicode's case folding, dotless `ı` and `i`);
    /// 3. steps 1 and 2 again, and NFKD once more (a case mapping can undo a normal form);
    /// 4. default-ignorable characters removed (soft hyphen, zero-width spaces and joiners,
    ///    variation selectors, bidirectional controls), combining marks put back in canonical
    ///    order.
    ///
    /// Stores keep the key a name had when it was stored. A later Unicode version could give a
    /// name with then newly assigned characters another key; such an account still logs in by
    /// its name as stored.
    ///
    /// The key is never shown. It holds no control characters, and at most
    /// ``maxUsernameKeyBytes`` bytes for a name of at most ``maxUsernameBytes``: compute it only
    /// for a name that passed ``validateUsername(_:)``, whose length bounds the work. A name whose
    /// key is empty (nothing but invisible characters) is refused by ``validate()``.
    public static func usernameKey(_ username: String) -> String {
        var key = compatibilityDecomposed(username)
        for _ in 0..<2 { key = compatibilityDecomposed(key.lowercased().uppercased().lowercased()) }
        let visible = key.unicodeScalars.filter { !$0.properties.isDefaultIgnorableCodePoint }
        return canonicallyOrdered(String(String.UnicodeScalarView(visible)))
    }

    /// NFKD with the combining marks in canonical order.
    private static func compatibilityDecomposed(_ text: String) -> String {
        canonicallyOrdered(text.decomposedStringWithCompatibilityMapping)
    }

    /// `text` with every run of combining marks (scalars of a non-zero canonical combining class)
    /// stably sorted by combining class: Unicode's canonical ordering algorithm.
    static func canonicallyOrdered(_ text: String) -> String {
        func combiningClass(_ scalar: Unicode.Scalar) -> UInt8 { scalar.properties.canonicalCombiningClass.rawValue }
        var ordered = String.UnicodeScalarView()
        var marks: [Unicode.Scalar] = []
        for scalar in text.unicodeScalars {
            if combiningClass(scalar) == 0 {
                // `sorted` is stable: marks of one class keep their order.
                ordered.append(contentsOf: marks.sorted { combiningClass($0) < combiningClass($1) })
                marks.removeAll(keepingCapacity: true)
                ordered.append(scalar)
            } else {
                marks.append(scalar)
            }
        }
        ordered.append(contentsOf: marks.sorted { combiningClass($0) < combiningClass($1) })
        return String(ordered)
    }
}
