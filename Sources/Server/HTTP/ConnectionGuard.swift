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

/// Wraps the server's child channel (TLS, HTTP/1 and the WebSocket upgrade): admits each
/// accepted connection through the ``ConnectionRegistry``, and puts an ``HTTPConnectionGuard``
/// right after the HTTP decoder to enforce the timeouts and limits of ``ConnectionLimits``.
struct GuardedChildChannel<Base: ServerChildChannel>: ServerChildChannel {
    /// An admitted connection's value, or `nil` for a refused one (closed at once, set up no further).
    struct Value: ServerChildChannelValue {
        var base: Base.Value?
        /// The connection.
        var channel: any Channel
    }

    let base: Base
    let registry: ConnectionRegistry
    let limits: ConnectionLimits
    let maxRequestBodyBytes: Int

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let address = channel.remoteAddress?.ipAddress ?? "unknown"
        let registry = self.registry
        guard let ticket = registry.admit(address, channel: channel) else {
            // Closed rather than failed: a failed child channel setup would reach the server's
            // accept loop as an error. The registry logs refusals, a line a minute.
            channel.close(promise: nil)
            return channel.eventLoop.makeSucceededFuture(Value(base: nil, channel: channel))
        }
        channel.closeFuture.whenComplete { _ in registry.release(ticket) }
        let limits = self.limits
        let maxRequestBodyBytes = self.maxRequestBodyBytes
        return base.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let operations = channel.pipeline.syncOperations
            let decoder = try operations.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try operations.addHandler(
                HTTPConnectionGuard(
                    limits: limits, maxRequestBodyBytes: maxRequestBodyBytes, logger: logger,
                    registry: ConnectionMarks(registry: registry, ticket: ticket)),
                name: HTTPConnectionGuard.name, position: .after(decoder))
            return Value(base: value, channel: channel)
        }
    }

    func handle(value: Value, logger: Logger) async {
        guard let admitted = value.base else { return }
        var logger = logger
        logger.handler = ConnectionLogHandler(base: logger.handler, limiter: registry.closedLog)
        await base.handle(value: admitted, logger: logger)
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
/// keep watch. The first complete response, or the upgrade, marks the connection established
/// in the ``ConnectionRegistry``.
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
    /// Where the connection's state is told: established once, at the first complete response or
    /// when the guard is removed for an upgrade; idle and busy between keep-alive requests.
    private var marks: ConnectionMarks?
    private var establishedMarked = false
    private var timer: Scheduled<Void>?
    /// Whether the request being read has all arrived, and whether its response has been sent.
    private var requestComplete = true
    private var responseComplete = true
    private var refusing = false
    /// When the request body last delivered bytes (one timer watches it, instead of one per chunk).
    private var lastBodyRead = NIODeadline.now()

    init(limits: ConnectionLimits, maxRequestBodyBytes: Int, logger: Logger, registry: ConnectionMarks? = nil) {
        self.limits = limits
        self.maxRequestBodyBytes = maxRequestBodyBytes
        self.logger = logger
        self.marks = registry
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
        // Removed for a WebSocket upgrade (or as the connection closes, when it no longer matters).
        markEstablished()
    }

    private func markEstablished() {
        guard !establishedMarked else { return }
        establishedMarked = true
        marks.map { $0.registry.establish($0.ticket) }
    }

    /// Arms the idle timeout, and tells the registry the connection is idle.
    private func armIdle(context: ChannelHandlerContext) {
        arm(context: context, after: limits.idleTimeout, reason: "idle")
        marks.map { $0.registry.idle($0.ticket) }
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
            marks.map { $0.registry.busy($0.ticket) }
            lastBodyRead = .now()
            watchBody(context: context, after: TimeAmount(limits.bodyReadTimeout))
        case .body:
            lastBodyRead = .now()
        case .end:
            requestComplete = true
            cancelTimer()
            if responseComplete { armIdle(context: context) }
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            responseComplete = true
            if !refusing { markEstablished() }
            if requestComplete { armIdle(context: context) }
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

/// A connection's ticket in the ``ConnectionRegistry``, for its ``HTTPConnectionGuard``.
struct ConnectionMarks: Sendable {
    let registry: ConnectionRegistry
    let ticket: ConnectionRegistry.Ticket
}
