import RooftopShared
import Synchronization

/// The role graph, cached in memory and reloaded after every role change made through this
/// process, so that access decisions see membership changes immediately.
///
/// The cache is versioned: every ``invalidate()`` bumps a generation, and a graph whose load began
/// under an older generation is never stored (it may predate the change, e.g. a revocation, and
/// would put the revoked membership back in force). It is loaded again instead.
///
/// The graph and its generation are kept under a lock (it was an actor): every authenticated
/// request asks for its user's roles, and reads them without waiting for an actor (a hop onto one
/// made the request wait for a thread, and kept a request's handler from running to its end on
/// the thread it started on: ``RequestDeadlineMiddleware``).
final class RoleDirectory: Sendable {
    /// How many times a load overtaken by an invalidation is repeated before its caller gets the
    /// last graph loaded (uncached): invalidations are rare, so one repeat nearly always does.
    static let maxLoads = 4

    private let load: @Sendable () async throws -> RoleGraph
    private struct Cache {
        var graph: RoleGraph?
        /// Bumped by every invalidation.
        var generation: UInt64 = 0
    }
    private let cache = Mutex(Cache())

    convenience init(storage: any RoleStorage) {
        self.init { try await storage.roleGraph() }
    }

    /// A directory loading the graph with `load` (tests hold a load back with it).
    init(load: @escaping @Sendable () async throws -> RoleGraph) {
        self.load = load
    }

    /// The current graph: loaded after the last invalidation this directory saw began.
    func graph() async throws -> RoleGraph {
        if let cached = cache.withLock({ $0.graph }) { return cached }
        var loaded: RoleGraph?
        for _ in 0..<Self.maxLoads {
            let started = cache.withLock { $0.generation }
            let graph = try await load()
            loaded = graph
            // Only a load that no invalidation overtook may be kept.
            let kept = cache.withLock { cache -> RoleGraph? in
                if cache.generation == started {
                    cache.graph = graph
                    return graph
                }
                return cache.graph
            }
            if let kept { return kept }
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
        cache.withLock { cache in
            cache.generation &+= 1
            cache.graph = nil
        }
    }
}
