import RooftopShared
import Synchronization

/// Class settings (permissions, default ACL, merge rules, declared indexes), cached in memory and refreshed when
/// changed (through this process, or another one sharing the database: ``ClusterLink``).
///
/// The cache is bounded by construction: at most ``capacity`` classes, saved or not (anyone may
/// ask about any class name, anonymously); when it is full, an entry is evicted to make room, and
/// is read again when next asked for. It is also versioned: every change or forgetting bumps a
/// generation, and settings whose load began under an older generation are returned but not
/// stored (they may predate the change, e.g. a revoked permission, and would put it back).
///
/// The cache and its generation are kept under a lock (it was an actor): nearly every request
/// reads a class's permissions, and reads them without waiting for an actor (see
/// ``RoleDirectory``).
final class ClassDirectory: Sendable {
    /// The default ``capacity``: far more classes than an app has, a few hundred kilobytes at most.
    static let defaultCapacity = 1_024

    private let load: @Sendable (String) async throws -> ClassSettings?
    private let persist: @Sendable (ClassSettings) async throws -> Void
    private let cluster: ClusterLink?
    private struct Cache {
        var settings: [String: ClassSettings] = [:]
        /// Bumped by every change and forgetting.
        var generation: UInt64 = 0
    }
    private let cache = Mutex(Cache())
    /// The most classes cached at once.
    let capacity: Int

    convenience init(storage: any ClassStorage, cluster: ClusterLink, capacity: Int = ClassDirectory.defaultCapacity) {
        self.init(
            capacity: capacity, cluster: cluster, load: { try await storage.classSettings(named: $0) },
            save: { try await storage.saveClassSettings($0) })
    }

    /// A directory reading and saving settings with `load` and `save` (tests hold a load back
    /// with them), telling `cluster` of changes when given.
    init(
        capacity: Int, cluster: ClusterLink? = nil, load: @escaping @Sendable (String) async throws -> ClassSettings?,
        save: @escaping @Sendable (ClassSettings) async throws -> Void
    ) {
        self.capacity = max(1, capacity)
        self.cluster = cluster
        self.load = load
        self.persist = save
    }

    /// How many classes are cached now (at most ``capacity``).
    var cachedCount: Int { cache.withLock { $0.settings.count } }

    /// A class's settings (the defaults when none were saved, ``defaults(of:)``).
    func settings(of className: String) async throws -> ClassSettings {
        let (cached, started) = cache.withLock { ($0.settings[className], $0.generation) }
        if let cached { return cached }
        let settings = try await load(className) ?? Self.defaults(of: className)
        // A load that a change overtook may hold what the change replaced: not kept.
        cache.withLock { cache in
            guard cache.generation == started else { return }
            if cache.settings.count >= capacity, cache.settings[className] == nil,
                let victim = cache.settings.keys.first
            {
                cache.settings[victim] = nil
            }
            cache.settings[className] = settings
        }
        return settings
    }

    /// The settings of a class none were saved for: ``ClassSettings/init(className:)``, except that
    /// the `create` permission of ``RoleService/permissionClass`` (who may create roles) allows
    /// nobody but the admin key.
    static func defaults(of className: String) -> ClassSettings {
        var settings = ClassSettings(className: className)
        if className == RoleService.permissionClass { settings.permissions.create = .nobody }
        return settings
    }

    /// A class's permissions.
    func permissions(of className: String) async throws -> ClassPermissions {
        try await settings(of: className).permissions
    }

    /// Saves new settings.
    func save(_ settings: ClassSettings) async throws {
        try await persist(settings)
        // Not cached from here: a concurrent save may have reached the storage after this one.
        // The next read loads what the storage holds.
        forget(settings.className)
        await cluster?.send(.classChanged(className: settings.className))
    }

    /// Changes a class's settings with the members a body gives (the others keep their values),
    /// as `PUT /v1/classes/{className}` and the dashboard do.
    /// - Returns: The settings as saved.
    /// - Throws: `illegalArgument` for a body naming another class, a merge rule for an invalid
    ///   field name or indexes that ``ClassSettings/validateIndexes(_:)`` refuses; storage errors.
    @discardableResult
    func change(_ className: String, with body: ClassSettingsChange) async throws -> ClassSettings {
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
        if let indexes = body.indexes {
            try ClassSettings.validateIndexes(indexes)
            settings.indexes = indexes
        }
        try await save(settings)
        return settings
    }

    /// Drops a class's cached settings (changed by another server process).
    func forget(_ className: String) {
        cache.withLock { cache in
            cache.generation &+= 1
            cache.settings[className] = nil
        }
    }

    /// Drops every cached class.
    func forgetAll() {
        cache.withLock { cache in
            cache.generation &+= 1
            cache.settings.removeAll()
        }
    }
}
