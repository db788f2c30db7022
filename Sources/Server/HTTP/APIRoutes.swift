import Hummingbird
import RooftopShared

/// Registers the handlers of the API's operations (``API``) at their methods and paths, so that
/// the router serves exactly what the API states (`OpenAPIRouteTests` checks both ways), and
/// writes each successful answer with its operation's status. An operation for the admin key
/// alone (``APIOperation/Access/admin``) refuses other callers before its body is read.
///
/// ```swift
/// let api = APIRoutes(router, at: "/v1", limits: limits, middleware: authentication)
/// api.on(API.getRole) { _, context in try await roles.get(try context.parameter("name"), by: context.access) }
/// api.on(API.createRole) { body, _, context in try await roles.create(body, by: context.access) }
/// ```
struct APIRoutes {
    /// The router group the routes go in.
    let group: RouterGroup<RooftopRequestContext>
    /// The path of `group` (`/v1`): every operation registered here has a path under it.
    let prefix: String
    /// The limits request bodies are read within.
    let limits: Limits

    /// The routes under `prefix` (`""` for the router's root, `"/v1"`), behind `middleware` when given.
    init(
        _ router: Router<RooftopRequestContext>, at prefix: String, limits: Limits,
        middleware: AuthenticationMiddleware? = nil
    ) {
        let group = router.group(RouterPath(String(prefix.drop { $0 == "/" })))
        if let middleware { group.add(middleware: middleware) }
        self.group = group
        self.prefix = prefix
        self.limits = limits
    }

    /// An operation without a request body whose handler answers its typed answer (nothing for
    /// ``NoBody``), sent with the operation's status.
    func on<Answer: Encodable & Sendable>(
        _ endpoint: APIEndpoint<NoBody, Answer>,
        _ handler: @escaping @Sendable (Request, RooftopRequestContext) async throws -> Answer
    ) {
        let status = Self.status(endpoint.operation)
        register(endpoint.operation) { request, context in
            try Self.response(try await handler(request, context), status: status)
        }
    }

    /// An operation whose request body is decoded as its `Body` (within the limits, unknown
    /// members refused) and handed to `handler`, whose answer is sent with the operation's status.
    func on<Body: Decodable & Sendable, Answer: Encodable & Sendable>(
        _ endpoint: APIEndpoint<Body, Answer>,
        _ handler: @escaping @Sendable (Body, Request, RooftopRequestContext) async throws -> Answer
    ) {
        let status = Self.status(endpoint.operation)
        let limits = self.limits
        register(endpoint.operation) { request, context in
            let body = try await RequestBody.decode(Body.self, from: request, limits: limits)
            return try Self.response(try await handler(body, request, context), status: status)
        }
    }

    /// An operation whose handler reads the request and writes the answer itself (the bodies read
    /// and written directly: pushes, pulls, pages of objects), with ``status(_:)`` for its status.
    func on<Body, Answer>(
        raw endpoint: APIEndpoint<Body, Answer>,
        _ handler: @escaping @Sendable (Request, RooftopRequestContext) async throws -> Response
    ) {
        register(endpoint.operation, handler)
    }

    /// The status of an operation's successful answer.
    static func status(_ operation: APIOperation) -> HTTPResponse.Status {
        switch operation.status {
        case 101: .switchingProtocols
        case 200: .ok
        case 201: .created
        case 204: .noContent
        default: HTTPResponse.Status(code: operation.status)
        }
    }

    private func register(
        _ operation: APIOperation, _ handler: @escaping @Sendable (Request, RooftopRequestContext) async throws -> Response
    ) {
        let adminOnly = operation.access == .admin
        group.on(RouterPath(Self.routerPath(operation.path, under: prefix)), method: .init(operation.method)) {
            request, context in
            if adminOnly { try context.requireAdmin() }
            return try await handler(request, context)
        }
    }

    /// A path template in Hummingbird's form, relative to `prefix` (`/v1/roles/{name}` under `/v1`
    /// is `roles/:name`).
    static func routerPath(_ template: String, under prefix: String) -> String {
        precondition(template.hasPrefix(prefix + "/"), "\(template) is not under \(prefix)")
        return template.dropFirst(prefix.count + 1).split(separator: "/", omittingEmptySubsequences: false).map {
            $0.hasPrefix("{") && $0.hasSuffix("}") ? ":" + $0.dropFirst().dropLast() : String($0)
        }.joined(separator: "/")
    }

    private static func response<Answer: Encodable>(_ answer: Answer, status: HTTPResponse.Status) throws -> Response {
        if Answer.self == NoBody.self { return Response(status: status) }
        return try JSONBody.response(answer, status: status)
    }
}

extension HTTPRequest.Method {
    /// The method of an API operation.
    init(_ method: APIOperation.Method) {
        switch method {
        case .get: self = .get
        case .put: self = .put
        case .post: self = .post
        case .patch: self = .patch
        case .delete: self = .delete
        }
    }
}
