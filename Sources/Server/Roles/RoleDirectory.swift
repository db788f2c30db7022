import RooftopShared

/// The role graph, cached in memory and reloaded after every role change made through this
/// process, so that access decisions see membership changes immediately.
///
/// The cache is versioned: every ``invalidate()`` bumps a generation, and a graph whose load began
/// under an older generation is never stored (it may predate the change, e.g. a revocation, and
/// would put the revoked membership back in force). It is loaded again instead.
actor RoleDirectory {
    /// How many times a load overtaken by an invalidation is repeated before its caller gets the
    /// last graph loaded (uncached): invalidations are rare, so one repeat nearly always does.
    static let maxLoads = 4

    private let load: @Sendable () async throws -> RoleGraph
    private var cached: RoleGraph?
    /// Bumped by every invalidation.
    private var generation: UInt64 = 0

    init(storage: any RoleStorage) {
        self.init { try await storage.roleGraph() }
    }

    /// A directory loading the graph with `load` (tests hold a load back with it).
    init(load: @escaping @Sendable () async throws -> RoleGraph) {
        self.load = load
    }

    /// The current graph: loaded after the last invalidation this directory saw began.
    func graph() async throws -> RoleGraph {
        if let cached { return cached }
        var loaded: RoleGraph?
        for _ in 0..<Self.maxLoads {
            let started = generation
            let graph = try await load()
            loaded = graph
            // Only a load that no invalidation overtook may be kept.
            if generation == started {
                cached = graph
                return graph
            }
            if let cached { return cached }
        }
        guard let loaded else { throw RooftopError(.internal, "the role graph was not loaded") }
        return loaded
    }

    /// A user's effective (transitive) roles.
    func effectiveRoles(ofUser userId: String) async throws -> Set<String> {
        try await graph().effectiveRoles(ofUser: userId)
    }

    /// Drops the cache, and keeps loads already under way from storing what they read; call after
    /// any change to roles.
    func invalidate() {
        generation &+= 1
        cached = nil
    }
}
