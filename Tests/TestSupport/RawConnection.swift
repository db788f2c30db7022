import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A plain TCP connection to a local port, made with the socket API so that a test controls
/// every byte (nothing at all, half a request) and the source address (any of 127.0.0.0/8, to
/// act as several clients on one machine).
///
/// ```swift
/// let idle = try RawConnection(port: server.port, from: "127.0.0.2")
/// #expect(idle.waitUntilClosed(within: .seconds(20)))
/// ```
public final class RawConnection: @unchecked Sendable {
    private var descriptor: Int32
    /// What the peer sent so far.
    public private(set) var received: [UInt8] = []

    /// Connects to `127.0.0.1:port` from `source` (an IPv4 loopback address).
    /// - Throws: ``TestSupportError`` when the socket cannot be made, bound or connected.
    public init(port: Int, from source: String = "127.0.0.1") throws {
        let descriptor = try Sockets.tcp()
        self.descriptor = descriptor
        var local = try Self.address(source, port: 0)
        var remote = try Self.address("127.0.0.1", port: port)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            Sockets.close(descriptor)
            throw TestSupportError("bind(\(source)) failed: errno \(errno)")
        }
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            Sockets.close(descriptor)
            throw TestSupportError("connect to port \(port) failed: errno \(errno)")
        }
    }

    deinit { close() }

    private static func address(_ text: String, port: Int) throws -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        guard let port = UInt16(exactly: port) else { throw TestSupportError("bad port \(port)") }
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, text, &address.sin_addr) == 1 else { throw TestSupportError("bad address \(text)") }
        return address
    }

    /// Sends `bytes`.
    /// - Throws: ``TestSupportError`` when the connection is closed or the send fails.
    public func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Sockets.send(descriptor, $0) }
            guard sent > 0 else { throw TestSupportError("send failed: errno \(errno)") }
            offset += sent
        }
    }

    /// Sends `text` as UTF-8.
    public func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// Reads until the peer closes (or resets) the connection or `deadline` passes, keeping
    /// what arrives in ``received``.
    /// - Returns: Whether the peer closed the connection in time.
    /// The reads block on a thread of their own (``BlockingRead/run(_:)``), never on one of the
    /// cooperative pool's.
    public func waitUntilClosed(within deadline: Duration) async -> Bool {
        await BlockingRead.run { self.read(until: deadline) { _ in false } }
    }

    /// Reads until ``received`` holds `text`, the peer closes, or `deadline` passes.
    /// - Returns: Whether `text` arrived.
    public func waitForText(_ text: String, within deadline: Duration) async -> Bool {
        _ = await BlockingRead.run { self.read(until: deadline) { String(decoding: $0, as: UTF8.self).contains(text) } }
        return receivedText.contains(text)
    }

    /// ``received`` as text.
    public var receivedText: String { String(decoding: received, as: UTF8.self) }

    /// Reads in slices of at most 100 ms until `done` holds for what arrived, the peer closes
    /// (returns true) or `deadline` passes (returns false).
    private func read(until deadline: Duration, done: ([UInt8]) -> Bool) -> Bool {
        let clock = ContinuousClock()
        let end = clock.now.advanced(by: deadline)
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while clock.now < end, descriptor >= 0 {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return true }  // 0: closed; below 0: reset.
            received.append(contentsOf: buffer[0..<count])
            if done(received) { return false }
        }
        return false
    }

    /// Closes the connection (idempotent).
    public func close() {
        if descriptor >= 0 { Sockets.close(descriptor) }
        descriptor = -1
    }
}
