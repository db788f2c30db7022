import RooftopShared

/// The admin (master) key: configured, or generated on the first start and printed once. Only
/// its SHA-256 is stored.
enum AdminKey {
    static let settingName = "admin-key-sha256"

    /// The hash of the admin key in effect.
    static func resolve(configured: String?, storage: any Storage, output: @Sendable (String) -> Void) async throws
        -> String
    {
        if let configured {
            guard configured.utf8.count >= 16 else {
                throw RooftopError(.illegalArgument, "the admin key must be at least 16 characters")
            }
            let hash = SessionToken.hash(configured)
            try await storage.setSetting(named: settingName, to: hash)
            return hash
        }
        if let stored = try await storage.setting(named: settingName) { return stored }
        let key = "admin-" + String(SessionToken.generate().dropFirst(2))
        let hash = SessionToken.hash(key)
        try await storage.setSetting(named: settingName, to: hash)
        output("admin key (shown once, store it safely): \(key)")
        return hash
    }
}
