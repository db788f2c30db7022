import Foundation

/// One operation of the HTTP API, typed by what it takes and what it answers: the one statement of
/// the contract that the server's routes, the client library, the admin CLI, the benchmark and
/// the tests use, and that the server's OpenAPI document is generated from (``API``).
///
/// `Body` is the request body's wire type (``NoBody`` when the request has none); `Answer` the
/// successful answer's (``NoBody`` for `204 No Content`).
///
/// ```swift
/// let path = API.getRole.path("editors")           // "/v1/roles/editors"
/// API.getRole.operation.method                     // .get
/// ```
public struct APIEndpoint<Body: Sendable, Answer: Sendable>: Sendable {
    /// What the endpoint is, as the OpenAPI document states it.
    public let operation: APIOperation

    /// An endpoint; its request and answer schemas are named after `Body` and `Answer`.
    ///
    /// - Parameters:
    ///   - method: The HTTP method.
    ///   - path: The path template, parameters in braces (`/v1/roles/{name}`).
    ///   - id: The OpenAPI `operationId`.
    ///   - tag: The group the document lists it under.
    ///   - access: Who may call it.
    ///   - summary: A one-line summary.
    ///   - details: What it does, its rules and its refusals (Markdown).
    ///   - parameters: The document's shared parameters it takes, by component name (its path
    ///     parameters first, then its query parameters).
    ///   - body: What the request body holds (`nil` when `Body` is ``NoBody``).
    ///   - status: The status of a successful answer.
    ///   - answer: What a successful answer means.
    ///   - content: The answer's content; by default the JSON schema named after `Answer`, none
    ///     for ``NoBody``.
    ///   - errors: The error answers it may give, besides `405` for another method.
    ///   - webSocket: Whether the operation is a WebSocket upgrade.
    public init(
        _ method: APIOperation.Method, _ path: String, id: String, tag: APIOperation.Tag, access: APIOperation.Access,
        summary: String, details: String, parameters: [String] = [], body: String? = nil, status: Int = 200,
        answer: String, content: APIOperation.Content? = nil, errors: [APIOperation.ErrorAnswer], webSocket: Bool = false
    ) {
        let request = Body.self == NoBody.self ? nil : APIOperation.RequestBody(
            schema: APIOperation.schemaName(of: Body.self), description: body ?? "")
        let answered = content ?? (Answer.self == NoBody.self ? .none : .json(schema: APIOperation.schemaName(of: Answer.self)))
        operation = APIOperation(
            id: id, method: method, path: path, tag: tag, access: access, summary: summary, details: details,
            parameters: parameters, body: request, status: status, answer: answer, content: answered,
            errors: errors.sorted { $0.rawValue < $1.rawValue }, webSocket: webSocket)
    }

    /// The request path with `arguments` in place of the template's parameters, in order, each
    /// percent-encoded as one path segment (IDs may hold `/`, `+`, `=`; ``APIOperation/escape(_:)``).
    ///
    /// Give exactly as many arguments as the template has parameters (none for a path without):
    /// anything else is a programming error and stops the program. An empty argument makes an
    /// empty segment, which the server's router skips: callers pass identifiers they have
    /// checked (``Identifier``), which are never empty.
    public func path(_ arguments: String...) -> String {
        operation.path(arguments)
    }

    /// Where a request to this endpoint goes: `path` as built by ``path(_:)`` (a query may
    /// follow), or the endpoint's own path when it has no parameters (`path` `nil`).
    /// - Throws: `illegalArgument` when the path has an empty segment
    ///   (``APIOperation/hasEmptySegment(_:)``): an empty name or ID, which the server's router
    ///   would skip, reading the path as another route's. Nothing should be sent then.
    public func requestPath(_ path: String? = nil) throws(RooftopError) -> String {
        let path = path ?? self.path()
        guard !APIOperation.hasEmptySegment(path) else {
            throw RooftopError(.illegalArgument, "\(operation) needs a non-empty name or ID (\(path))")
        }
        return path
    }
}

/// The body of a request that has none, or of a `204 No Content` answer.
public struct NoBody: Codable, Sendable, Hashable {
    /// Nothing.
    public init() {}
}

/// An operation of the HTTP API with what its OpenAPI document says of it (``APIEndpoint``
/// without its types): path, method, who may call it, parameters, request body, answers.
public struct APIOperation: Sendable, Hashable, CustomStringConvertible {
    /// The HTTP methods the API uses.
    public enum Method: String, Sendable, Hashable, CaseIterable {
        case get = "GET"
        case put = "PUT"
        case post = "POST"
        case patch = "PATCH"
        case delete = "DELETE"
    }

    /// The groups the document lists operations under.
    public enum Tag: String, Sendable, Hashable, CaseIterable {
        case operations = "Operations"
        case accounts = "Accounts"
        case classes = "Classes"
        case datastores = "Datastores"
        case objects = "Objects"
        case sync = "Sync"

        /// What the group holds, as the document describes it.
        public var summary: String {
            switch self {
            case .operations: "Health, metrics and this document (no credentials); the server's limits."
            case .accounts: "Sign-up, log-in, sessions and roles."
            case .classes: "Class permissions, merge rules and declared indexes."
            case .datastores: "Listing, opening, creating, sharing and deleting datastores."
            case .objects: "Objects over REST: writes, reads, queries."
            case .sync: "Push, pull and live notifications."
            }
        }
    }

    /// The credentials a request may carry: the document's security schemes.
    public enum Credential: String, Sendable, Hashable {
        case applicationId, sessionToken, bearerSession, adminKey
    }

    /// Who may call an operation: the sets of credentials, any one of which is enough (OpenAPI's
    /// security requirements).
    public struct Access: Sendable, Hashable {
        /// Each alternative's credentials; none at all for an operation open to anyone.
        public let alternatives: [[Credential]]

        /// An access rule from its alternatives.
        public init(_ alternatives: [[Credential]]) { self.alternatives = alternatives }

        /// No credentials at all (the operational endpoints).
        public static let anyone = Access([])
        /// The application ID, with or without a session or the admin key.
        public static let application = Access([
            [.applicationId], [.applicationId, .sessionToken], [.applicationId, .bearerSession],
            [.applicationId, .adminKey],
        ])
        /// A signed-in user (a session token, in its header or as a bearer token).
        public static let signedIn = Access([[.applicationId, .sessionToken], [.applicationId, .bearerSession]])
        /// The admin key.
        public static let admin = Access([[.applicationId, .adminKey]])
    }

    /// A request body: its schema and what it holds. Always required, always JSON.
    public struct RequestBody: Sendable, Hashable {
        /// The component schema it follows.
        public let schema: String
        /// What it holds.
        public let description: String
    }

    /// What a successful answer carries.
    public enum Content: Sendable, Hashable {
        /// Nothing (`204`, `101`).
        case none
        /// JSON following a component schema.
        case json(schema: String)
        /// Another media type, described in place (its schema's JSON type and description).
        case other(mediaType: String, type: String, description: String)
    }

    /// The error answers an operation may give, each a shared response of the document.
    public enum ErrorAnswer: Int, Sendable, Hashable, CaseIterable {
        case badRequest = 400
        case unauthorized = 401
        case forbidden = 403
        case notFound = 404
        case conflict = 409
        case gone = 410
        case contentTooLarge = 413
        case tooManyRequests = 429
        case internalError = 500
        case storageUnavailable = 503

        /// Its response's name in the document's components.
        public var component: String {
            switch self {
            case .badRequest: "BadRequest"
            case .unauthorized: "Unauthorized"
            case .forbidden: "Forbidden"
            case .notFound: "NotFound"
            case .conflict: "Conflict"
            case .gone: "Gone"
            case .contentTooLarge: "ContentTooLarge"
            case .tooManyRequests: "TooManyRequests"
            case .internalError: "InternalError"
            case .storageUnavailable: "StorageUnavailable"
            }
        }

        /// What every operation that reads storage may answer: throttled, failed, storage down.
        public static let always: [ErrorAnswer] = [.tooManyRequests, .internalError, .storageUnavailable]
    }

    /// The OpenAPI `operationId`.
    public let id: String
    /// The HTTP method.
    public let method: Method
    /// The path template, parameters in braces.
    public let path: String
    /// The group it is listed under.
    public let tag: Tag
    /// Who may call it.
    public let access: Access
    /// One line.
    public let summary: String
    /// What it does (Markdown).
    public let details: String
    /// The document's shared parameters it takes, by component name.
    public let parameters: [String]
    /// Its request body, if any.
    public let body: RequestBody?
    /// The status of a successful answer.
    public let status: Int
    /// What a successful answer means.
    public let answer: String
    /// What a successful answer carries.
    public let content: Content
    /// The error answers it may give, by status.
    public let errors: [ErrorAnswer]
    /// Whether it is a WebSocket upgrade.
    public let webSocket: Bool

    /// The method and path template, as in `POST /v1/push`.
    public var description: String { "\(method.rawValue) \(path)" }

    /// The names of the template's parameters, in order (`["datastore", "className"]`).
    public var pathParameters: [String] {
        path.split(separator: "/").compactMap { segment in
            segment.hasPrefix("{") && segment.hasSuffix("}") ? String(segment.dropFirst().dropLast()) : nil
        }
    }

    /// The path with `arguments` in place of its parameters, in order, each percent-encoded
    /// (``APIEndpoint/path(_:)``).
    public func path(_ arguments: [String]) -> String {
        precondition(
            arguments.count == pathParameters.count,
            "\(method.rawValue) \(path) takes \(pathParameters.count) path arguments, not \(arguments.count)")
        var remaining = arguments[...]
        return "/" + path.split(separator: "/").map { segment -> String in
            guard segment.hasPrefix("{"), segment.hasSuffix("}") else { return String(segment) }
            return APIOperation.escape(remaining.popFirst() ?? "")
        }.joined(separator: "/")
    }

    /// Whether a request path (its query aside) has an empty segment (`/v1/users//sessions`):
    /// what an empty name or ID makes, and what the server's router skips, reading the path as
    /// another route's. Clients refuse to send such a path.
    public static func hasEmptySegment(_ path: String) -> Bool {
        let route = path.prefix { $0 != "?" }
        return route.dropFirst().split(separator: "/", omittingEmptySubsequences: false).contains { $0.isEmpty }
    }

    /// Percent-encodes a path segment: ASCII letters, digits and `-._~:` stay, everything else
    /// (`/`, `+`, `=`, `%`, spaces, non-ASCII) is encoded. A segment of dots alone (`.`, `..`,
    /// valid IDs) is encoded whole (`%2E%2E`), so that nothing on the way resolves it as a
    /// relative path.
    public static func escape(_ segment: String) -> String {
        if !segment.isEmpty, segment.allSatisfy({ $0 == "." }) {
            return String(repeating: "%2E", count: segment.count)
        }
        return segment.addingPercentEncoding(withAllowedCharacters: unescaped) ?? segment
    }

    /// ASCII letters and digits and `-._~:`: what a path segment keeps as it is.
    private static let unescaped = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:")

    /// The component schema named after a wire type (`QueryResult` is `QueryResponse` on the wire).
    package static func schemaName(of type: Any.Type) -> String {
        let name = String(describing: type)
        return name == "QueryResult" ? "QueryResponse" : name
    }
}
