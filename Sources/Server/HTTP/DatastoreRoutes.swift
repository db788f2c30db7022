import Hummingbird
import RooftopShared

/// Listing, creating, opening, sharing and deleting datastores.
struct DatastoreRoutes {
    let services: ServerServices

    func register(on api: RouterGroup<RooftopRequestContext>) {
        let services = self.services
        let limits = services.limits
        api.get("datastores") { _, context in
            try JSONBody.response(DatastoreList(datastores: try await services.datastores.list(for: context.access)))
        }
        api.post("datastores") { request, context in
            let body = try await RequestBody.decode(CreateDatastoreRequest.self, from: request, limits: limits)
            try body.validate()
            return try JSONBody.response(
                try await services.datastores.createShareable(title: body.title, for: context.access), status: .created)
        }
        api.put("datastores/:datastore") { _, context in
            let id = try context.datastoreID()
            let resolved = try await services.datastores.resolve(id, for: context.access, create: true)
            return try JSONBody.response(services.datastores.info(resolved.record, role: resolved.role))
        }
        api.get("datastores/:datastore") { _, context in
            let resolved = try await services.datastores.resolve(try context.datastoreID(), for: context.access, create: false)
            return try JSONBody.response(services.datastores.info(resolved.record, role: resolved.role))
        }
        api.delete("datastores/:datastore") { _, context in
            try await services.datastores.delete(try context.datastoreID(), by: context.access)
            return Response(status: .noContent)
        }
        api.get("datastores/:datastore/roles") { _, context in
            let resolved = try await services.datastores.resolve(try context.datastoreID(), for: context.access, create: false)
            guard let sharing = resolved.record.sharing else {
                throw RooftopError(.badState, "the datastore has an inconsistent sharing state")
            }
            return try JSONBody.response(sharing)
        }
        api.put("datastores/:datastore/roles") { request, context in
            let body = try await RequestBody.decode(SetRoleRequest.self, from: request, limits: limits)
            return try JSONBody.response(
                try await services.datastores.setRole(
                    body.role, for: body.principal, on: try context.datastoreID(), by: context.access))
        }
    }
}


extension RooftopRequestContext {
    /// The `:datastore` path parameter, validated.
    func datastoreID() throws(RooftopError) -> DatastoreID {
        try DatastoreID(try parameter("datastore"))
    }
}
