import Hummingbird
import RooftopShared

/// Objects over REST: create, get (with includes), update with field operations, delete; queries,
/// counts and removal by query; an object's committed operations since a version.
///
/// Paths: `/v1/datastores/{datastore}/classes/{className}/objects[/{objectId}]` and
/// `/v1/datastores/{datastore}/query|count|remove`.
struct ObjectRoutes {
    let services: ServerServices

    func register(on api: APIRoutes) {
        let services = self.services
        let limits = services.limits
        api.on(raw: API.createObject) { request, context in
            let body = try await RequestBody.decode(ObjectWriteBody.self, from: request, limits: limits) {
                try $0.readObjectWriteBody()
            }
            let mutation = Mutation(
                datastore: try context.datastoreID(), className: try context.parameter("className"),
                objectId: body.objectId ?? ObjectID.generate(), baseVersion: nil,
                change: .update(body.updates(), acl: body.acl))
            return try ObjectRoutes.respond(
                try await services.objects.write(mutation, context: context.access, idempotent: false, createOnly: true),
                objectId: mutation.objectId, status: APIRoutes.status(API.createObject.operation))
        }
        api.on(raw: API.getObject) { request, context in
            let includes = (request.uri.queryParameters.get("include") ?? "")
                .split(separator: ",").map { $0.split(separator: ".", omittingEmptySubsequences: false).map(String.init) }
            try Query.validateIncludes(includes, maxDepth: limits.maxNestingDepth)
            let found = try await services.objects.get(
                datastore: try context.datastoreID(), className: try context.parameter("className"),
                objectId: try context.parameter("objectId"), includes: includes, context: context.access)
            var writer = DocumentWriter()
            try writer.objectWithIncludes(ObjectWithIncludes(object: found.object, included: found.included))
            return JSONBody.response(writer)
        }
        api.on(raw: API.updateObject) { request, context in
            let body = try await RequestBody.decode(ObjectWriteBody.self, from: request, limits: limits) {
                try $0.readObjectWriteBody()
            }
            let objectId = try context.parameter("objectId")
            // An update names its object in the path; a different ID in the body is a mistake.
            if let named = body.objectId, named != objectId {
                throw RooftopError(
                    .illegalArgument, "the body names object '\(named.prefix(80))' but the path '\(objectId.prefix(80))'",
                    field: "objectId")
            }
            let mutation = Mutation(
                datastore: try context.datastoreID(), className: try context.parameter("className"),
                objectId: objectId, baseVersion: body.baseVersion,
                change: .update(body.updates(), acl: body.acl))
            return try ObjectRoutes.respond(
                try await services.objects.write(mutation, context: context.access, idempotent: false, mustExist: true),
                objectId: objectId, status: APIRoutes.status(API.updateObject.operation))
        }
        api.on(API.deleteObject) { _, context in
            let mutation = Mutation(
                datastore: try context.datastoreID(), className: try context.parameter("className"),
                objectId: try context.parameter("objectId"), baseVersion: nil, change: .delete)
            let result = try await services.objects.write(
                mutation, context: context.access, idempotent: false, mustExist: true)
            if let error = result.error { throw error }
            return NoBody()
        }
        api.on(API.listObjectOperations) { request, context in
            let after = Int64(request.uri.queryParameters.get("after") ?? "0") ?? -1
            guard after >= 0 else { throw RooftopError(.request, "'after' must be a version number") }
            let records = try await services.objects.operations(
                datastore: try context.datastoreID(), className: try context.parameter("className"),
                objectId: try context.parameter("objectId"), after: after, context: context.access)
            return OperationList(operations: records)
        }

        api.on(raw: API.queryObjects) { request, context in
            let body = try await RequestBody.decode(QueryRequest.self, from: request, limits: limits)
            var writer = DocumentWriter(capacity: 64 << 10)
            try writer.queryAnswer(
                try await services.queries.find(body, in: try context.datastoreID(), context: context.access))
            return JSONBody.response(writer)
        }
        api.on(API.countObjects) { body, _, context in
            CountResponse(count: try await services.queries.count(body, in: try context.datastoreID(), context: context.access))
        }
        api.on(API.removeObjects) { body, _, context in
            if let limit = body.limit, limit < 0 { throw RooftopError(.illegalArgument, "'limit' must not be negative") }
            let removed = try await services.queries.remove(
                body.query, in: try context.datastoreID(), limit: body.limit, context: context.access)
            return RemoveResponse(removed: removed)
        }
    }

    static func respond(_ result: MutationResult, objectId: String, status: HTTPResponse.Status) throws -> Response {
        switch result {
        case .rejected(_, let error):
            throw error
        case .applied(_, let version, let object, let merges):
            var writer = DocumentWriter()
            try writer.writeResponse(WriteResponse(objectId: objectId, version: version, object: object, merges: merges))
            return JSONBody.response(writer, status: status)
        }
    }
}
