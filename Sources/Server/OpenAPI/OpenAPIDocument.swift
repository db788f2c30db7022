import RooftopShared

/// The OpenAPI 3.1 description of the server's HTTP API, served at `GET /openapi.json`.
///
/// Built in Swift from the same constants the code uses (header names, limits, error statuses,
/// merge rules), serialized once and cached. The tests keep it true to the code: every route the
/// router registers is documented and every documented operation exists, the document passes
/// `openapi-spec-validator`, and JSON encoded by the wire types validates against the component
/// schemas.
///
/// ```swift
/// router.get("openapi.json") { _, _ in
///     Response(status: .ok, headers: [.contentType: "application/json"],
///              body: .init(byteBuffer: ByteBuffer(bytes: OpenAPIDocument.json)))
/// }
/// ```
enum OpenAPIDocument {
    /// The document as UTF-8 JSON, built on first use.
    static let json: [UInt8] = document.serialized()

    /// The document.
    static var document: OpenAPIJSON {
        [
            "openapi": "3.1.0",
            "info": info,
            "tags": tags,
            "paths": paths,
            "components": [
                "schemas": .members(valueSchemas + objectSchemas + querySchemas + syncSchemas + securitySchemas + accountSchemas),
                "responses": responses,
                "parameters": parameters,
                "headers": headers,
                "securitySchemes": securitySchemes,
            ],
        ]
    }

    /// Every operation, in document order.
    static var operations: [OpenAPIOperation] {
        operationalOperations + accountOperations + datastoreOperations + objectOperations + syncOperations
    }

    private static var info: OpenAPIJSON {
        [
            "title": "Rooftop",
            "version": .string(RooftopServerInfo.version),
            "summary": "The Rooftop reference server: offline-first objects, sync and live notifications.",
            "description": """
                Objects live in datastores (`:app`, private per-user IDs, shareable `.`-prefixed IDs). \
                Clients change them with field operations, pushed as idempotent mutations (`POST /v1/push`) \
                or sent one at a time over REST, and follow changes by pulling the change feed \
                (`POST /v1/pull`) when the live WebSocket (`GET /v1/live`) says something changed.

                Every `/v1` request carries `X-Rooftop-Application-Id`. Callers are anonymous, signed in \
                (`X-Rooftop-Session-Token` or `Authorization: Bearer`) or admin (`X-Rooftop-Admin-Key`). \
                Errors are JSON bodies `{"code", "message", "field"?, "position"?}` (see the `Error` \
                schema for the status of each code), and every response carries `X-Request-Id`.

                Values use a portable JSON form (see `Value`): doubles, dates, bytes, decimals, points, \
                days, JSON, pointers and relations are objects with one `$` tag. Request members not \
                in a schema are ignored, except in queries and predicates, where they are refused.
                """,
        ]
    }

    private static var tags: OpenAPIJSON {
        [
            ["name": "Operations", "description": "Health, metrics and this document; no credentials."],
            ["name": "Accounts", "description": "Sign-up, log-in, sessions and roles."],
            ["name": "Classes", "description": "Class permissions and merge rules."],
            ["name": "Datastores", "description": "Listing, opening, creating, sharing and deleting datastores."],
            ["name": "Objects", "description": "Objects over REST: writes, reads, queries."],
            ["name": "Sync", "description": "Push, pull and live notifications."],
        ]
    }

    /// The paths object: operations grouped by path, in the order first seen.
    private static var paths: OpenAPIJSON {
        var order: [String] = []
        var byPath: [String: [(String, OpenAPIJSON)]] = [:]
        for operation in operations + [liveOperation] {
            if byPath[operation.path] == nil { order.append(operation.path) }
            byPath[operation.path, default: []].append((operation.method, operation.json))
        }
        return .members(order.map { path in (path, .members(byPath[path] ?? [])) })
    }
}
