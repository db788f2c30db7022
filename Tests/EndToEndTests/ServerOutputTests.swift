import Foundation
import RooftopTestSupport
import Testing

/// Waiting for a launched server to listen: what it printed is looked at before the deadline is,
/// so a waiter that runs late still finds a server that listens.
@Suite("Server output: waiting for the listening line")
struct ServerOutputTests {
    @Test("a server that printed its address and CA is found even when the waiter runs past its deadline")
    func lateWaiterFindsListeningServer() async throws {
        let output = ServerOutput()
        output.append("development CA: /tmp/ca.pem\nlistening on https://127.0.0.1:4431\n")
        let (port, ca) = try await output.waitForListening(deadline: .zero) { nil }
        #expect(port == 4431 && ca == "/tmp/ca.pem")
    }

    @Test("a server that has not printed them times out, with its output; one that ended says why")
    func timesOutOrEnds() async throws {
        let output = ServerOutput()
        output.append("starting\nlistening on https://127.0.0.1:4431")  // no newline: not a whole line yet
        let timedOut = await #expect(throws: ServerLaunchError.self) {
            try await output.waitForListening(deadline: .milliseconds(50)) { nil }
        }
        #expect("\(timedOut.map { "\($0)" } ?? "")".contains("did not start listening in time:\nstarting"))
        let ended = await #expect(throws: ServerLaunchError.self) {
            try await output.waitForListening(deadline: .seconds(60)) { "exited with status 1" }
        }
        #expect("\(ended.map { "\($0)" } ?? "")".contains("exited with status 1 before listening"))
    }
}
