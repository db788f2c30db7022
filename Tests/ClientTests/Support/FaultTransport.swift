import Foundation
@testable import Rooftop
import RooftopShared

/// The network between a client and the real server: requests go through unless the test
/// scripted otherwise (``RealSyncServer``).
final class FaultTransport: HTTPTransport {
    private let server: RealSyncServer
    private let inner: AsyncHTTPTransport

    init(server: RealSyncServer, inner: AsyncHTTPTransport) {
        self.server = server
        self.inner = inner
    }

    func send(_ request: TransportRequest) async throws(RooftopError) -> TransportResponse {
        if let failure = server.admit(request) {
            if failure.isConnectivity { throw failure }
            return Self.answer(failure)
        }
        if server.stalls {
            // Not a wait for something to happen: a request that never gets an answer.
            do { try await Task.sleep(for: .seconds(3600)) } catch {}
            server.countCancelled()
            throw RooftopError(.cancelled, "the request was cancelled")
        }
        let path = String(request.path.prefix { $0 != "?" })
        let gate = path == API.pull.operation.path ? server.pullGate : path == API.push.operation.path ? server.pushGate : nil
        let held = gate.map { !$0.isOpen } ?? false
        if let gate, !(await gate.pass()) {
            throw RooftopError(.noConnection, "the connection went down while the request was held (test transport)")
        }
        if path == API.pull.operation.path, server.interruptsPull() {
            throw RooftopError(.network, "the pull was interrupted (test transport)")
        }
        let request = try server.rewritten(request, path: path)
        server.record(request, path: path)
        // A request held at a gate was on its way already: it arrives, and is answered, even if
        // its task was cancelled meanwhile (the real transport would otherwise cancel it).
        let response = held ? try await Self.uncancelled(request, through: inner) : try await inner.send(request)
        if path == API.pull.operation.path { server.recordPage(response) }
        if path == API.push.operation.path, response.status == 200, server.losesPushAnswer() {
            throw RooftopError(.timeout, "the push's answer was lost (test transport)")
        }
        return response
    }

    func shutdown() async {
        await inner.shutdown()
    }

    /// Sends `request` in a task of its own, which the caller's cancellation does not reach.
    private static func uncancelled(
        _ request: TransportRequest, through inner: AsyncHTTPTransport
    ) async throws(RooftopError) -> TransportResponse {
        let result = await Task { () async -> Result<TransportResponse, RooftopError> in
            do throws(RooftopError) {
                return .success(try await inner.send(request))
            } catch {
                return .failure(error)
            }
        }.value
        return try result.get()
    }

    /// An error answered as the server answers it: its HTTP status and `{code, message}` body.
    private static func answer(_ error: RooftopError) -> TransportResponse {
        let status: Int =
            switch error.code {
            case .auth: 401
            case .disallowed: 403
            case .notFound: 404
            case .exists: 409
            case .sizeLimit: 413
            case .retryLater: 429
            case .internal, .server: 500
            default: 400
            }
        return TransportResponse(status: status, body: (try? JSONEncoder().encode(error)) ?? Data())
    }
}
