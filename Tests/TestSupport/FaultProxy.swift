import NIOCore
import NIOPosix
import Synchronization

/// A TCP proxy for tests that injects network faults between clients and a server on this
/// machine: it listens on `127.0.0.1` on a free port and forwards every connection to
/// `127.0.0.1:<target port>`, byte for byte, unless its ``Mode`` says otherwise. The mode can be
/// switched at any time; the proxy's port stays the same whatever happens behind it, so a server
/// can be killed and restarted (on another port, see ``retarget(port:)``) while clients keep
/// their URL.
///
/// TLS passes through untouched: a certificate for `127.0.0.1` is valid for the proxy's address
/// too, so a client only needs the proxy's port in its URL.
///
/// ```swift
/// try await FaultProxy.with(targetPort: server.port) { proxy in
///     configuration.serverURL = URL(string: "https://127.0.0.1:\(proxy.port)")!
///     proxy.mode = .resetResponse(afterBytes: 4096)
///     ...
/// }
/// ```
///
/// Loopback only, one event-loop thread; ``shutdown()`` (or leaving ``with(targetPort:_:)``)
/// closes the listener and every connection.
public final class FaultProxy: Sendable {
    /// What the proxy does to the traffic.
    public enum Mode: Sendable, Equatable, CustomStringConvertible {
        /// Forwards everything as it comes.
        case passThrough
        /// Forwards everything, each chunk delayed by this much (order kept).
        case latency(Duration)
        /// Resets each connection (TCP RST both ways) once it has carried more than this many
        /// bytes from the client to the server since the mode was set: a request cut short.
        case resetRequest(afterBytes: Int)
        /// Resets each connection once it has carried more than this many bytes from the server
        /// to the client since the mode was set: a response cut short.
        case resetResponse(afterBytes: Int)
        /// Accepts connections and holds them, forwarding nothing either way.
        case blackhole
        /// Closes one direction of every connection (a FIN that way) and drops what still comes
        /// for it; the other direction keeps flowing.
        case halfOpen(Direction)
        /// Resets new connections as soon as they are accepted and cuts the open ones.
        case down

        /// The mode in words, for messages.
        public var description: String {
            switch self {
            case .passThrough: "pass-through"
            case .latency(let delay): "latency \(delay)"
            case .resetRequest(let bytes): "reset after \(bytes) request bytes"
            case .resetResponse(let bytes): "reset after \(bytes) response bytes"
            case .blackhole: "blackhole"
            case .halfOpen(let direction): "half-open (\(direction) closed)"
            case .down: "down"
            }
        }
    }

    /// One direction of a proxied connection.
    public enum Direction: Sendable, Equatable, CustomStringConvertible {
        /// From the client to the server.
        case toServer
        /// From the server to the client.
        case toClient

        /// The direction in words, for messages.
        public var description: String { self == .toServer ? "client to server" : "server to client" }
    }

    /// What the proxy has done so far.
    public struct Statistics: Sendable, Equatable {
        /// Connections accepted from clients (refused ones included).
        public var accepted = 0
        /// Connections reset at once because the proxy was ``Mode/down``.
        public var refused = 0
        /// Connections reset mid-request or mid-response.
        public var resets = 0
        /// Open connections cut when the proxy went ``Mode/down``.
        public var cut = 0
        /// Connections that swallowed traffic in ``Mode/blackhole``.
        public var blackholed = 0
        /// Directions closed by ``Mode/halfOpen(_:)``.
        public var halfClosed = 0
        /// Bytes forwarded from clients to the server.
        public var bytesToServer = 0
        /// Bytes forwarded from the server to clients.
        public var bytesToClient = 0
        /// Connections open now.
        public var open = 0

        /// Faults injected: refused, reset, cut, blackholed and half-closed connections.
        public var faults: Int { refused + resets + cut + blackholed + halfClosed }
    }

    struct State {
        var mode: Mode = .passThrough
        /// Bumped on every mode change: connections restart their byte counts then.
        var epoch = 0
        var targetPort: Int
        var links: [ObjectIdentifier: ProxyLink] = [:]
        var statistics = Statistics()
        var closed = false
    }

    /// The port the proxy listens on (on `127.0.0.1`).
    public let port: Int
    let state: Mutex<State>
    private let group: MultiThreadedEventLoopGroup
    private let listener: Mutex<(any Channel)?>

    private init(port: Int, targetPort: Int, group: MultiThreadedEventLoopGroup, listener: any Channel) {
        self.port = port
        self.state = Mutex(State(targetPort: targetPort))
        self.group = group
        self.listener = Mutex(listener)
    }

    /// Starts a proxy to `127.0.0.1:targetPort`, in ``Mode/passThrough``.
    /// - Throws: When the listening socket cannot be bound.
    public static func start(targetPort: Int) async throws -> FaultProxy {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let box = ProxyBox()
        do {
            let listener = try await ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 64)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    guard let proxy = box.proxy else { return channel.close() }
                    return proxy.accept(channel)
                }
                .bind(host: "127.0.0.1", port: 0).get()
            guard let port = listener.localAddress?.port else {
                try? await listener.close()
                throw TestSupportError("the proxy's listening socket has no port")
            }
            let proxy = FaultProxy(
                port: port, targetPort: targetPort, group: group, listener: listener)
            box.proxy = proxy
            return proxy
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// Runs `body` with a proxy to `127.0.0.1:targetPort`, shut down on every path.
    public static func with<T>(targetPort: Int, _ body: (FaultProxy) async throws -> T) async throws -> T {
        try await scoped(try await start(targetPort: targetPort), release: { await $0.shutdown() }, body)
    }

    /// What the proxy does now. Setting ``Mode/down`` cuts the open connections at once;
    /// ``Mode/halfOpen(_:)`` closes that direction of the open connections at once; leaving
    /// ``Mode/blackhole`` resets the connections that swallowed traffic (their streams have lost
    /// bytes, as a connection that timed out would have).
    public var mode: Mode {
        get { state.withLock { $0.mode } }
        set { setMode(newValue) }
    }

    /// What the proxy has done so far.
    public var statistics: Statistics { state.withLock { $0.statistics } }

    /// The server port connections are forwarded to from now on (open connections stay where
    /// they are).
    public func retarget(port: Int) {
        state.withLock { $0.targetPort = port }
    }

    /// Cuts every open connection now (TCP RST), whatever the mode.
    public func cutConnections() {
        let links = state.withLock { state in
            state.statistics.cut += state.links.count
            return Array(state.links.values)
        }
        for link in links { link.reset() }
    }

    /// Closes the listener and every connection, and stops the proxy's thread.
    public func shutdown() async {
        let (links, listener) = state.withLock { state -> ([ProxyLink], (any Channel)?) in
            state.closed = true
            return (Array(state.links.values), self.listener.withLock { $0.take() })
        }
        try? await listener?.close()
        for link in links { link.reset() }
        try? await group.shutdownGracefully()
    }

    private func setMode(_ mode: Mode) {
        let (links, cut) = state.withLock { state -> ([ProxyLink], Bool) in
            state.mode = mode
            state.epoch += 1
            let cut = mode == .down
            if cut { state.statistics.cut += state.links.count }
            return (Array(state.links.values), cut)
        }
        for link in links {
            if cut { link.reset() } else { link.modeChanged(to: mode) }
        }
    }

    /// Takes a new client connection: refuses it when down, else connects it to the server.
    private func accept(_ channel: any Channel) -> EventLoopFuture<Void> {
        let (mode, target, closed) = state.withLock { state in
            state.statistics.accepted += 1
            if state.mode == .down { state.statistics.refused += 1 }
            return (state.mode, state.targetPort, state.closed)
        }
        if mode == .down || closed {
            ProxyLink.resetChannel(channel)
            return channel.eventLoop.makeSucceededVoidFuture()
        }
        let link = ProxyLink(proxy: self, client: channel)
        register(link)
        channel.closeFuture.whenComplete { _ in self.unregister(link) }
        return link.start(targetPort: target)
    }

    private func register(_ link: ProxyLink) {
        state.withLock { state in
            state.links[ObjectIdentifier(link)] = link
            state.statistics.open = state.links.count
        }
    }

    private func unregister(_ link: ProxyLink) {
        state.withLock { state in
            state.links[ObjectIdentifier(link)] = nil
            state.statistics.open = state.links.count
        }
    }

    /// The mode and its epoch, for a link deciding what to do with a chunk.
    func currentMode() -> (Mode, Int) {
        state.withLock { ($0.mode, $0.epoch) }
    }

    /// Adds to the statistics.
    func count(_ change: (inout Statistics) -> Void) {
        state.withLock { change(&$0.statistics) }
    }
}

/// Hands the proxy to the listener's initializer, which exists before the proxy does.
private final class ProxyBox: Sendable {
    private let value = Mutex<FaultProxy?>(nil)

    var proxy: FaultProxy? {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}
