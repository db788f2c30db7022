import AsyncHTTPClient
import Foundation
import HummingbirdWSClient
import NIOCore
import NIOSSL
@testable import Rooftop
import RooftopShared
import Testing

/// The tables that turn transport failures and HTTP error answers into ``RooftopError`` codes.
@Suite struct TransportErrorTests {
    private struct Unrelated: Error {}

    static let failures: [(any Error & Sendable, RooftopError.Code)] = [
        (CancellationError(), .cancelled),
        (HTTPClientError.cancelled, .cancelled),
        (HTTPClientError.connectTimeout, .timeout),
        (HTTPClientError.readTimeout, .timeout),
        (HTTPClientError.deadlineExceeded, .timeout),
        (HTTPClientError.tlsHandshakeTimeout, .timeout),
        (HTTPClientError.remoteConnectionClosed, .network),
        (HTTPClientError.invalidURL, .network),
        (NIOSSLError.handshakeFailed(.sslError([])), .tls),
        // The connection closed during the handshake (a server restarting): lost, not untrusted.
        (NIOSSLError.handshakeFailed(.sslError([.eofDuringHandshake])), .network),
        (NIOSSLError.handshakeFailed(.sslError([.eofDuringAdditionalCertficiateChainValidation])), .network),
        (NIOSSLError.noCertificateToValidate, .tls),
        (BoringSSLError.sslError([]), .tls),
        (NIOSSLError.uncleanShutdown, .network),
        (IOError(errnoCode: ECONNREFUSED, reason: "connect"), .noConnection),
        (ChannelError.ioOnClosedChannel, .noConnection),
        (ChannelError.connectTimeout(.seconds(10)), .timeout),
        (Unrelated(), .network),
    ]

    @Test(arguments: 0..<failures.count)
    func transportFailureCodes(_ index: Int) {
        let (failure, code) = Self.failures[index]
        let error = AsyncHTTPTransport.translate(failure)
        #expect(error.code == code, "\(failure)")
        #expect(error.cause != nil, "the original error is kept as the cause")
    }

    @Test func rooftopErrorsPassThroughUnchanged() {
        let original = RooftopError(.quota, "too many", field: "x")
        #expect(AsyncHTTPTransport.translate(original) == original)
    }

    @Test func liveFailuresAddTheWebSocketCases() {
        #expect(LiveConnection.translate(WebSocketClientError.webSocketUpgradeFailed).code == .auth)
        #expect(LiveConnection.translate(WebSocketClientError.serverProtocolError).code == .network)
        #expect(LiveConnection.translate(WebSocketClientError.serverSentMessageTooLarge).code == .network)
        // Everything else as for HTTP.
        #expect(LiveConnection.translate(NIOSSLError.handshakeFailed(.sslError([]))).code == .tls)
        #expect(LiveConnection.translate(IOError(errnoCode: ECONNREFUSED, reason: "connect")).code == .noConnection)
        #expect(LiveConnection.translate(NIOSSLError.uncleanShutdown).code == .network)
        #expect(LiveConnection.translate(NIOSSLError.handshakeFailed(.sslError([.eofDuringHandshake]))).code == .network)
    }

    // MARK: HTTP error answers

    static let statuses: [(Int, RooftopError.Code)] = [
        (400, .response), (401, .auth), (403, .disallowed), (404, .notFound), (409, .response), (413, .sizeLimit),
        (429, .retryLater), (500, .server), (502, .server), (503, .retryLater), (504, .server), (302, .response),
    ]

    @Test(arguments: statuses)
    func statusWithoutErrorBody(_ status: Int, _ code: RooftopError.Code) {
        #expect(RemoteAPI.error(status: status, body: Data()).code == code)
        // A body that is not an error (an HTML page from a proxy) counts as none.
        #expect(RemoteAPI.error(status: status, body: Data("<html>Bad Gateway</html>".utf8)).code == code)
        #expect(RemoteAPI.error(status: status, body: Data(#"{"message": "no code"}"#.utf8)).code == code)
    }

    @Test(arguments: [400, 401, 403, 404, 409, 500, 503])
    func errorBodyWinsOverTheStatus(_ status: Int) throws {
        let sent = RooftopError(.invalidQuery, "unexpected token", field: "where", position: 7)
        let body = try JSONEncoder().encode(sent)
        let error = RemoteAPI.error(status: status, body: body)
        #expect(error == sent)
        #expect(error.field == "where")
        #expect(error.position == 7)
    }

    @Test func unknownCodesFromANewerServerAreKept() {
        let body = Data(#"{"code": "somethingNew", "message": "from the future"}"#.utf8)
        let error = RemoteAPI.error(status: 400, body: body)
        #expect(error.code.rawValue == "somethingNew")
        #expect(error.message == "from the future")
    }
}
