import Foundation
import RooftopShared
import RooftopTestSupport
import Testing

/// Connections that send nothing, too little or too much are closed; caps keep room for other
/// clients. Each server runs with short timeouts or small caps so that every wait is a short
/// condition with a generous deadline (the deadlines bound the test; they are not the timeouts
/// being tested).
@Suite("Connections: timeouts, header and body limits, caps", .serialized)
struct ConnectionLimitsTests {
    /// Far longer than any timeout configured below: a connection still open then was never closed.
    static let closeDeadline: Duration = .seconds(20)
    /// For connections refused at once, waited on together: long enough for a server kept from
    /// accepting by a starved machine (CI once saw one accept nothing for over a minute).
    static let slowAcceptDeadline: Duration = .seconds(180)

    static let shortTimeouts = [
        "--request-head-timeout", "1", "--idle-timeout", "1", "--body-read-timeout", "1",
        "--max-header-bytes", "8192", "--max-request-body-bytes", "65536",
    ]

    /// `/health` answers 200; retried when a pooled connection was closed by the short idle
    /// timeout just as it was reused.
    static func expectHealthy(_ client: APIClient, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        var lastError: (any Error)?
        for _ in 0..<3 {
            do {
                let reply = try await client.send(.GET, "/health", appId: .some(nil))
                #expect(reply.status == 200, sourceLocation: sourceLocation)
                return
            } catch {
                lastError = error
            }
        }
        Issue.record("/health failed: \(String(describing: lastError))", sourceLocation: sourceLocation)
    }

    @Test("a bare TCP connection, a TLS handshake without a request and a partial header are closed")
    func silentConnectionsClosed() async throws {
        try #require(TLSProbe.isAvailable, "openssl is needed")
        try await withServerAndClient(extraArguments: Self.shortTimeouts) { server, client in
            let bare = try RawConnection(port: server.port)
            let handshakeOnly = try TLSProbe(server)
            let partial = try TLSProbe(server)
            try partial.send("GET /health HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
            #expect(await bare.waitUntilClosed(within: Self.closeDeadline), "a bare TCP connection stayed open")
            #expect(await handshakeOnly.waitUntilClosed(within: Self.closeDeadline), "a TLS connection without a request stayed open")
            #expect(await partial.waitUntilClosed(within: Self.closeDeadline), "a partial header stayed open")
            #expect(!partial.received.contains("200"), "the partial request was answered: \(partial.received)")
            try await Self.expectHealthy(client)
            #expect(server.isRunning)
        }
    }

    @Test("a half-sent body is closed; a kept-alive connection is closed when idle")
    func stalledBodyAndIdleClosed() async throws {
        try #require(TLSProbe.isAvailable, "openssl is needed")
        try await withServerAndClient(extraArguments: Self.shortTimeouts) { server, client in
            let user = try await client.newUser("slow")
            let body = #"{"username": "\#(user.username)", "password": "password-1"}"#
            let halfBody = try TLSProbe(server)
            try halfBody.send(
                "POST /v1/login HTTP/1.1\r\nHost: localhost\r\nX-Rooftop-Application-Id: \(server.appId)\r\n"
                    + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
                    + String(body.prefix(body.count / 2)))
            #expect(await halfBody.waitUntilClosed(within: Self.closeDeadline), "a half-sent body stayed open")
            #expect(!halfBody.received.contains("HTTP/1.1 200"), "\(halfBody.received)")

            let keptAlive = try TLSProbe(server)
            try keptAlive.send("GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
            #expect(await keptAlive.waitUntilClosed(within: Self.closeDeadline), "an idle kept-alive connection stayed open")
            #expect(keptAlive.received.contains("HTTP/1.1 200"), "the request before going idle was answered")
            try await Self.expectHealthy(client)
        }
    }

    @Test("an oversized header is answered 431; a declared body over the limit 413 before it is sent")
    func oversizedRequestsAnswered() async throws {
        try #require(TLSProbe.isAvailable, "openssl is needed")
        try await withServerAndClient(extraArguments: Self.shortTimeouts) { server, client in
            let bigHeader = try TLSProbe(server)
            try bigHeader.send(
                "GET /health HTTP/1.1\r\nHost: localhost\r\nX-Big: \(String(repeating: "a", count: 100_000))\r\n\r\n")
            #expect(await bigHeader.waitUntilClosed(within: Self.closeDeadline))
            #expect(bigHeader.received.hasPrefix("HTTP/1.1 431"), "\(bigHeader.received.prefix(200))")
            #expect(bigHeader.received.contains(#""code":"sizeLimit""#), "\(bigHeader.received.prefix(400))")

            // The body is never sent: the answer must come from the declared length alone.
            let bigBody = try TLSProbe(server)
            try bigBody.send(
                "POST /v1/push HTTP/1.1\r\nHost: localhost\r\nX-Rooftop-Application-Id: \(server.appId)\r\n"
                    + "Content-Type: application/json\r\nContent-Length: 100000000\r\n\r\n")
            #expect(await bigBody.waitUntilClosed(within: Self.closeDeadline))
            #expect(bigBody.received.hasPrefix("HTTP/1.1 413"), "\(bigBody.received.prefix(200))")
            #expect(bigBody.received.contains(#""code":"sizeLimit""#), "\(bigBody.received.prefix(400))")

            // Within the limits, the same server answers normally.
            try await Self.expectHealthy(client)
            #expect(!server.log.contains("request failed"), "\(server.log)")
        }
    }

    @Test("a live WebSocket outlives the HTTP timeouts")
    func liveSurvivesTimeouts() async throws {
        try await withServerAndClient(extraArguments: Self.shortTimeouts) { server, client in
            let user = try await client.newUser("live")
            try await withLiveClient(server) { live in
                try await live.subscribe(to: [.default], as: user)
                // A connection opened after the subscription is closed by the head timeout: by
                // then the WebSocket has been quiet for longer than every HTTP timeout.
                let probe = try RawConnection(port: server.port)
                #expect(await probe.waitUntilClosed(within: Self.closeDeadline))
                _ = try await client.create("Note", in: .default, fields: ["n": 1], as: user)
                guard case .changed(let datastore, _) = try await live.next() else {
                    Issue.record("expected a changed message on the live connection")
                    return
                }
                #expect(datastore == .default)
            }
        }
    }

    /// A counter or gauge of the server's `/metrics` (0 when absent).
    static func metric(_ name: String, _ client: APIClient) async throws -> Int {
        let text = try await client.send(.GET, "/metrics", appId: .some(nil)).text
        let line = text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return line.flatMap { Double($0.split(separator: " ").last ?? "") }.map { Int($0) } ?? 0
    }

    @Test("one address cannot hold many connections that sent no request: over its cap it is closed at once, others still served")
    func perAddressCap() async throws {
        let arguments = ["--max-connections-per-address", "8", "--request-head-timeout", "120"]
        try await withServerAndClient(extraArguments: arguments) { server, client in
            let refusedBefore = try await Self.metric("rooftop_connections_refused_total", client)
            let openBefore = try await Self.metric("rooftop_connections_open", client)
            // An attacker at 127.0.0.2 holds its eight idle connections (all admitted before the
            // next one is made: accepted connections are admitted on several threads); the ninth is refused.
            let held = try (0..<8).map { _ in try RawConnection(port: server.port, from: "127.0.0.2") }
            try await TestWait.until(within: Self.closeDeadline, "the connection count") {
                try await Self.metric("rooftop_connections_open", client) >= openBefore + 8
            }
            let ninth = try RawConnection(port: server.port, from: "127.0.0.2")
            // Closed long before the 120 s head timeout: refused at accept.
            #expect(await ninth.waitUntilClosed(within: Self.closeDeadline), "the ninth connection from one address was kept")
            #expect(try await Self.metric("rooftop_connections_refused_total", client) == refusedBefore + 1)
            // Another client is still served.
            try await Self.expectHealthy(client)
            // Closed connections free their places: a new one from the first address is admitted.
            for connection in held { connection.close() }
            try await TestWait.until(within: Self.closeDeadline, "the connection count") {
                try await Self.metric("rooftop_connections_open", client) <= openBefore
            }
            let again = try RawConnection(port: server.port, from: "127.0.0.2")
            try await TestWait.until(within: Self.closeDeadline, "the connection count") {
                try await Self.metric("rooftop_connections_open", client) == openBefore + 1
            }
            #expect(try await Self.metric("rooftop_connections_refused_total", client) == refusedBefore + 1)
            again.close()
        }
    }

    @Test("idle connections from several addresses fill every place: the oldest is closed for a new client, not the client refused")
    func globalCapEvictsOldestIdle() async throws {
        let arguments = [
            "--max-connections-per-address", "4", "--max-connections", "12", "--request-head-timeout", "120",
        ]
        try await withServerAndClient(extraArguments: arguments) { server, client in
            let openBefore = try await Self.metric("rooftop_connections_open", client)
            let refusedBefore = try await Self.metric("rooftop_connections_refused_total", client)
            // The oldest, admitted alone, then four addresses with four idle connections each:
            // more than the twelve places, each address under its own cap.
            let oldest = try RawConnection(port: server.port, from: "127.0.0.2")
            try await TestWait.until(within: Self.closeDeadline, "the first connection counted") {
                try await Self.metric("rooftop_connections_open", client) >= openBefore + 1
            }
            var held: [RawConnection] = []
            for address in 3...6 {
                held += try (0..<4).map { _ in try RawConnection(port: server.port, from: "127.0.0.\(address)") }
            }
            // Closed long before the 120 s head timeout: evicted to make room.
            #expect(await oldest.waitUntilClosed(within: Self.closeDeadline), "the oldest idle connection was kept")
            try await TestWait.until(within: Self.closeDeadline, "evictions") {
                try await Self.metric("rooftop_connections_evicted_total", client) >= 1
            }
            // A seventh address is served: the oldest idle connection made room for it.
            let other = try APIClient(server: server)
            do {
                let reply = try await other.send(.GET, "/health", appId: .some(nil))
                #expect(reply.status == 200)
                await other.shutdown()
            } catch {
                await other.shutdown()
                throw error
            }
            try await Self.expectHealthy(client)
            #expect(try await Self.metric("rooftop_connections_open", client) <= 12)
            #expect(try await Self.metric("rooftop_connections_refused_total", client) == refusedBefore)
            // No error line per connection closed: one warning a minute at most, with the count.
            let lines = server.log.split(separator: "\n")
            #expect(!lines.contains { $0.contains(" error ") }, "\(server.log.suffix(2000))")
            #expect(lines.filter { $0.contains("closed before their first request") }.count <= 1, "\(server.log.suffix(2000))")
            for connection in held { connection.close() }
        }
    }

    /// Opens `count` kept-alive TLS connections to `server` (appended to `probes`, so that the
    /// caller stops them), each answered one request: established, then idle.
    static func answeredKeepAlive(_ count: Int, _ server: ServerProcess, into probes: inout [TLSProbe]) async throws {
        for _ in 0..<count {
            let probe = try TLSProbe(server)
            probes.append(probe)
            try probe.send("GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
            try await TestWait.until(within: Self.closeDeadline, "the keep-alive request answered") {
                probe.received.contains("HTTP/1.1 200")
            }
        }
    }

    @Test("connections that were answered and sit idle fill every place: the one idle longest is closed for a new client")
    func globalCapEvictsIdleKeepAlive() async throws {
        try #require(TLSProbe.isAvailable, "openssl is needed")
        let arguments = ["--max-connections", "6", "--idle-timeout", "120", "--request-head-timeout", "120"]
        try await withServerAndClient(extraArguments: arguments) { server, client in
            // Six keep-alive connections, each answered once and then idle: every place taken by
            // an established connection (the test client's own, if any, among the first evicted).
            var probes: [TLSProbe] = []
            defer { for probe in probes { probe.stop() } }
            try await Self.answeredKeepAlive(6, server, into: &probes)
            // A new client is served: the connection idle the longest made room for it.
            try await Self.expectHealthy(client)
            #expect(await probes[0].waitUntilClosed(within: Self.closeDeadline), "the longest idle connection was kept")
            #expect(probes[5].received.contains("HTTP/1.1 200"))
            #expect(try await Self.metric("rooftop_connections_evicted_total", client) >= 1)
        }
    }

    @Test("one address holds at most half of the places, established connections included: others are still served")
    func shareOfOneAddress() async throws {
        try #require(TLSProbe.isAvailable, "openssl is needed")
        let arguments = [
            "--max-connections", "8", "--max-connections-per-address", "2", "--idle-timeout", "120",
            "--request-head-timeout", "120",
        ]
        try await withServerAndClient(extraArguments: arguments) { server, client in
            // Four kept-alive connections from 127.0.0.1, each answered: established, so the
            // per-address cap of unproven connections no longer counts them.
            var probes: [TLSProbe] = []
            defer { for probe in probes { probe.stop() } }
            try await Self.answeredKeepAlive(4, server, into: &probes)
            // The address holds half of the eight places: its next connection is refused at once.
            let fifth = try RawConnection(port: server.port, from: "127.0.0.1")
            #expect(await fifth.waitUntilClosed(within: Self.closeDeadline), "a fifth connection from one address was kept")
            // Another address is served, and nothing was evicted for the refused one.
            let other = try await client.send(.GET, "/metrics", headers: [:], from: "127.0.0.9")
            #expect(other.status == 200)
            let refusals = other.text.split(separator: "\n").first { $0.hasPrefix("rooftop_connections_refused_total ") }
            #expect(refusals.flatMap { Double($0.split(separator: " ").last ?? "") } == 1, "\(refusals ?? "none")")
            #expect(probes.allSatisfy { !$0.received.isEmpty })
        }
    }

    @Test("refusals are logged at most once a minute, with their count")
    func refusalLogRateLimited() async throws {
        // The held connections stay unproven for the whole test: their request-head timeout is
        // far longer than any deadline below.
        let arguments = ["--max-connections-per-address", "2", "--request-head-timeout", "3600"]
        try await withServerAndClient(extraArguments: arguments) { server, client in
            let started = ContinuousClock.now
            let refusedBefore = try await Self.metric("rooftop_connections_refused_total", client)
            // The metrics client's own connection is open too: the held ones are counted above it.
            let openBefore = try await Self.metric("rooftop_connections_open", client)
            let held = try (0..<2).map { _ in try RawConnection(port: server.port, from: "127.0.0.7") }
            try await TestWait.until(within: Self.closeDeadline, "the held connections counted") {
                try await Self.metric("rooftop_connections_open", client) >= openBefore + 2
            }
            // Twelve at once, waited on together: a server slow to accept (the whole suite on two
            // cores) delays them all alike instead of one deadline after another.
            let refused = try (0..<12).map { _ in try RawConnection(port: server.port, from: "127.0.0.7") }
            let closed = await withTaskGroup(of: Bool.self) { group in
                for connection in refused {
                    group.addTask { await connection.waitUntilClosed(within: Self.slowAcceptDeadline) }
                }
                return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(closed == 12, "\(closed) of 12 refused connections closed")
            try await TestWait.until(within: Self.closeDeadline, "the twelve refusals counted") {
                try await Self.metric("rooftop_connections_refused_total", client) == refusedBefore + 12
            }
            // The log is read as the server writes it: wait for the refusal's line.
            try await TestWait.until(within: Self.closeDeadline, "the refusal logged") {
                server.log.contains("connections refused")
            }
            let minutes = Int((ContinuousClock.now - started) / .seconds(60))
            let lines = server.log.split(separator: "\n")
            let refusalLines = lines.filter { $0.contains("connections refused") }
            // A line at the first refusal, then at most one a minute: one here, unless the server
            // was kept from accepting for over a minute.
            #expect(refusalLines.count >= 1 && refusalLines.count <= 1 + minutes, "\(lines)")
            #expect(refusalLines.first?.contains("refused since the last line=1") == true, "\(lines)")
            // Not a line per refusal (HummingbirdWebSocket's error for a connection closed before
            // its request was one): the start-up lines and a few more.
            #expect(!lines.contains { $0.contains(" error ") }, "\(server.log.suffix(2000))")
            #expect(lines.count < 10, "\(server.log.suffix(2000))")
            for connection in held { connection.close() }
        }
    }

    @Test("many live subscribers from one address (a NAT) are not refused: the cap counts connections that sent no request")
    func liveSubscribersFromOneAddress() async throws {
        try await withServerAndClient(extraArguments: ["--max-connections-per-address", "3"]) { server, client in
            let user = try await client.newUser("phones")
            var subscribers: [LiveClient] = []
            do {
                for _ in 0..<10 {
                    let live = try await LiveClient.connect(to: server)
                    subscribers.append(live)
                    try await live.subscribe(to: [.default], as: user)
                }
                _ = try await client.create("Note", in: .default, fields: ["n": 1], as: user)
                for live in subscribers {
                    guard case .changed = try await live.next() else {
                        Issue.record("expected a changed message on every live connection")
                        break
                    }
                }
            } catch {
                for live in subscribers { await live.close() }
                throw error
            }
            for live in subscribers { await live.close() }
        }
    }
}
