import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import RooftopShared
import RooftopTestSupport

/// A minimal REST client for end-to-end tests: JSON over HTTPS, trusting only the test server's
/// development CA. (The real client library is tested separately; this one exercises the wire.)
final class APIClient: Sendable {
    let server: ServerProcess
    let http: HTTPClient

    /// A response: status, headers and body.
    struct Reply: Sendable {
        var status: Int
        var headers: HTTPHeaders
        var body: Data

        /// The body decoded as `T`.
        func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T {
            do {
                return try JSONDecoder().decode(T.self, from: body)
            } catch {
                throw APIClientError.undecodable(status: status, body: String(decoding: body, as: UTF8.self), cause: error)
            }
        }

        /// The error body.
        var error: RooftopError? { try? JSONDecoder().decode(RooftopError.self, from: body) }

        /// The body as text.
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    init(server: ServerProcess) throws {
        self.server = server
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(server.caCertificatePath))
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.connectionPool.retryConnectionEstablishment = false
        // Deadlines that catch a hang: every suite starts its servers at once, and on a 2-core
        // machine a TLS handshake can wait well over ten seconds while they do.
        configuration.timeout = .init(connect: .seconds(60), read: .seconds(120))
        self.http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    func shutdown() async {
        try? await http.shutdown()
    }

    /// Sends a request.
    /// - Parameters:
    ///   - body: Encoded as JSON when given; `raw` sends bytes as they are.
    ///   - token: A session token.
    ///   - admin: Send the admin key.
    ///   - appId: The application ID header (default the server's; `nil` leaves it out).
    func send(
        _ method: HTTPMethod, _ path: String, body: (any Encodable)? = nil, raw: Data? = nil, token: String? = nil,
        admin: Bool = false, appId: String?? = .none
    ) async throws -> Reply {
        var request = HTTPClientRequest(url: server.baseURL + path)
        request.method = method
        let application: String? = appId ?? server.appId
        if let application { request.headers.add(name: "X-Rooftop-Application-Id", value: application) }
        if let token { request.headers.add(name: "X-Rooftop-Session-Token", value: token) }
        if admin { request.headers.add(name: "X-Rooftop-Admin-Key", value: server.adminKey) }
        if let body {
            let encoder = JSONEncoder()
            request.body = .bytes(ByteBuffer(bytes: try encoder.encode(body)))
            request.headers.add(name: "Content-Type", value: "application/json")
        } else if let raw {
            request.body = .bytes(ByteBuffer(bytes: raw))
            request.headers.add(name: "Content-Type", value: "application/json")
        }
        let response = try await http.execute(request, timeout: .seconds(180))
        let bytes = try await response.body.collect(upTo: 64 * 1024 * 1024)
        return Reply(status: Int(response.status.code), headers: response.headers, body: Data(bytes.readableBytesView))
    }

    /// Sends a request and decodes a successful (2xx) answer.
    func call<T: Decodable>(
        _ method: HTTPMethod, _ path: String, body: (any Encodable)? = nil, token: String? = nil, admin: Bool = false,
        as type: T.Type = T.self
    ) async throws -> T {
        let reply = try await send(method, path, body: body, token: token, admin: admin)
        guard (200..<300).contains(reply.status) else {
            throw APIClientError.status(reply.status, reply.error, reply.text)
        }
        return try reply.decode(T.self)
    }

    /// Sends a request to `endpoint`, at `path` (by default the endpoint's own: one without
    /// parameters). The body is any JSON: the tests send bodies the endpoint refuses too.
    func send<Body, Answer>(
        _ endpoint: APIEndpoint<Body, Answer>, _ path: String? = nil, body: (any Encodable)? = nil, raw: Data? = nil,
        token: String? = nil, admin: Bool = false, appId: String?? = .none
    ) async throws -> Reply {
        try await send(
            HTTPMethod(rawValue: endpoint.operation.method.rawValue), path ?? endpoint.operation.path, body: body, raw: raw,
            token: token, admin: admin, appId: appId)
    }

    /// Sends a request to `endpoint` (as `send(_:_:body:…)` does) and decodes a successful (2xx) answer as the endpoint's answer, or as `type`: a test's
    /// own reading of it.
    func call<Body, Answer, T: Decodable>(
        _ endpoint: APIEndpoint<Body, Answer>, _ path: String? = nil, body: (any Encodable)? = nil,
        token: String? = nil, admin: Bool = false, as type: T.Type
    ) async throws -> T {
        let reply = try await send(endpoint, path, body: body, token: token, admin: admin)
        guard (200..<300).contains(reply.status) else {
            throw APIClientError.status(reply.status, reply.error, reply.text)
        }
        return try reply.decode(T.self)
    }

    /// ``call(_:_:body:token:admin:as:)`` decoding the endpoint's own answer type.
    func call<Body, Answer: Decodable>(
        _ endpoint: APIEndpoint<Body, Answer>, _ path: String? = nil, body: (any Encodable)? = nil,
        token: String? = nil, admin: Bool = false
    ) async throws -> Answer {
        try await call(endpoint, path, body: body, token: token, admin: admin, as: Answer.self)
    }

    /// Signs a new user up and returns the session.
    func signUp(_ username: String, password: String = "password-1") async throws -> Session {
        try await call(API.signUp, body: SignUpRequest(username: username, password: password))
    }
}

enum APIClientError: Error, CustomStringConvertible {
    case status(Int, RooftopError?, String)
    case undecodable(status: Int, body: String, cause: any Error)

    var description: String {
        switch self {
        case .status(let status, _, let body): "HTTP \(status): \(body)"
        case .undecodable(let status, let body, let cause): "HTTP \(status), undecodable body \(body): \(cause)"
        }
    }

    /// The Rooftop error code of a refused request.
    var code: RooftopError.Code? {
        if case .status(_, let error, _) = self { error?.code } else { nil }
    }
}

/// Runs `body` with a server and a client for it; both are shut down whatever happens.
func withServerAndClient<T>(
    dataDirectory: String? = nil, extraArguments: [String] = [], _ body: (ServerProcess, APIClient) async throws -> T
) async throws -> T {
    try await withServer(dataDirectory: dataDirectory, extraArguments: extraArguments) { server in
        let client = try APIClient(server: server)
        do {
            let result = try await body(server, client)
            await client.shutdown()
            return result
        } catch {
            await client.shutdown()
            throw error
        }
    }
}
