import Foundation
import RooftopTestSupport

/// A TLS connection to a test server made by `openssl s_client`, trusting only the server's
/// development CA: the handshake completes, then the test writes exactly the bytes it wants
/// (nothing, half a header, half a body) and watches for the server to close the connection
/// (`s_client` exits when it does).
final class TLSProbe: @unchecked Sendable {
    private let process: ChildProcess
    private let input: Pipe
    private let output = Pipe()
    private let collected = OutputCollector()

    /// Connects to the server (the handshake runs in the background).
    /// - Throws: When `openssl` cannot be started.
    init(_ server: ServerProcess) throws {
        process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "openssl", "s_client", "-connect", "127.0.0.1:\(server.port)", "-CAfile", server.caCertificatePath,
            "-servername", "localhost", "-verify_return_error", "-quiet",
        ]
        input = Pipe()
        process.standardInput = .pipe(input)
        process.standardOutput = .pipe(output)
        process.standardError = .handle(.nullDevice)
        let collected = self.collected
        BlockingRead.drain(output.fileHandleForReading) { data in collected.append(data) }
        try process.run()
    }

    deinit { stop() }

    /// Whether the `openssl` binary is there to run.
    static var isAvailable: Bool {
        ["/usr/bin/openssl", "/usr/local/bin/openssl"].contains { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Writes `text` to the connection. When the server closes it before all is written (as it
    /// does after answering 431 to an oversized header), `openssl` exits and the rest is dropped:
    /// what the server answered is in ``received``.
    func send(_ text: String) throws {
        do {
            try input.fileHandleForWriting.write(contentsOf: Data(text.utf8))
        } catch let error as NSError where (error.userInfo[NSUnderlyingErrorKey] as? NSError)?.code == Int(EPIPE) {
            return
        }
    }

    /// What the server sent.
    var received: String { collected.text }

    /// Waits until the server closed the connection (`s_client` exited) or `deadline` passed.
    /// - Returns: Whether it closed in time.
    func waitUntilClosed(within deadline: Duration) async -> Bool {
        do {
            try await TestWait.until(within: deadline, "openssl to exit") { !self.process.isRunning }
        } catch {
            // Timed out (or cancelled): the connection is still open.
        }
        return !process.isRunning
    }

    /// Ends `s_client` if it still runs.
    func stop() {
        if process.isRunning { process.terminate() }
    }

    private final class OutputCollector: @unchecked Sendable {
        private let lock = NSLock()
        private var data = Data()
        func append(_ more: Data) { lock.withLock { data.append(more) } }
        var text: String { lock.withLock { String(decoding: data, as: UTF8.self) } }
    }
}
