import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One proxied connection: the client's channel, the channel to the server, and what each
/// direction has carried since the mode last changed.
///
/// `@unchecked Sendable`: every mutable property is touched only on the client channel's event
/// loop (the server channel is made on the same loop); other threads only call ``reset()`` and
/// ``modeChanged(to:)``, which hop onto that loop.
final class ProxyLink: @unchecked Sendable {
    private let proxy: FaultProxy
    let client: any Channel
    private var server: (any Channel)?
    private var epoch = -1
    private var bytes: [FaultProxy.Direction: Int] = [:]
    /// When the last delayed chunk of each direction goes out, so that delays keep the order.
    private var releases: [FaultProxy.Direction: NIODeadline] = [:]
    private var blackholed = false
    private var closedDirections: Set<FaultProxy.Direction> = []
    private var finished = false
    /// What the client sent before the server connection was up.
    private var pending: [ByteBuffer] = []

    private var loop: any EventLoop { client.eventLoop }

    init(proxy: FaultProxy, client: any Channel) {
        self.proxy = proxy
        self.client = client
    }

    /// Starts relaying: reads from the client at once (what comes before the server connection
    /// is up waits in order), and connects to the server.
    func start(targetPort: Int) -> EventLoopFuture<Void> {
        let link = self
        return client.pipeline.addHandler(RelayHandler(link: link, from: .toServer)).map {
            ClientBootstrap(group: link.loop)
                .connectTimeout(.seconds(5))
                .channelInitializer { channel in
                    channel.pipeline.addHandler(RelayHandler(link: link, from: .toClient))
                }
                .connect(host: "127.0.0.1", port: targetPort)
                .whenComplete { result in link.connected(result) }
        }
    }

    /// The connection to the server is up (or failed: the client sees its connection reset).
    private func connected(_ result: Result<any Channel, any Error>) {
        loop.assertInEventLoop()
        guard case .success(let server) = result else {
            resetOnLoop()
            return
        }
        self.server = server
        server.closeFuture.whenComplete { _ in self.close() }
        if finished {
            ProxyLink.resetChannel(server)
            return
        }
        let waiting = pending
        pending = []
        for chunk in waiting { forward(chunk, .toServer) }
        let (mode, _) = proxy.currentMode()
        if case .halfOpen(let direction) = mode { halfCloseOnLoop(direction) }
    }

    /// A chunk read from one side: forwarded, delayed, dropped or answered with a reset.
    func relay(_ chunk: ByteBuffer, _ direction: FaultProxy.Direction) {
        loop.assertInEventLoop()
        guard !finished else { return }
        let (mode, epoch) = proxy.currentMode()
        if epoch != self.epoch {
            self.epoch = epoch
            bytes = [:]
        }
        let size = chunk.readableBytes
        let carried = bytes[direction, default: 0]
        bytes[direction] = carried + size
        switch mode {
        case .passThrough:
            forward(chunk, direction)
        case .latency(let delay):
            let now = NIODeadline.now()
            let release = max(now + TimeAmount(delay), releases[direction] ?? now)
            releases[direction] = release
            loop.scheduleTask(deadline: release) { self.forward(chunk, direction) }
        case .resetRequest(let limit) where direction == .toServer,
            .resetResponse(let limit) where direction == .toClient:
            if carried + size <= limit {
                forward(chunk, direction)
            } else {
                // Forward what fits under the limit, so the cut falls inside the message.
                var head = chunk
                if let part = head.readSlice(length: max(0, limit - carried)), part.readableBytes > 0 {
                    forward(part, direction)
                }
                proxy.count { $0.resets += 1 }
                resetOnLoop()
            }
        case .resetRequest, .resetResponse:
            forward(chunk, direction)
        case .blackhole:
            if !blackholed {
                blackholed = true
                proxy.count { $0.blackholed += 1 }
            }
        case .halfOpen(let closed):
            if closed == direction {
                halfCloseOnLoop(direction)
            } else {
                forward(chunk, direction)
            }
        case .down:
            resetOnLoop()
        }
    }

    /// Cuts both sides with a TCP reset (from any thread).
    func reset() {
        loop.execute { self.resetOnLoop() }
    }

    /// Applies a new mode to this open connection (from any thread): half-closes it for
    /// ``FaultProxy/Mode/halfOpen(_:)``, resets it when it swallowed traffic in a blackhole.
    func modeChanged(to mode: FaultProxy.Mode) {
        loop.execute {
            if case .halfOpen(let direction) = mode {
                self.halfCloseOnLoop(direction)
            } else if self.blackholed && mode != .blackhole {
                self.resetOnLoop()
            }
        }
    }

    /// One side closed: close the other.
    func close() {
        loop.execute {
            guard !self.finished else { return }
            self.finished = true
            self.client.close(promise: nil)
            self.server?.close(promise: nil)
        }
    }

    private func forward(_ chunk: ByteBuffer, _ direction: FaultProxy.Direction) {
        guard !finished, !closedDirections.contains(direction) else { return }
        let target = direction == .toServer ? server : client
        guard let target else {
            pending.append(chunk)
            return
        }
        let size = chunk.readableBytes
        target.writeAndFlush(chunk, promise: nil)
        proxy.count { statistics in
            if direction == .toServer { statistics.bytesToServer += size } else { statistics.bytesToClient += size }
        }
    }

    private func resetOnLoop() {
        guard !finished else { return }
        finished = true
        ProxyLink.resetChannel(client)
        if let server { ProxyLink.resetChannel(server) }
    }

    private func halfCloseOnLoop(_ direction: FaultProxy.Direction) {
        guard !finished, let server, !closedDirections.contains(direction) else { return }
        closedDirections.insert(direction)
        proxy.count { $0.halfClosed += 1 }
        // The receiving side of that direction gets a FIN; what still comes for it is dropped.
        (direction == .toServer ? server : client).close(mode: .output, promise: nil)
    }

    /// Closes a channel with SO_LINGER 0, so that the peer gets a TCP RST rather than a FIN.
    static func resetChannel(_ channel: any Channel) {
        if let provider = channel as? any SocketOptionProvider {
            provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil) }
        } else {
            channel.close(promise: nil)
        }
    }
}

/// Reads one side of a link and hands each chunk to it; closes the link when that side goes.
private final class RelayHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer

    private let link: ProxyLink
    private let direction: FaultProxy.Direction

    init(link: ProxyLink, from direction: FaultProxy.Direction) {
        self.link = link
        self.direction = direction
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        link.relay(unwrapInboundIn(data), direction)
    }

    func channelInactive(context: ChannelHandlerContext) {
        link.close()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        link.close()
    }
}
