#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A local TCP port that refuses connections: a socket bound to `127.0.0.1` on a free port but
/// not listening, held until ``close()`` so that no other process takes the port meanwhile.
/// Connecting to it fails at once with "connection refused", like a server that is down.
///
/// A `silent` port listens but never accepts: the kernel completes TCP handshakes, and then
/// nothing ever answers, like a server that hangs.
public final class ClosedPort: Sendable {
    /// The port number.
    public let port: Int
    private let descriptor: Int32

    /// Reserves a port.
    /// - Parameter silent: Listen (without ever accepting) instead of refusing.
    /// - Throws: ``TestSupportError`` when the socket cannot be made or bound.
    public init(silent: Bool = false) throws {
        let descriptor = try Sockets.tcp()
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(descriptor, socketAddress, length) == 0 && getsockname(descriptor, socketAddress, &length) == 0
            }
        }
        guard bound, !silent || listen(descriptor, 16) == 0 else {
            Sockets.close(descriptor)
            throw TestSupportError("bind() or listen() failed: errno \(errno)")
        }
        self.descriptor = descriptor
        self.port = Int(UInt16(bigEndian: address.sin_port))
    }

    /// Releases the port.
    public func close() {
        Sockets.close(descriptor)
    }
}
