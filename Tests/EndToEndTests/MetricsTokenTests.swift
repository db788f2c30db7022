import Foundation
import RooftopShared
import Testing

/// `GET /metrics` behind its bearer token (`--metrics-token`), and open without one.
@Suite("Metrics token", .timeLimit(.minutes(3)))
struct MetricsTokenTests {
    @Test("with --metrics-token, /metrics answers only its bearer; without, it stays open")
    func token() async throws {
        let token = "metrics-" + String(repeating: "k", count: 24)
        try await withServerAndClient(extraArguments: ["--metrics-token", token]) { _, client in
            let none = try await client.send(.GET, "/metrics")
            #expect(none.status == 401 && none.error?.code == .auth, "\(none.text.prefix(200))")
            for header in ["Bearer wrong-token-of-some-length", "Bearer " + token.dropLast(), token, "Basic " + token] {
                let reply = try await client.send(.GET, "/metrics", headers: ["Authorization": header])
                #expect(reply.status == 401, "\(header)")
            }
            let right = try await client.send(.GET, "/metrics", headers: ["Authorization": "Bearer " + token])
            #expect(right.status == 200 && right.text.contains("# TYPE"), "\(right.text.prefix(200))")
            #expect(try await client.send(.GET, "/health").status == 200, "other operational endpoints stay open")
        }
        try await withServerAndClient { _, client in
            let open = try await client.send(.GET, "/metrics")
            #expect(open.status == 200)
        }
    }
}
