import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Logging
import Metrics
import NIOCore
import Synchronization

/// Counts open connections and admits a new one under two caps, aimed at connections that have
/// not yet completed a request (*unproven*: a bare TCP connection, a TLS handshake, a request
/// still arriving), which is what an attacker holding idle sockets has:
///
/// - at ``maxConnections`` in all, the oldest unproven connection is closed to make room for the
///   new one; when there is none, the connection idle the longest between keep-alive requests
///   (refused only when every open connection is busy or a live WebSocket);
/// - an address with ``maxConnectionsPerAddress`` unproven connections has its next one refused;
///   established connections (a completed response, a live WebSocket) do not count, so many
///   clients behind one NAT or proxy are not refused; trusted proxies are not capped at all;
/// - and one address may hold at most ``maxOpenPerAddress`` connections of every kind — half of
///   ``maxConnections`` — so that one address cannot take every place with established
///   connections, which are never closed to make room (anonymous live WebSockets, say).
///
/// A refused or evicted connection is closed before its TLS handshake or request; refusals are
/// logged at most once a minute, with their count.
final class ConnectionRegistry: Sendable {
    /// An admitted connection, to ``establish(_:)``, ``idle(_:)``, ``busy(_:)`` and ``release(_:)``.
    struct Ticket: Sendable {
        fileprivate let id: UInt64
    }

    private struct Entry {
        var address: String
        var channel: any Channel
        var established: Bool
        /// Set while the connection waits for its next keep-alive request: the mark of its place
        /// in `State.idle`.
        var idleMark: UInt64?
    }

    /// A first-in, first-out queue whose entries may go stale: stale ones are skipped at the front,
    /// and the passed part of the array is dropped once it is most of it.
    private struct Queue<Element> {
        private var items: [Element] = []
        private var head = 0

        mutating func append(_ item: Element) { items.append(item) }

        /// The first entry that is not stale, after dropping those before it.
        mutating func first(isStale: (Element) -> Bool) -> Element? {
            while head < items.count, isStale(items[head]) { head += 1 }
            if head >= 1024, head * 2 >= items.count {
                items.removeFirst(head)
                head = 0
            }
            return head < items.count ? items[head] : nil
        }
    }

    private struct State {
        var nextID: UInt64 = 0
        var connections: [UInt64: Entry] = [:]
        var unprovenPerAddress: [String: Int] = [:]
        var openPerAddress: [String: Int] = [:]
        /// Unproven connections in admission order (and stale IDs of those no longer unproven).
        var unproven = Queue<UInt64>()
        /// Idle keep-alive connections in the order they became idle, with their marks (an entry
        /// whose connection's mark differs is stale).
        var idle = Queue<(id: UInt64, mark: UInt64)>()
        var nextMark: UInt64 = 0

        /// The connection to close to make room: the oldest unproven, else the one idle longest.
        mutating func victim() -> UInt64? {
            let connections = self.connections
            if let id = unproven.first(isStale: { connections[$0]?.established ?? true }) { return id }
            return idle.first { connections[$0.id]?.idleMark != $0.mark }?.id
        }

        /// Drops stale entries at the queues' fronts (so that they do not grow while nothing is evicted).
        mutating func tidy() { _ = victim() }

        mutating func unprove(_ address: String) {
            let remaining = unprovenPerAddress[address, default: 1] - 1
            unprovenPerAddress[address] = remaining > 0 ? remaining : nil
        }

        /// Forgets a closed or evicted connection.
        mutating func remove(_ entry: Entry) {
            if !entry.established { unprove(entry.address) }
            let remaining = openPerAddress[entry.address, default: 1] - 1
            openPerAddress[entry.address] = remaining > 0 ? remaining : nil
        }
    }

    let maxConnections: Int
    let maxConnectionsPerAddress: Int
    /// The most connections of every kind from one address: half of ``maxConnections`` (at least
    /// ``maxConnectionsPerAddress``); trusted proxies are exempt.
    let maxOpenPerAddress: Int
    private let exempt: TrustedProxies
    private let logger: Logger
    private let state = Mutex(State())
    private let open = Gauge(label: "rooftop_connections_open")
    private let refused = Counter(label: "rooftop_connections_refused_total")
    private let evicted = Counter(label: "rooftop_connections_evicted_total")
    private let refusalLog = LogRateLimiter()
    /// Limits the lines logged for connections that close before their first request.
    let closedLog = LogRateLimiter()

    /// - Parameters:
    ///   - maxConnections: The most connections at once (at least 1).
    ///   - maxConnectionsPerAddress: The most unproven connections from one address; 0 for no cap.
    ///   - exempt: Addresses with no per-address cap (trusted proxies; default none).
    ///   - logger: Where refusals are logged (at most once a minute).
    init(
        maxConnections: Int, maxConnectionsPerAddress: Int, exempt: TrustedProxies = .none,
        logger: Logger = Logger(label: "rooftop-server")
    ) {
        self.maxConnections = maxConnections
        self.maxConnectionsPerAddress = maxConnectionsPerAddress
        self.maxOpenPerAddress = max(maxConnectionsPerAddress, maxConnections / 2, 1)
        self.exempt = exempt
        self.logger = logger
    }

    /// Admits `channel` from `address` when the caps allow, closing the oldest unproven
    /// connection when all places are taken. An admitted one must be ``release(_:)``d when it
    /// closes.
    /// - Returns: Its ticket, or `nil` when refused.
    func admit(_ address: String, channel: any Channel) -> Ticket? {
        let exempted = exempt.contains(address)
        let capped = maxConnectionsPerAddress > 0 && !exempted
        let (ticket, victim, refusals) = state.withLock { state -> (Ticket?, (any Channel)?, Int?) in
            if capped, state.unprovenPerAddress[address, default: 0] >= maxConnectionsPerAddress {
                return (nil, nil, refusalLog.note())
            }
            if !exempted, state.openPerAddress[address, default: 0] >= maxOpenPerAddress {
                return (nil, nil, refusalLog.note())
            }
            var victim: (any Channel)?
            if state.connections.count >= maxConnections {
                guard let id = state.victim(), let oldest = state.connections.removeValue(forKey: id) else {
                    return (nil, nil, refusalLog.note())
                }
                state.remove(oldest)
                state.tidy()
                victim = oldest.channel
            }
            let id = state.nextID
            state.nextID += 1
            state.connections[id] = Entry(address: address, channel: channel, established: false)
            state.unprovenPerAddress[address, default: 0] += 1
            state.openPerAddress[address, default: 0] += 1
            state.unproven.append(id)
            return (Ticket(id: id), victim, nil)
        }
        if let victim {
            evicted.increment()
            victim.close(promise: nil)
        }
        if ticket == nil { refused.increment() }
        if let refusals {
            logger.warning(
                "connections refused: too many open, or too many not yet sent a request from one address",
                metadata: ["refused since the last line": "\(refusals)", "address": "\(address)"])
        }
        open.record(openConnections)
        return ticket
    }

    /// Marks a connection established (it completed a request, or became a WebSocket): it no
    /// longer counts against its address's cap, and is never closed to make room.
    func establish(_ ticket: Ticket) {
        state.withLock { state in
            guard let entry = state.connections[ticket.id], !entry.established else { return }
            state.connections[ticket.id]?.established = true
            state.unprove(entry.address)
            state.tidy()
        }
    }

    /// Marks a connection idle, waiting for its next keep-alive request: at the global cap, the
    /// one idle longest is closed when no unproven connection is left to close.
    func idle(_ ticket: Ticket) {
        state.withLock { state in
            guard state.connections[ticket.id] != nil else { return }
            let mark = state.nextMark
            state.nextMark += 1
            state.connections[ticket.id]?.idleMark = mark
            state.idle.append((ticket.id, mark))
            state.tidy()
        }
    }

    /// Marks a connection busy again (a request is arriving): it is no longer closed to make room.
    func busy(_ ticket: Ticket) {
        state.withLock { state in state.connections[ticket.id]?.idleMark = nil }
    }

    /// Releases an admitted connection (once it closed; a second call does nothing).
    func release(_ ticket: Ticket) {
        state.withLock { state in
            guard let entry = state.connections.removeValue(forKey: ticket.id) else { return }
            state.remove(entry)
            state.tidy()
        }
        open.record(openConnections)
    }

    /// The connections open now.
    var openConnections: Int { state.withLock { $0.connections.count } }
}

/// Lets a repeated log line through at most once per interval, counting the ones held back.
final class LogRateLimiter: Sendable {
    private let interval: TimeAmount
    private let state = Mutex<(count: Int, last: NIODeadline?)>((0, nil))

    /// - Parameter interval: The least time between two lines (default a minute).
    init(interval: TimeAmount = .minutes(1)) { self.interval = interval }

    /// Counts an occurrence.
    /// - Returns: How many occurred since the last line (this one included) when a line is due
    ///   now, else `nil`.
    func note() -> Int? {
        state.withLock { state in
            state.count += 1
            let now = NIODeadline.now()
            if let last = state.last, now - last < interval { return nil }
            defer { state.count = 0 }
            state.last = now
            return state.count
        }
    }
}

/// The log of one connection's HTTP handling: HummingbirdWebSocket logs an *error* for every
/// connection closed before its first request (refused, evicted to make room, or timed out), a
/// line per connection that idle sockets can multiply. Those lines are let through once a minute,
/// as a warning with their count; every other line passes unchanged.
struct ConnectionLogHandler: LogHandler {
    /// The message HummingbirdWebSocket logs for a connection closed before its request.
    static let closedBeforeRequest = "Error handling upgrade result"

    var base: any LogHandler
    let limiter: LogRateLimiter

    func log(event: LogEvent) {
        guard event.level >= .error, event.message.description == Self.closedBeforeRequest else {
            base.log(event: event)
            return
        }
        guard let count = limiter.note() else { return }
        var event = event
        event.level = .warning
        event.message = "connections closed before their first request"
        event.metadata = (event.metadata ?? [:]).merging(["since the last line": "\(count)"]) { $1 }
        base.log(event: event)
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { base.metadataProvider }
        set { base.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { base[metadataKey: key] }
        set { base[metadataKey: key] = newValue }
    }

    var metadata: Logger.Metadata {
        get { base.metadata }
        set { base.metadata = newValue }
    }

    var logLevel: Logger.Level {
        get { base.logLevel }
        set { base.logLevel = newValue }
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
