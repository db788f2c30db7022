import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import RooftopShared

/// One benchmark client: its own HTTPS connection pool, trusting only the server's development
/// CA, and the session token of the user it acts for.
///
/// Only the exchange is timed (sending the encoded body, receiving the whole answer): encoding
/// the request and decoding the answer are the benchmark's own work and stay outside the figure.
final class BenchmarkHTTPClient: Sendable {
    /// A timed answer.
    struct Reply: Sendable {
        /// The HTTP status code.
        var status: Int
        /// The body.
        var body: Data
        /// Time from sending the request to receiving the last byte of the answer.
        var elapsed: Duration
    }

    private let http: HTTPClient
    private let target: ServerEndpoint
    /// The session token sent as `X-Rooftop-Session-Token`, if any.
    let token: String?

    /// A client of `target`, acting for the user of `token` (none: anonymous or admin requests).
    /// - Throws: When the CA certificate cannot be read.
    init(target: ServerEndpoint, token: String? = nil) throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(target.caCertificatePath))
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout = .init(connect: .seconds(10), read: .seconds(300))
        self.http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        self.target = target
        self.token = token
    }

    /// Closes the connection pool.
    func shutdown() async {
        try? await http.shutdown()
    }

    /// Sends a request and returns the timed answer, whatever its status.
    func send(_ method: HTTPMethod, _ path: String, body: Data? = nil, admin: Bool = false) async throws -> Reply {
        var request = HTTPClientRequest(url: target.baseURL + path)
        request.method = method
        request.headers.add(name: "X-Rooftop-Application-Id", value: target.appId)
        if let token { request.headers.add(name: "X-Rooftop-Session-Token", value: token) }
        if admin { request.headers.add(name: "X-Rooftop-Admin-Key", value: target.adminKey) }
        if let body {
            request.body = .bytes(ByteBuffer(bytes: body))
            request.headers.add(name: "Content-Type", value: "application/json")
        }
        let clock = ContinuousClock()
        let start = clock.now
        let response = try await http.execute(request, timeout: .seconds(300))
        let bytes = try await response.body.collect(upTo: 256 * 1024 * 1024)
        let elapsed = clock.now - start
        return Reply(status: Int(response.status.code), body: Data(bytes.readableBytesView), elapsed: elapsed)
    }

    /// A decoded answer with the figures of its exchange.
    struct Answer<T: Sendable>: Sendable {
        /// The decoded body.
        var value: T
        /// Time from sending the request to receiving the last byte of the answer.
        var elapsed: Duration
        /// The request body's size, in bytes.
        var sentBytes: Int
        /// The answer body's size, in bytes.
        var receivedBytes: Int
    }

    /// Sends `body` encoded as JSON to `endpoint` (at `path`, by default its own: an endpoint
    /// without parameters), requires a 2xx answer and decodes it as the endpoint's answer.
    /// - Throws: ``BenchmarkError/request`` on any other status, and decoding errors.
    func call<Sent: Encodable, Received: Decodable & Sendable>(
        _ endpoint: APIEndpoint<Sent, Received>, _ path: String? = nil, body: Sent? = nil, admin: Bool = false
    ) async throws -> Answer<Received> {
        try await exchange(endpoint, path, body: body, admin: admin).decoded()
    }

    /// Sends `body` encoded as JSON to `endpoint`, as ``call(_:_:body:admin:)`` does, and
    /// requires a 2xx answer, but leaves the answer's body undecoded: a pull reads where the
    /// next page starts (``PullResponse/continuation(of:)``) and asks for it before decoding
    /// this one, as the client library does.
    /// - Throws: ``BenchmarkError/request`` on any other status.
    func exchange<Sent: Encodable, Received: Decodable & Sendable>(
        _ endpoint: APIEndpoint<Sent, Received>, _ path: String? = nil, body: Sent? = nil, admin: Bool = false
    ) async throws -> Exchange<Received> {
        let method = HTTPMethod(rawValue: endpoint.operation.method.rawValue)
        let path = try endpoint.requestPath(path)
        // As the client library encodes it.
        let encoded = try body.map { try ClientRequestBody.encoded($0) }
        let reply = try await send(method, path, body: encoded, admin: admin)
        guard (200..<300).contains(reply.status) else {
            let text = String(decoding: reply.body.prefix(2000), as: UTF8.self)
            throw BenchmarkError.request("\(method) \(path) answered HTTP \(reply.status): \(text)")
        }
        return Exchange(reply: reply, sentBytes: encoded?.count ?? 0)
    }

    /// A 2xx answer of an endpoint whose answer is `Received`, not decoded yet.
    struct Exchange<Received: Decodable & Sendable>: Sendable {
        /// The answer as received.
        var reply: Reply
        /// The request body's size, in bytes.
        var sentBytes: Int

        /// The answer decoded; pull pages are read as the client library reads them
        /// (``PullResponse/decodeDocument(_:)``).
        /// - Throws: decoding errors.
        func decoded() throws -> Answer<Received> {
            // Pull pages and push answers read as the client library reads them.
            let value: Received =
                if Received.self == PullResponse.self, let page = try PullResponse.decodeDocument(reply.body) as? Received {
                    page
                } else if Received.self == PushResponse.self,
                    let answer = try PushResponse.decodeDocument(reply.body) as? Received
                {
                    answer
                } else {
                    try JSONDecoder().decode(Received.self, from: reply.body)
                }
            return Answer(value: value, elapsed: reply.elapsed, sentBytes: sentBytes, receivedBytes: reply.body.count)
        }
    }
}

/// Why a benchmark run failed: an operation that must succeed did not, or a result was wrong.
/// Timing never makes a run fail.
enum BenchmarkError: Error, CustomStringConvertible {
    /// A request failed or was answered with an unexpected status.
    case request(String)
    /// A result differs from what the data set says it must be.
    case wrongResult(String)
    /// The server could not be started or stopped.
    case server(String)

    var description: String {
        switch self {
        case .request(let text): "request failed: \(text)"
        case .wrongResult(let text): "wrong result: \(text)"
        case .server(let text): "server: \(text)"
        }
    }
}
