import Foundation
import HTTPTypes
import Hummingbird
import RooftopShared

/// Header names of the REST API.
enum RooftopHeader {
    /// The application ID every `/v1` request carries.
    static let applicationId = HTTPField.Name("X-Rooftop-Application-Id")!
    /// A session token (also accepted as `Authorization: Bearer <token>`).
    static let sessionToken = HTTPField.Name("X-Rooftop-Session-Token")!
    /// The admin (master) key.
    static let adminKey = HTTPField.Name("X-Rooftop-Admin-Key")!
    /// The request ID echoed on every response.
    static let requestId = HTTPField.Name("X-Request-Id")!
}

/// Checks the application ID and resolves the caller (session token or admin key) into
/// ``RooftopRequestContext/access`` for every API request.
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = RooftopRequestContext

    let appId: String
    let auth: AuthService

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        guard request.headers[RooftopHeader.applicationId] == appId else {
            throw RooftopError(.auth, "missing or wrong X-Rooftop-Application-Id header")
        }
        var context = context
        var token = request.headers[RooftopHeader.sessionToken]
        if token == nil, let authorization = request.headers[.authorization], authorization.hasPrefix("Bearer ") {
            token = String(authorization.dropFirst("Bearer ".count))
        }
        context.sessionToken = token
        context.access = try await auth.context(
            sessionToken: token, adminKey: request.headers[RooftopHeader.adminKey], clientAddress: context.clientAddress)
        return try await next(request, context)
    }
}

/// Adds `X-Request-Id` (Hummingbird's request ID, also in every log line) to responses.
struct RequestIDMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        var response = try await next(request, context)
        response.headers[RooftopHeader.requestId] = context.id
        return response
    }
}

extension RooftopRequestContext {
    /// The signed-in user's ID.
    /// - Throws: `auth` when the caller is anonymous.
    func requireUser() throws(RooftopError) -> String {
        guard let userId = access.userId else {
            throw RooftopError(.auth, "this needs a signed-in user: send X-Rooftop-Session-Token")
        }
        return userId
    }

    /// Throws `disallowed` unless the caller used the admin key.
    func requireAdmin() throws(RooftopError) {
        guard access.isAdmin else { throw RooftopError(.disallowed, "this needs the admin key") }
    }

    /// A route parameter, percent-decoded: the router matches on the raw path, so an ID holding
    /// `/` (valid in object IDs and class names) arrives as `%2F` and must be decoded here.
    /// - Throws: `request` when the parameter is missing, `illegalArgument` when its
    ///   percent-encoding is malformed.
    func parameter(_ name: String) throws(RooftopError) -> String {
        guard let value = parameters.get(name) else { throw RooftopError(.request, "missing path parameter \(name)") }
        guard let decoded = value.removingPercentEncoding else {
            throw RooftopError(
                .illegalArgument, "path parameter \(name) is not valid percent-encoding: '\(value.prefix(80))'")
        }
        return decoded
    }
}
