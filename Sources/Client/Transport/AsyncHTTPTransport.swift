import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import RooftopShared
import Synchronization

/// ``HTTPTransport`` over AsyncHTTPClient, with the TLS trust of a ``TrustPolicy``.
final class AsyncHTTPTransport: HTTPTransport {
    private let client: HTTPClient
    private let baseURL: String
    /// The request timeout, in the form AsyncHTTPClient takes.
    private let timeout: TimeAmount
    private let isShutDown = Mutex(false)

    init(baseURL: URL, trust: TrustPolicy, timeout: Duration) throws(RooftopError) {
        var configuration = HTTPClient.Configuration(tlsConfiguration: try trust.tlsConfiguration())
        // A TLS or connection failure fails the request at once instead of being retried here:
        // the offline queue decides about retries.
        configuration.connectionPool.retryConnectionEstablishment = false
        // Milliseconds, not whole seconds: a sub-second timeout must not become 0 (every request
        // failing at once). Connecting (TCP and TLS handshake) takes at most as long as a request
        // may, so that a connection attempt to a server that hangs does not outlive the request
        // (shutdown waits for pending attempts).
        let milliseconds = max(1, timeout.saturatingMilliseconds)
        configuration.timeout = .init(connect: .milliseconds(min(milliseconds, 10_000)), read: .milliseconds(milliseconds))
        self.client = HTTPClient(eventLoopGroupProvider: .shared(MultiThreadedEventLoopGroup.singleton), configuration: configuration)
        var base = baseURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        self.baseURL = base
        self.timeout = .milliseconds(milliseconds)
    }

    func send(_ request: TransportRequest) async throws(RooftopError) -> TransportResponse {
        var outgoing = HTTPClientRequest(url: baseURL + request.path)
        outgoing.method = HTTPMethod(rawValue: request.method)
        for (name, value) in request.headers { outgoing.headers.add(name: name, value: value) }
        if let body = request.body {
            outgoing.body = .bytes(ByteBuffer(bytes: body))
            outgoing.headers.add(name: "Content-Type", value: "application/json")
        }
        do {
            let response = try await client.execute(outgoing, timeout: timeout)
            let body = try await response.body.collect(upTo: 256 * 1024 * 1024)
            return TransportResponse(status: Int(response.status.code), body: Data(body.readableBytesView))
        } catch {
            throw AsyncHTTPTransport.translate(error)
        }
    }

    func shutdown() async {
        guard markShutDown() else { return }
        try? await client.shutdown()
    }

    /// A client dropped without ``RooftopClient/shutdown()`` (e.g. after an error) still closes
    /// its connections, in the background.
    deinit {
        guard markShutDown() else { return }
        client.shutdown(queue: .global()) { _ in }
    }

    /// Records the shutdown; `false` when it was already done.
    private func markShutDown() -> Bool {
        isShutDown.withLock { done in
            defer { done = true }
            return !done
        }
    }

    /// The Rooftop error for a failure of AsyncHTTPClient or NIO.
    static func translate(_ error: any Error) -> RooftopError {
        if let error = error as? RooftopError { return error }
        if error is CancellationError { return RooftopError(.cancelled, "the request was cancelled", cause: error) }
        // A dropped TCP connection shows up as an unclean TLS shutdown: not a trust problem.
        if let error = error as? NIOSSLError, error == .uncleanShutdown {
            return RooftopError(.network, "the connection to the server was lost", cause: error)
        }
        if error is NIOSSLCloseTimedOutError {
            return RooftopError(.network, "the connection to the server was lost", cause: error)
        }
        // The connection closed while the handshake ran (a server stopping or restarting): NIOSSL
        // reports a failed handshake, with a synthetic error of its own, not a certificate that
        // failed verification. Told as `tls`, a query with a fallback to the cache failed instead
        // of falling back.
        if let error = error as? NIOSSLError, case .handshakeFailed(.sslError(let stack)) = error,
            stack.contains(.eofDuringHandshake) || stack.contains(.eofDuringAdditionalCertficiateChainValidation)
        {
            return RooftopError(.network, "the connection to the server was lost during the TLS handshake", cause: error)
        }
        if error is NIOSSLError || error is BoringSSLError || "\(type(of: error))".contains("SSL") {
            return RooftopError(.tls, "TLS failed: the server's certificate could not be verified", cause: error)
        }
        if let error = error as? HTTPClientError {
            switch error {
            case .connectTimeout, .readTimeout, .writeTimeout, .deadlineExceeded, .tlsHandshakeTimeout:
                return RooftopError(.timeout, "the request timed out", cause: error)
            case .cancelled:
                return RooftopError(.cancelled, "the request was cancelled", cause: error)
            case .remoteConnectionClosed:
                return RooftopError(.network, "the server closed the connection", cause: error)
            default:
                return RooftopError(.network, "the request failed: \(error)", cause: error)
            }
        }
        if let error = error as? ChannelError, case .connectTimeout = error {
            return RooftopError(.timeout, "connecting to the server timed out", cause: error)
        }
        if error is NIOConnectionError || error is IOError || error is ChannelError {
            return RooftopError(.noConnection, "could not connect to the server", cause: error)
        }
        return RooftopError(.network, "the request failed: \(error)", cause: error)
    }
}
