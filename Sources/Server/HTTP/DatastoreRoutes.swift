import Hummingbird
import RooftopShared

/// Listing, creating, opening, sharing and deleting datastores.
struct DatastoreRoutes {
    let services: ServerServices

    func register(on api: APIRoutes) {
        let datastores = services.datastores
        api.on(API.listDatastores) { _, context in DatastoreList(datastores: try await datastores.list(for: context.access)) }
        api.on(API.createDatastore) { body, _, context in
            try body.validate()
            return try await datastores.createShareable(title: body.title, for: context.access)
        }
        api.on(API.openDatastore) { _, context in
            let resolved = try await datastores.resolve(try context.datastoreID(), for: context.access, create: true)
            return datastores.info(resolved.record, role: resolved.role)
        }
        api.on(API.getDatastore) { _, context in
            let resolved = try await datastores.resolve(try context.datastoreID(), for: context.access, create: false)
            return datastores.info(resolved.record, role: resolved.role)
        }
        api.on(API.deleteDatastore) { _, context in
            try await datastores.delete(try context.datastoreID(), by: context.access)
            return NoBody()
        }
        api.on(API.getDatastoreSharing) { _, context in
            let resolved = try await datastores.resolve(try context.datastoreID(), for: context.access, create: false)
            guard let sharing = resolved.record.sharing else {
                throw RooftopError(.badState, "the datastore has an inconsistent sharing state")
            }
            return sharing
        }
        api.on(API.setDatastoreRole) { body, _, context in
            try await datastores.setRole(body.role, for: body.principal, on: try context.datastoreID(), by: context.access)
        }
    }
}

extension RooftopRequestContext {
    /// The `:datastore` path parameter, validated.
    func datastoreID() throws(RooftopError) -> DatastoreID {
        try DatastoreID(try parameter("datastore"))
    }
}
