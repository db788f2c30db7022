import Foundation
@testable import Rooftop
import RooftopShared
import Synchronization
import RooftopTestSupport

/// An ``HTTPTransport`` that records every request and answers with a closure, so the typed
/// remote API is tested without a network.
///
/// ```swift
/// let transport = NetworkFakeTransport { _ in .json(ServerInfo(version: "1")) }
/// let api = RemoteAPI(transport: transport, appId: "app", session: SessionTokenStore())
/// _ = try await api.info()
/// #expect(transport.requests.first?.path == "/v1/info")
/// ```
final class NetworkFakeTransport: HTTPTransport {
    /// Produces the answer to a request.
    typealias Responder = @Sendable (TransportRequest) throws(RooftopError) -> TransportResponse

    private let responder: Responder
    private let recorded = Mutex<[TransportRequest]>([])

    /// A transport answering with `responder`.
    init(_ responder: @escaping Responder) {
        self.responder = responder
    }

    /// The requests sent so far, in order.
    var requests: [TransportRequest] { recorded.withLock { $0 } }

    func send(_ request: TransportRequest) async throws(RooftopError) -> TransportResponse {
        recorded.withLock { $0.append(request) }
        return try responder(request)
    }

    func shutdown() async {}
}

extension TransportResponse {
    /// A 2xx answer with `value` as its JSON body.
    static func json(_ value: some Encodable, status: Int = 200) -> TransportResponse {
        TransportResponse(status: status, body: (try? JSONEncoder().encode(value)) ?? Data())
    }

    /// An answer with a raw text body.
    static func text(_ text: String, status: Int) -> TransportResponse {
        TransportResponse(status: status, body: Data(text.utf8))
    }
}

extension TransportRequest {
    /// The value of the first header named `name` (case-insensitive).
    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    /// The body decoded as `T`.
    func decodeBody<T: Decodable>(_ type: T.Type = T.self) throws -> T {
        guard let body else { throw TestSupportError("the request has no body") }
        return try JSONDecoder().decode(T.self, from: body)
    }
}
