import RooftopShared

/// The admin (master) key: configured, or generated on the first start and printed once. Only
/// its SHA-256 is stored. Starting a server with another key than the stored one (rotating it)
/// ends every dashboard session; restart every server process with the new key, as each keeps
/// the key it started with.
enum AdminKey {
    static let settingName = "admin-key-sha256"

    /// The hash of the admin key in effect.
    static func resolve(configured: String?, storage: any SettingsStorage & AccountStorage, output: @Sendable (String) -> Void) async throws
        -> String
    {
        if let configured {
            guard configured.utf8.count >= 16 else {
                throw RooftopError(.illegalArgument, "the admin key must be at least 16 characters")
            }
            let hash = SessionToken.hash(configured)
            if try await storage.setting(named: settingName) != hash {
                try await storage.setSetting(named: settingName, to: hash)
                // A new key: the dashboard sessions signed in with the old one end, in every
                // server process (they read them from the storage on every page).
                _ = try await storage.deleteDashboardSessions()
            }
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
