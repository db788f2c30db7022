/// One operation of the OpenAPI document: a method on a path, who may call it, what it reads and
/// what it answers. ``json`` renders the OpenAPI operation object.
///
/// ```swift
/// OpenAPIOperation(
///     "get", "/v1/users/me", id: "getCurrentUser", tag: "Accounts", summary: "The signed-in user",
///     description: "...", access: .signedIn,
///     success: .init(200, "The user.", schema: "UserInfo"), failures: [.unauthorized])
/// ```
struct OpenAPIOperation: Sendable {
    /// Which credentials an operation takes (the `security` requirement it gets).
    enum Access: Sendable {
        /// No credentials (`/health`, `/metrics`, `/openapi.json`).
        case open
        /// The application ID, and optionally a session (header or bearer) or the admin key.
        case anyCaller
        /// The application ID and a session token (header or bearer).
        case signedIn
        /// The application ID and the admin key.
        case admin
        /// The WebSocket upgrade: the application ID, optionally the session token header.
        case live
    }

    /// An error status an operation can answer with; each names a component response.
    enum Failure: String, Sendable, CaseIterable {
        // Raw values are the component response names.
        case badRequest = "BadRequest"
        case unauthorized = "Unauthorized"
        case forbidden = "Forbidden"
        case notFound = "NotFound"
        case conflict = "Conflict"
        case contentTooLarge = "ContentTooLarge"
        case tooManyRequests = "TooManyRequests"
        case internalError = "InternalError"

        /// The HTTP status code.
        var status: Int {
            switch self {
            case .badRequest: 400
            case .unauthorized: 401
            case .forbidden: 403
            case .notFound: 404
            case .conflict: 409
            case .contentTooLarge: 413
            case .tooManyRequests: 429
            case .internalError: 500
            }
        }
    }

    /// The successful answer.
    struct Success: Sendable {
        /// The status code.
        var status: Int
        /// What it means.
        var description: String
        /// The component schema of the JSON body; `nil` for no body (or a non-JSON one).
        var schema: String?
        /// The media type and schema of a non-JSON body.
        var content: (type: String, schema: OpenAPIJSON)?

        /// A success with a JSON body of `schema`, or no body.
        init(_ status: Int, _ description: String, schema: String? = nil) {
            self.status = status
            self.description = description
            self.schema = schema
        }

        /// A success with a body of another media type.
        init(_ status: Int, _ description: String, contentType: String, schema: OpenAPIJSON) {
            self.status = status
            self.description = description
            self.content = (contentType, schema)
        }
    }

    /// The HTTP method, lowercased as OpenAPI writes it.
    var method: String
    /// The path template.
    var path: String
    /// The `operationId`.
    var id: String
    /// The tag grouping it.
    var tag: String
    /// A short summary.
    var summary: String
    /// What it does, in Markdown.
    var description: String
    /// Which credentials it takes.
    var access: Access
    /// Names of component parameters.
    var parameters: [String] = []
    /// The component schema of the JSON request body, and what it is.
    var body: (schema: String, description: String)?
    /// The successful answer.
    var success: Success
    /// The error statuses it can answer with.
    var failures: [Failure]

    /// Creates an operation; `path` is an OpenAPI template (`/v1/roles/{name}`).
    init(
        _ method: String, _ path: String, id: String, tag: String, summary: String, description: String,
        access: Access, parameters: [String] = [], body: (schema: String, description: String)? = nil,
        success: Success, failures: [Failure]
    ) {
        self.method = method
        self.path = path
        self.id = id
        self.tag = tag
        self.summary = summary
        self.description = description
        self.access = access
        self.parameters = parameters
        self.body = body
        self.success = success
        self.failures = failures
    }

    /// The OpenAPI operation object.
    var json: OpenAPIJSON {
        var pairs: [(String, OpenAPIJSON)] = [
            ("operationId", .string(id)), ("tags", [.string(tag)]), ("summary", .string(summary)),
            ("description", .string(description)), ("security", security),
        ]
        if !parameters.isEmpty {
            pairs.append(("parameters", .array(parameters.map { ["$ref": .string("#/components/parameters/\($0)")] })))
        }
        if let body {
            pairs.append(
                (
                    "requestBody",
                    [
                        "required": true, "description": .string(body.description),
                        "content": ["application/json": ["schema": OpenAPISchema.ref(body.schema)]],
                    ]
                ))
        }
        var responses: [(String, OpenAPIJSON)] = [(String(success.status), successResponse)]
        for failure in failures.sorted(by: { $0.status < $1.status }) {
            responses.append((String(failure.status), ["$ref": .string("#/components/responses/\(failure.rawValue)")]))
        }
        pairs.append(("responses", .members(responses)))
        // Not a router route: served by the WebSocket upgrade handler (tests tell them apart by this).
        if access == .live { pairs.append(("x-rooftop-websocket", true)) }
        return .members(pairs)
    }

    private var successResponse: OpenAPIJSON {
        var pairs: [(String, OpenAPIJSON)] = [("description", .string(success.description))]
        // The upgrade answer bypasses the router, so it carries no request ID.
        if access != .live {
            pairs.append(("headers", ["X-Request-Id": ["$ref": "#/components/headers/RequestId"]]))
        }
        if let schema = success.schema {
            pairs.append(("content", ["application/json": ["schema": OpenAPISchema.ref(schema)]]))
        } else if let content = success.content {
            let media: OpenAPIJSON = ["schema": content.schema]
            pairs.append(("content", .members([(content.type, media)])))
        }
        return .members(pairs)
    }

    private var security: OpenAPIJSON {
        switch access {
        case .open:
            return []
        case .anyCaller:
            return [
                ["applicationId": []], ["applicationId": [], "sessionToken": []],
                ["applicationId": [], "bearerSession": []], ["applicationId": [], "adminKey": []],
            ]
        case .signedIn:
            return [["applicationId": [], "sessionToken": []], ["applicationId": [], "bearerSession": []]]
        case .admin:
            return [["applicationId": [], "adminKey": []]]
        case .live:
            return [["applicationId": []], ["applicationId": [], "sessionToken": []]]
        }
    }
}
