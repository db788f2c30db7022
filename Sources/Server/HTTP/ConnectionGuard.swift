import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTPTypes
import HummingbirdCore
import HummingbirdTLS
import HummingbirdWebSocket
import Logging
import Metrics
import NIOCore
import NIOHTTP1
import NIOSSL
import RooftopShared
import Synchronization

/// Counts open connections, in all and per client address, and admits a new one only under both
/// caps. A refused connection is closed at once, before its TLS handshake, so an address holding
/// its share of idle sockets cannot take the file descriptors other clients need.
final class ConnectionRegistry: Sendable {
    private struct State {
        var total = 0
        var perAddress: [String: Int] = [:]
    }

    let maxConnections: Int
    let maxConnectionsPerAddress: Int
    private let state = Mutex(State())
    private let open = Gauge(label: "rooftop_connections_open")
    private let refused = Counter(label: "rooftop_connections_refused_total")

    /// - Parameters:
    ///   - maxConnections: The most connections at once (at least 1).
    ///   - maxConnectionsPerAddress: The most from one address; 0 for no cap.
    init(maxConnections: Int, maxConnectionsPerAddress: Int) {
        self.maxConnections = maxConnections
        self.maxConnectionsPerAddress = maxConnectionsPerAddress
    }

    /// Admits a connection from `address` when both caps allow; an admitted one must be
    /// ``release(_:)``d exactly once.
    func admit(_ address: String) -> Bool {
        let admitted = state.withLock { state in
            let fromAddress = state.perAddress[address, default: 0]
            guard state.total < maxConnections,
                maxConnectionsPerAddress == 0 || fromAddress < maxConnectionsPerAddress
            else { return false }
            state.total += 1
            state.perAddress[address] = fromAddress + 1
            return true
        }
        if admitted { open.record(openConnections) } else { refused.increment() }
        return admitted
    }

    /// Releases an admitted connection.
    func release(_ address: String) {
        state.withLock { state in
            state.total -= 1
            let remaining = state.perAddress[address, default: 1] - 1
            state.perAddress[address] = remaining > 0 ? remaining : nil
        }
        open.record(openConnections)
    }

    /// The connections open now.
    var openConnections: Int { state.withLock { $0.total } }
}

/// Wraps the server's child channel (TLS, HTTP/1 and the WebSocket upgrade): admits each
/// accepted connection through the ``ConnectionRegistry``, and puts an ``HTTPConnectionGuard``
/// right after the HTTP decoder to enforce the timeouts and limits of ``ConnectionLimits``.
struct GuardedChildChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value

    let base: Base
    let registry: ConnectionRegistry
    let limits: ConnectionLimits
    let maxRequestBodyBytes: Int

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let address = channel.remoteAddress?.ipAddress ?? "unknown"
        let admitted = registry.admit(address)
        if admitted {
            let registry = self.registry
            channel.closeFuture.whenComplete { _ in registry.release(address) }
        }
        let limits = self.limits
        let maxRequestBodyBytes = self.maxRequestBodyBytes
        return base.setup(channel: channel, logger: logger).flatMapThrowing { value in
            guard admitted else {
                // Closed rather than failed: a failed child channel setup would reach the
                // server's accept loop as an error.
                logger.debug("connection refused: too many open", metadata: ["address": "\(address)"])
                channel.close(promise: nil)
                return value
            }
            let operations = channel.pipeline.syncOperations
            let decoder = try operations.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try operations.addHandler(
                HTTPConnectionGuard(limits: limits, maxRequestBodyBytes: maxRequestBodyBytes, logger: logger),
                name: HTTPConnectionGuard.name, position: .after(decoder))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// HTTP/1 with the live WebSocket upgrade, over TLS when `tls` is given, behind a
    /// ``GuardedChildChannel``.
    static func guarded(
        http1: HTTP1WebSocketUpgradeChannel.Configuration, tls: TLSConfiguration?, registry: ConnectionRegistry,
        limits: ConnectionLimits, maxRequestBodyBytes: Int,
        shouldUpgrade: @escaping @Sendable (HTTPRequest, any Channel, Logger) async throws -> ShouldUpgradeResult<
            WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>
        >
    ) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            func guarded<Base: ServerChildChannel>(_ base: Base) -> any ServerChildChannel {
                GuardedChildChannel(
                    base: base, registry: registry, limits: limits, maxRequestBodyBytes: maxRequestBodyBytes)
            }
            let http = HTTP1WebSocketUpgradeChannel(
                responder: responder, configuration: http1, shouldUpgrade: shouldUpgrade)
            guard let tls else { return guarded(http) }
            return guarded(try TLSChannel(http, tlsConfiguration: tls))
        }
    }
}

/// Enforces ``ConnectionLimits`` on one HTTP/1 connection, between the HTTP decoder and the
/// request handling:
///
/// - the first request's head must arrive within `requestHeadTimeout` of the connection being
///   accepted (a bare TCP connection, a TLS handshake without a request and a partial header
///   are all closed then); later ones within `idleTimeout` of the previous response;
/// - a request body may pause at most `bodyReadTimeout` between reads;
/// - a request that declares a `Content-Length` over the body limit is answered 413 before
///   any of its body is read, and the connection closed;
/// - a head over the header limit is answered 431, a malformed one 400.
///
/// A WebSocket upgrade removes the guard (see ``remove(from:)``); the WebSocket's own pings then
/// keep watch.
final class HTTPConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// The guard's name in the channel pipeline.
    static let name = "rooftop.connection-guard"

    private let limits: ConnectionLimits
    private let maxRequestBodyBytes: Int
    private let logger: Logger
    private var timer: Scheduled<Void>?
    /// Whether the request being read has all arrived, and whether its response has been sent.
    private var requestComplete = true
    private var responseComplete = true
    private var refusing = false
    /// When the request body last delivered bytes (one timer watches it, instead of one per chunk).
    private var lastBodyRead = NIODeadline.now()

    init(limits: ConnectionLimits, maxRequestBodyBytes: Int, logger: Logger) {
        self.limits = limits
        self.maxRequestBodyBytes = maxRequestBodyBytes
        self.logger = logger
    }

    /// Removes the guard from a connection being upgraded to a WebSocket.
    static func remove(from channel: any Channel) async {
        do {
            try await channel.pipeline.removeHandler(name: name).get()
        } catch ChannelPipelineError.notFound {
            // Not guarded (a pipeline built without the guard): nothing to remove.
        } catch {
            // The connection closed meanwhile: the upgrade fails on its own.
        }
    }

    func handlerAdded(context: ChannelHandlerContext) {
        arm(context: context, after: limits.requestHeadTimeout, reason: "no request head")
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refusing else { return }
        let part = unwrapInboundIn(data)
        switch part {
        case .head(let head):
            if let declared = head.headers.first(name: "content-length").flatMap({ Int($0) }),
                declared > maxRequestBodyBytes
            {
                refuse(
                    context: context, status: .payloadTooLarge,
                    RooftopError(.sizeLimit, "the request body is over \(maxRequestBodyBytes) bytes"))
                return
            }
            requestComplete = false
            responseComplete = false
            lastBodyRead = .now()
            watchBody(context: context, after: TimeAmount(limits.bodyReadTimeout))
        case .body:
            lastBodyRead = .now()
        case .end:
            requestComplete = true
            cancelTimer()
            if responseComplete { arm(context: context, after: limits.idleTimeout, reason: "idle") }
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            responseComplete = true
            if requestComplete { arm(context: context, after: limits.idleTimeout, reason: "idle") }
        }
        context.write(data, promise: promise)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parserError = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        if case .headerOverflow = parserError {
            refuse(
                context: context, status: .requestHeaderFieldsTooLarge,
                RooftopError(.sizeLimit, "the request headers are over \(limits.maxHeaderBytes) bytes"))
        } else {
            refuse(context: context, status: .badRequest, RooftopError(.request, "malformed HTTP request: \(parserError)"))
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancelTimer()
        context.fireChannelInactive()
    }

    /// Answers with `error` as a JSON body and closes the connection; nothing more is read.
    private func refuse(context: ChannelHandlerContext, status: HTTPResponseStatus, _ error: RooftopError) {
        guard !refusing else { return }
        refusing = true
        cancelTimer()
        let body = (try? JSONEncoder().encode(error)) ?? Data(#"{"code":"request","message":"refused"}"#.utf8)
        var headers = HTTPHeaders()
        headers.add(name: "content-type", value: "application/json; charset=utf-8")
        headers.add(name: "content-length", value: String(body.count))
        headers.add(name: "connection", value: "close")
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
        let closing = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in closing.close(promise: nil) }
    }

    private func arm(context: ChannelHandlerContext, after timeout: Duration, reason: String) {
        timer?.cancel()
        let channel = context.channel
        let logger = self.logger
        timer = context.eventLoop.scheduleTask(in: TimeAmount(timeout)) {
            logger.debug("closing connection: \(reason)", metadata: ["address": "\(channel.remoteAddress?.ipAddress ?? "?")"])
            channel.close(mode: .all, promise: nil)
        }
    }

    /// Closes the connection once the body has not delivered anything for `bodyReadTimeout`;
    /// while it still arrives, looks again when the pause since its last bytes would reach it.
    private func watchBody(context: ChannelHandlerContext, after delay: TimeAmount) {
        timer?.cancel()
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: delay) { [self] in
            guard !requestComplete else { return }
            let context = loopBound.value
            let limit = TimeAmount(limits.bodyReadTimeout)
            let idle = NIODeadline.now() - lastBodyRead
            guard idle >= limit else {
                watchBody(context: context, after: limit - idle)
                return
            }
            logger.debug(
                "closing connection: request body stalled",
                metadata: ["address": "\(context.channel.remoteAddress?.ipAddress ?? "?")"])
            context.channel.close(mode: .all, promise: nil)
        }
    }

    private func cancelTimer() {
        timer?.cancel()
        timer = nil
    }
}

/// The process's limit on open files, which bounds how many connections it can hold.
enum OpenFileLimit {
    /// Raises the soft open-file limit to the hard one (as far as the system allows) and returns
    /// the limit in effect afterwards; 1,024 when it cannot be read.
    static func raise() -> Int {
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(resource, &raised) == 0 { limit = raised }
        }
        // RLIM_INFINITY and other huge values: more than any connection cap needs.
        return Int(exactly: limit.rlim_cur).map { min($0, 1 << 20) } ?? (1 << 20)
    }

    #if canImport(Glibc)
    private static let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let resource = RLIMIT_NOFILE
    #endif
}
