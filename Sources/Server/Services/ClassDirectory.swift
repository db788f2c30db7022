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

    /// Changes a class's settings with the members a body gives (the others keep their values),
    /// as `PUT /v1/classes/{className}` and the dashboard do.
    /// - Returns: The settings as saved.
    /// - Throws: `illegalArgument` for a body naming another class or a merge rule for an invalid
    ///   field name; storage errors.
    @discardableResult
    func change(_ className: String, with body: ClassSettingsBody) async throws -> ClassSettings {
        if let named = body.className, named != className {
            throw RooftopError(
                .illegalArgument, "the body names class '\(named)' but the path '\(className)'", field: "className")
        }
        var settings = try await settings(of: className)
        if let permissions = body.permissions { settings.permissions = permissions }
        if let mergeRules = body.mergeRules {
            for field in mergeRules.keys { try Identifier.validate(field, as: .field) }
            settings.mergeRules = mergeRules
        }
        try await save(settings)
        return settings
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
