import RooftopShared

/// The role graph, cached in memory and reloaded after every role change made through this
/// process, so that access decisions see membership changes immediately.
actor RoleDirectory {
    private let storage: any Storage
    private var cached: RoleGraph?

    init(storage: any Storage) {
        self.storage = storage
    }

    /// The current graph.
    func graph() async throws -> RoleGraph {
        if let cached { return cached }
        let graph = try await storage.roleGraph()
        cached = graph
        return graph
    }

    /// A user's effective (transitive) roles.
    func effectiveRoles(ofUser userId: String) async throws -> Set<String> {
        try await graph().effectiveRoles(ofUser: userId)
    }

    /// Drops the cache; call after any change to roles.
    func invalidate() {
        cached = nil
    }
}
