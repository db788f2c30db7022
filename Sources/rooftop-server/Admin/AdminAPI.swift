import ArgumentParser
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import RooftopShared

/// Where the admin commands connect, and with what key.
struct AdminConnection: ParsableArguments {
    @Option(help: "The server's URL. [env: ROOFTOP_SERVER_URL; default https://127.0.0.1:8443]")
    var server: String?

    @Option(help: "The admin key. [env: ROOFTOP_ADMIN_KEY]")
    var adminKey: String?

    @Option(help: "A CA certificate (PEM) to trust, e.g. the development CA; default the system's roots. [env: ROOFTOP_CA]")
    var ca: String?

    @Option(help: "The application ID. [env: ROOFTOP_APP_ID; default rooftop]")
    var appId: String?

    /// Opens the connection (the caller shuts it down).
    /// - Throws: `ValidationError` without an admin key or with a bad URL or CA file.
    func open() throws -> AdminAPI {
        let environment = ProcessInfo.processInfo.environment
        guard let key = adminKey ?? environment["ROOFTOP_ADMIN_KEY"], !key.isEmpty else {
            throw ValidationError("an admin key is needed: --admin-key or ROOFTOP_ADMIN_KEY")
        }
        let base = (server ?? environment["ROOFTOP_SERVER_URL"] ?? "https://127.0.0.1:8443")
        guard let url = URL(string: base), url.scheme == "https" || url.scheme == "http", url.host != nil else {
            throw ValidationError("'\(base)' is not an http(s) URL")
        }
        var tls = TLSConfiguration.makeClientConfiguration()
        if let path = ca ?? environment["ROOFTOP_CA"] {
            do {
                tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(path))
            } catch {
                throw ValidationError("the CA file '\(path)' could not be read: \(error)")
            }
        }
        return AdminAPI(
            base: base.hasSuffix("/") ? String(base.dropLast()) : base, adminKey: key,
            appId: appId ?? environment["ROOFTOP_APP_ID"] ?? "rooftop", tls: tls)
    }
}

/// The server's REST API with the admin key: JSON in, JSON out, errors as `RooftopError`.
final class AdminAPI: Sendable {
    private let http: HTTPClient
    private let base: String
    private let adminKey: String
    private let appId: String

    init(base: String, adminKey: String, appId: String, tls: TLSConfiguration) {
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        // A wrong certificate or a closed port must fail at once, not after retries.
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout = .init(connect: .seconds(10), read: .seconds(120))
        self.http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        self.base = base
        self.adminKey = adminKey
        self.appId = appId
    }

    /// Closes the connections.
    func shutdown() async throws {
        try await http.shutdown()
    }

    /// Sends a request to `endpoint` (at `path`, by default its own: an endpoint without
    /// parameters) and decodes a 2xx answer as its `Answer`.
    /// - Throws: The server's `RooftopError` for a non-2xx answer; `network` when it cannot be
    ///   reached; `response` for an answer that does not decode.
    func call<Body: Encodable, Answer: Decodable>(
        _ endpoint: APIEndpoint<Body, Answer>, _ path: String? = nil, body: Body? = nil
    ) async throws -> Answer {
        let path = try Self.requestPath(endpoint, path)
        let data = try await send(endpoint, path, body: body)
        do {
            return try JSONDecoder().decode(Answer.self, from: data)
        } catch {
            throw RooftopError(
                .response, "the answer to \(endpoint.operation.method.rawValue) \(path) could not be read", cause: error)
        }
    }

    /// Sends a request; returns a 2xx answer's body.
    /// - Throws: As ``call(_:_:body:)``.
    /// - Parameters:
    ///   - path: The path, by default the endpoint's own (an endpoint without parameters).
    ///   - sessionToken: Sent instead of the admin key, to act as that session's user.
    @discardableResult
    func send<Body: Encodable, Answer>(
        _ endpoint: APIEndpoint<Body, Answer>, _ path: String? = nil, body: Body? = nil, sessionToken: String? = nil
    ) async throws -> Data {
        let path = try Self.requestPath(endpoint, path)
        let method = HTTPMethod(rawValue: endpoint.operation.method.rawValue)
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        request.headers.add(name: "X-Rooftop-Application-Id", value: appId)
        if let sessionToken {
            request.headers.add(name: "X-Rooftop-Session-Token", value: sessionToken)
        } else {
            request.headers.add(name: "X-Rooftop-Admin-Key", value: adminKey)
        }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: try JSONEncoder().encode(body)))
        }
        let response: HTTPClientResponse
        let bytes: ByteBuffer
        do {
            response = try await http.execute(request, timeout: .seconds(120))
            bytes = try await response.body.collect(upTo: 64 << 20)
        } catch {
            throw RooftopError(.network, "\(method) \(base)\(path) failed: \(error)", cause: error)
        }
        let data = Data(bytes.readableBytesView)
        guard (200..<300).contains(Int(response.status.code)) else {
            if let error = try? JSONDecoder().decode(RooftopError.self, from: data) { throw error }
            throw RooftopError(
                .response, "\(method) \(path) answered \(response.status.code): \(String(decoding: data.prefix(300), as: UTF8.self))")
        }
        return data
    }

    /// One page of a datastore's change feed.
    func pull(_ request: PullRequest) async throws -> PullResponse {
        let data = try await send(API.pull, body: request)
        do {
            return try PullResponse.decodeDocument(data)
        } catch {
            throw RooftopError(.response, "the answer to \(API.pull.operation) could not be read", cause: error)
        }
    }

    /// ``APIEndpoint/requestPath(_:)``, an empty name or ID reported as a usage error.
    private static func requestPath<Body, Answer>(_ endpoint: APIEndpoint<Body, Answer>, _ path: String?) throws -> String {
        do {
            return try endpoint.requestPath(path)
        } catch {
            throw ValidationError(error.message)
        }
    }
}
