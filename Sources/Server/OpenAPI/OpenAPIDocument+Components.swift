import HTTPTypes
import RooftopShared

/// The reusable parts of the document other than schemas: error responses, parameters, headers
/// and security schemes.
extension OpenAPIDocument {
    static var responses: OpenAPIJSON {
        .members(
            OpenAPIOperation.Failure.allCases.map { failure in
                let codes = serverErrorCodes.filter { RooftopError($0, "").httpStatus.code == failure.status }
                    .map { "`\($0.rawValue)`" }.joined(separator: ", ")
                var headers: [(String, OpenAPIJSON)] = [("X-Request-Id", ["$ref": "#/components/headers/RequestId"])]
                switch failure {
                case .unauthorized:
                    headers.append(("WWW-Authenticate", ["$ref": "#/components/headers/WWWAuthenticate"]))
                case .tooManyRequests:
                    headers.append(("Retry-After", ["$ref": "#/components/headers/RetryAfter"]))
                default:
                    break
                }
                let response: OpenAPIJSON = [
                    "description": .string("\(failureSummary(failure)) Codes: \(codes)."),
                    "headers": .members(headers),
                    "content": ["application/json": ["schema": OpenAPISchema.ref("Error")]],
                ]
                return (failure.rawValue, response)
            })
    }

    private static func failureSummary(_ failure: OpenAPIOperation.Failure) -> String {
        switch failure {
        case .badRequest:
            "The request is invalid: malformed JSON or a missing, mistyped or unknown member (`request`, naming the member), or an argument, value type, list index, query or operation the server refuses."
        case .unauthorized:
            "The `X-Rooftop-Application-Id` header is missing or wrong, the session token is invalid, revoked or expired, the admin key is wrong, the credentials at log-in are wrong, or the operation needs a signed-in user."
        case .forbidden:
            "The caller may not do this: class permissions, an object ACL, the datastore role, or the admin key is required."
        case .notFound:
            "The datastore, object, role or endpoint does not exist, or the caller may not know it exists."
        case .conflict:
            "It already exists (a user name, a role)."
        case .contentTooLarge:
            "The request body, a push or an object is over the server's limits (see `GET /v1/info`)."
        case .tooManyRequests:
            "Too many attempts (log-in throttling): wait `Retry-After` seconds."
        case .internalError:
            "The server failed; the details are logged under the request ID, not sent."
        }
    }

    static var parameters: OpenAPIJSON {
        typealias S = OpenAPISchema
        return [
            "Datastore": [
                "name": "datastore", "in": "path", "required": true,
                "description": "A datastore ID; the app datastore is written as is (`/v1/datastores/:app/...`). Writes, queries and pulls open a private datastore (or `:app`) that does not exist yet; shareable ones must be created first.",
                "schema": S.ref("DatastoreID"),
            ],
            "ClassName": [
                "name": "className", "in": "path", "required": true, "description": "A class name.",
                "schema": S.ref("Identifier"),
            ],
            "ObjectId": [
                "name": "objectId", "in": "path", "required": true, "description": "An object ID.",
                "schema": S.ref("Identifier"),
            ],
            "RoleName": [
                "name": "name", "in": "path", "required": true, "description": "A role name.",
                "schema": S.string("A role name.", pattern: unreservedIdentifierPattern),
            ],
            "Include": [
                "name": "include", "in": "query", "required": false,
                "description": "Pointer paths whose targets to return in `included`: comma-separated, each path a dot-separated list of pointer fields.",
                "schema": S.string("For example `author,author.company`.", examples: ["author,author.company"]),
            ],
            "After": [
                "name": "after", "in": "query", "required": false,
                "description": "Only changes that produced a version after this one (default 0: all kept).",
                "schema": S.integer("A version.", minimum: 0).setting("default", 0),
            ],
        ]
    }

    static var headers: OpenAPIJSON {
        [
            "RequestId": [
                "description": "The request's ID, also in every server log line about it.",
                "schema": ["type": "string"],
            ],
            "WWWAuthenticate": [
                "description": "`Rooftop-Session`: authenticate with a session token.",
                "schema": ["type": "string", "const": "Rooftop-Session"],
            ],
            "RetryAfter": [
                "description": "Seconds to wait before trying again.",
                "schema": ["type": "integer", "minimum": 0],
            ],
        ]
    }

    static var securitySchemes: OpenAPIJSON {
        [
            "applicationId": [
                "type": "apiKey", "in": "header", "name": .string(RooftopHeader.applicationId.rawName),
                "description": "The application ID the server is configured with. Required on every `/v1` request; a wrong or missing one is `401 auth`.",
            ],
            "sessionToken": [
                "type": "apiKey", "in": "header", "name": .string(RooftopHeader.sessionToken.rawName),
                "description": "A session token from `POST /v1/users` or `POST /v1/login`. Without one (and without the admin key) the caller is anonymous.",
            ],
            "bearerSession": [
                "type": "http", "scheme": "bearer",
                "description": "The session token as `Authorization: Bearer <token>`, read when `X-Rooftop-Session-Token` is absent.",
            ],
            "adminKey": [
                "type": "apiKey", "in": "header", "name": .string(RooftopHeader.adminKey.rawName),
                "description": "The admin (master) key: passes every permission and ACL check. When present, any session token is ignored for authorization.",
            ],
        ]
    }
}
