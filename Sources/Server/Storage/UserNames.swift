import RooftopShared

/// How a log-in name finds its account, the same on every backend (``AccountStorage/user(logInName:)``).
///
/// The candidates are the users named exactly `name` (byte for byte), named its NFC form
/// (``SignUpRequest/normalizedUsername(_:)``), or whose name key is its key
/// (``SignUpRequest/usernameKey(_:)``); the first of those three that exists is the one. Users
/// signed up since names have keys are stored in NFC with their own key, so all three find the
/// same user. Only users whose keys collided when keys were introduced differ
/// (``UserNameMigration``): each still logs in under its exact name.
struct UserNameLookup: Sendable {
    /// The name as typed at log-in.
    let name: String
    /// Its NFC form.
    let normalized: String
    /// Its key.
    let key: String

    /// The lookup of `name`, which passed ``SignUpRequest/validateUsername(_:)``.
    init(_ name: String) {
        self.name = name
        self.normalized = SignUpRequest.normalizedUsername(name)
        self.key = SignUpRequest.usernameKey(name)
    }

    /// The user the log-in is for among `candidates` (users named ``name`` or ``normalized``, or
    /// keyed ``key``), compared byte for byte (Swift's `==` on strings would take canonically
    /// equivalent names as equal).
    func choose(_ candidates: [UserRecord]) -> UserRecord? {
        let exact = Array(name.utf8)
        let nfc = Array(normalized.utf8)
        return candidates.first { Array($0.username.utf8) == exact }
            ?? candidates.first { Array($0.username.utf8) == nfc }
            // Otherwise the user found by its key (keys are unique: at most one).
            ?? candidates.first
    }
}

/// The name keys given to the users of a database made before names had keys (a schema
/// migration on each backend).
///
/// Users are taken oldest first. Each gets its name's key, except one whose key an older user
/// already has: it gets the key, U+001F and its ID — a key no sign-up produces (a user name has
/// no control characters, nor a key), so it blocks no new name, and the user logs in by its
/// exact name (``UserNameLookup``). Each name is rewritten in NFC unless that form is another
/// user's name, so names stay unique; that user then logs in by its name as stored.
enum UserNameMigration {
    /// An existing user.
    struct User: Sendable, Equatable {
        /// The user's ID.
        var id: String
        /// The name as stored.
        var username: String
    }

    /// A user's name (in NFC where possible) and key.
    struct Keyed: Sendable, Equatable {
        /// The user's ID.
        var id: String
        /// The name to store.
        var username: String
        /// The key to store.
        var key: String
    }

    /// The separator of a collided key and the user's ID (U+001F, a control character).
    static let separator = "\u{1F}"

    /// Names and keys for `users`, given oldest first (by creation time, then insertion order).
    static func keys(for users: [User]) -> [Keyed] {
        // Byte for byte: Swift's string equality would merge canonically equivalent names.
        var names = Set(users.map { Array($0.username.utf8) })
        var keys: Set<[UInt8]> = []
        return users.map { user in
            var username = user.username
            let normalized = SignUpRequest.normalizedUsername(user.username)
            if !names.contains(Array(normalized.utf8)) {
                names.insert(Array(normalized.utf8))
                username = normalized
            }
            var key = SignUpRequest.usernameKey(user.username)
            if keys.contains(Array(key.utf8)) {
                key += separator + user.id
                while keys.contains(Array(key.utf8)) { key += separator }
            }
            keys.insert(Array(key.utf8))
            return Keyed(id: user.id, username: username, key: key)
        }
    }
}

extension RooftopError {
    /// The refusal of a taken user name, on every backend (``AccountStorage/insertUser(_:)``): `exists`.
    static func usernameTaken(_ username: String) -> RooftopError {
        RooftopError(
            .exists,
            "the user name '\(username)' is taken (names that differ only in case, Unicode form, width or invisible characters are one name)"
        )
    }
}
