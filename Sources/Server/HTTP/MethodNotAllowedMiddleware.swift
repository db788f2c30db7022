import HTTPTypes
import Hummingbird
import RooftopShared

/// Answers `405 Method Not Allowed` (code `methodNotAllowed`, with an `Allow` header) for a
/// request whose path is routed but whose method is not, where Hummingbird's router answers 404.
///
/// Add it to the router's middlewares after every route is registered: router middlewares wrap
/// only the endpoints added after them, so placed last it runs only on requests no route took
/// (inside ``ErrorMiddleware`` and the request-ID and logging middlewares, which were added first).
///
/// ```swift
/// router.middlewares.add(MethodNotAllowedMiddleware(routes: router.routes))
/// ```
struct MethodNotAllowedMiddleware<Context: RequestContext>: RouterMiddleware {
    /// A routed path: its components and the methods it answers.
    struct Endpoint: Sendable {
        var components: [RouterPath.Element]
        var methods: [HTTPRequest.Method]
    }

    let endpoints: [Endpoint]

    /// Collects the routed paths and their methods.
    init(routes: [Router<Context>.RouteDescription]) {
        var order: [String] = []
        var byPath: [String: Endpoint] = [:]
        for route in routes {
            let key = route.path.description
            if byPath[key] == nil {
                order.append(key)
                byPath[key] = Endpoint(components: route.path.components, methods: [])
            }
            byPath[key]?.methods.append(route.method)
        }
        endpoints = order.compactMap { byPath[$0] }
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        guard let endpoint = endpoint(for: request.uri.path), !endpoint.methods.contains(request.method) else {
            return try await next(request, context)
        }
        let allowed = endpoint.methods.map(\.rawValue).sorted()
        let error = RooftopError(
            .methodNotAllowed,
            "\(request.method.rawValue.prefix(40)) is not allowed here; allowed: \(allowed.joined(separator: ", "))")
        var response = try JSONBody.response(error, status: error.httpStatus)
        response.headers[.allow] = allowed.joined(separator: ", ")
        return response
    }

    /// The endpoint the router would pick for `path` if it had the method: among the templates
    /// matching every component, the one with literal components earliest (the router's trie
    /// prefers a literal over a capture at each step).
    func endpoint(for path: String) -> Endpoint? {
        let components = path.split(separator: "/", omittingEmptySubsequences: true)
        var best: (endpoint: Endpoint, literals: [Bool])?
        for endpoint in endpoints where endpoint.components.count == components.count {
            guard zip(endpoint.components, components).allSatisfy({ $0 ~= $1 }) else { continue }
            let literals = endpoint.components.map { $0 == $0.description }
            if let current = best, !Self.prefersLiterals(literals, over: current.literals) { continue }
            best = (endpoint, literals)
        }
        return best?.endpoint
    }

    /// Whether `lhs` has a literal where `rhs` has a capture at the first position they differ.
    private static func prefersLiterals(_ lhs: [Bool], over rhs: [Bool]) -> Bool {
        for (left, right) in zip(lhs, rhs) where left != right { return left }
        return false
    }
}
