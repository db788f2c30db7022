import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTPTypes
import Hummingbird
import RooftopShared

/// The proxies and load balancers whose `X-Forwarded-For` is believed: the client address of a
/// request is its TCP peer's, unless that peer is one of them.
///
/// Behind trusted proxies, the address is the right-most one in `X-Forwarded-For` that is not
/// itself a trusted proxy: each proxy appends the address it saw, so entries further left were
/// written by the client and could be anything.
///
/// ```swift
/// let proxies = try TrustedProxies(["10.0.0.0/8", "::1"])
/// proxies.clientAddress(peer: "10.0.0.7", forwardedFor: ["203.0.113.9, 10.0.0.5"])   // "203.0.113.9"
/// proxies.clientAddress(peer: "198.51.100.1", forwardedFor: ["1.2.3.4"])             // "198.51.100.1"
/// ```
struct TrustedProxies: Sendable {
    /// An address and prefix length, e.g. `10.0.0.0/8`; a bare address is the whole length.
    private struct Network: Sendable {
        var bytes: [UInt8]
        var prefixLength: Int

        func contains(_ address: [UInt8]) -> Bool {
            guard address.count == bytes.count else { return false }
            var remaining = prefixLength
            for (mine, theirs) in zip(bytes, address) where remaining > 0 {
                let bits = min(8, remaining)
                let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
                if mine & mask != theirs & mask { return false }
                remaining -= bits
            }
            return true
        }
    }

    private let ranges: [Network]

    /// No trusted proxies: every request's client address is its TCP peer.
    static let none = TrustedProxies(ranges: [])

    private init(ranges: [Network]) { self.ranges = ranges }

    /// Parses addresses and ranges (`10.0.0.0/8`, `192.168.1.10`, `fd00::/8`, `::1`).
    /// - Throws: `illegalArgument` naming an entry that is neither.
    init(_ entries: [String]) throws(RooftopError) {
        var ranges: [Network] = []
        for entry in entries {
            let parts = entry.split(separator: "/", maxSplits: 1).map(String.init)
            guard let first = parts.first, let bytes = Self.parse(first) else {
                throw RooftopError(.illegalArgument, "trusted proxy '\(entry.prefix(80))' is not an IP address or range")
            }
            var length = bytes.count * 8
            if parts.count == 2 {
                guard let given = Int(parts[1]), (0...length).contains(given) else {
                    throw RooftopError(.illegalArgument, "trusted proxy '\(entry.prefix(80))' has a bad prefix length")
                }
                length = given
            }
            ranges.append(Network(bytes: bytes, prefixLength: length))
        }
        self.ranges = ranges
    }

    /// Whether there are any.
    var isEmpty: Bool { ranges.isEmpty }

    /// Whether `address` (IPv4 or IPv6 text) is a trusted proxy.
    func contains(_ address: String) -> Bool {
        guard !ranges.isEmpty, let bytes = Self.parse(address) else { return false }
        return ranges.contains { $0.contains(bytes) }
    }

    /// The client address of a request from `peer` carrying these `X-Forwarded-For` values (in
    /// header order): the peer, unless it is trusted; then the right-most forwarded address that
    /// is not trusted (in canonical form), or the left-most when all are. An entry that is not an
    /// IP address ends the walk: the last trusted address seen stands for the client.
    func clientAddress(peer: String?, forwardedFor: [String]) -> String? {
        guard var client = peer, contains(client) else { return peer }
        let hops = forwardedFor.flatMap { $0.split(separator: ",") }
        for hop in hops.reversed() {
            guard let bytes = Self.parse(hop.trimmingCharacters(in: .whitespaces)) else { break }
            client = Self.format(bytes)
            if !ranges.contains(where: { $0.contains(bytes) }) { break }
        }
        return client
    }

    /// The 4 or 16 bytes of an IPv4 or IPv6 address (IPv4-mapped IPv6 as IPv4), or `nil`.
    static func parse(_ text: String) -> [UInt8]? {
        guard text.utf8.count <= 64 else { return nil }
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF { return Array(bytes[12...]) }
        return bytes
    }

    /// The canonical text of 4 or 16 address bytes.
    static func format(_ bytes: [UInt8]) -> String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        let written = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &buffer, socklen_t(buffer.count)) }
        guard written != nil else { return "unknown" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

extension HTTPField.Name {
    /// `X-Forwarded-For`, read from trusted proxies only.
    static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!
}

/// Sets ``RooftopRequestContext/clientAddress`` from `X-Forwarded-For` when the request came
/// through a trusted proxy (see ``TrustedProxies``).
struct ClientAddressMiddleware: RouterMiddleware {
    typealias Context = RooftopRequestContext

    let proxies: TrustedProxies

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        guard !proxies.isEmpty else { return try await next(request, context) }
        var context = context
        context.clientAddress = proxies.clientAddress(
            peer: context.clientAddress, forwardedFor: request.headers[values: .xForwardedFor])
        return try await next(request, context)
    }
}
