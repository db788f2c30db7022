import Hummingbird
import RooftopShared

/// Objects over REST: create, get (with includes), update with field operations, delete; queries,
/// counts and removal by query; an object's committed operations since a version.
///
/// Paths: `/v1/datastores/{datastore}/classes/{className}/objects[/{objectId}]` and
/// `/v1/datastores/{datastore}/query|count|remove`.
struct ObjectRoutes {
    let services: ServerServices

    func register(on api: RouterGroup<RooftopRequestContext>) {
        let services = self.services
        let limits = services.limits
        let objects = api.group("datastores/:datastore/classes/:className/objects")

        objects.post { request, context in
            let body = try await RequestBody.decode(ObjectWriteBody.self, from: request, limits: limits)
            let mutation = Mutation(
                datastore: try context.datastoreID(), className: try context.parameter("className"),
                objectId: body.objectId ?? ObjectID.generate(), baseVersion: nil,
                change: .update(body.updates(), acl: body.acl))
            return try ObjectRoutes.respond(
                try await services.objects.write(mutation, context: context.access, idempotent: false, createOnly: true),
                objectId: mutation.objectId, status: .created)
        }
        objects.get(":objectId") { request, context in
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
        objects.patch(":objectId") { request, context in
            let body = try await RequestBody.decode(ObjectWriteBody.self, from: request, limits: limits)
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
                objectId: objectId, status: .ok)
        }
        objects.delete(":objectId") { _, context in
            let mutation = Mutation(
                datastore: try context.datastoreID(), className: try context.parameter("className"),
                objectId: try context.parameter("objectId"), baseVersion: nil, change: .delete)
            let result = try await services.objects.write(
                mutation, context: context.access, idempotent: false, mustExist: true)
            if let error = result.error { throw error }
            return Response(status: .noContent)
        }
        objects.get(":objectId/operations") { request, context in
            let after = Int64(request.uri.queryParameters.get("after") ?? "0") ?? -1
            guard after >= 0 else { throw RooftopError(.request, "'after' must be a version number") }
            let records = try await services.objects.operations(
                datastore: try context.datastoreID(), className: try context.parameter("className"),
                objectId: try context.parameter("objectId"), after: after, context: context.access)
            return try JSONBody.response(OperationList(operations: records))
        }

        let datastore = api.group("datastores/:datastore")
        datastore.post("query") { request, context in
            let body = try await RequestBody.decode(QueryRequest.self, from: request, limits: limits)
            var writer = DocumentWriter(capacity: 64 << 10)
            try writer.queryResult(
                try await services.queries.find(body, in: try context.datastoreID(), context: context.access))
            return JSONBody.response(writer)
        }
        datastore.post("count") { request, context in
            let body = try await RequestBody.decode(QueryRequest.self, from: request, limits: limits)
            let count = try await services.queries.count(body, in: try context.datastoreID(), context: context.access)
            return try JSONBody.response(CountResponse(count: count))
        }
        datastore.post("remove") { request, context in
            let body = try await RequestBody.decode(RemoveRequest.self, from: request, limits: limits)
            if let limit = body.limit, limit < 0 { throw RooftopError(.illegalArgument, "'limit' must not be negative") }
            let removed = try await services.queries.remove(
                body.query, in: try context.datastoreID(), limit: body.limit, context: context.access)
            return try JSONBody.response(RemoveResponse(removed: removed))
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
