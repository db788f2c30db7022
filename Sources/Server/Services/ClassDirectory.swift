import RooftopShared

/// Class settings (permissions, default ACL, merge rules), cached in memory and refreshed when
/// changed (through this process, or another one sharing the database: ``ClusterLink``).
actor ClassDirectory {
    private let storage: any Storage
    private let cluster: ClusterLink
    private var cache: [String: ClassSettings] = [:]

    init(storage: any Storage, cluster: ClusterLink) {
        self.storage = storage
        self.cluster = cluster
    }

    /// A class's settings (the defaults when none were saved).
    func settings(of className: String) async throws -> ClassSettings {
        if let cached = cache[className] { return cached }
        let settings = try await storage.classSettings(named: className) ?? ClassSettings(className: className)
        cache[className] = settings
        return settings
    }

    /// A class's permissions.
    func permissions(of className: String) async throws -> ClassPermissions {
        try await settings(of: className).permissions
    }

    /// Saves new settings.
    func save(_ settings: ClassSettings) async throws {
        try await storage.saveClassSettings(settings)
        cache[settings.className] = settings
        await cluster.send(.classChanged(className: settings.className))
    }

    /// Drops a class's cached settings (changed by another server process).
    func forget(_ className: String) {
        cache[className] = nil
    }

    /// Drops every cached class.
    func forgetAll() {
        cache.removeAll()
    }
}
