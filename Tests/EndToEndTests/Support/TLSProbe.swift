import Foundation

/// A TLS connection to a test server made by `openssl s_client`, trusting only the server's
/// development CA: the handshake completes, then the test writes exactly the bytes it wants
/// (nothing, half a header, half a body) and watches for the server to close the connection
/// (`s_client` exits when it does).
final class TLSProbe: @unchecked Sendable {
    private let process: Process
    private let input: Pipe
    private let output = Pipe()
    private let collected = OutputCollector()

    /// Connects to the server (the handshake runs in the background).
    /// - Throws: When `openssl` cannot be started.
    init(_ server: ServerProcess) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "openssl", "s_client", "-connect", "127.0.0.1:\(server.port)", "-CAfile", server.caCertificatePath,
            "-servername", "localhost", "-verify_return_error", "-quiet",
        ]
        input = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let collected = self.collected
        output.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if !data.isEmpty { collected.append(data) }
        }
        try process.run()
    }

    deinit { stop() }

    /// Whether the `openssl` binary is there to run.
    static var isAvailable: Bool {
        ["/usr/bin/openssl", "/usr/local/bin/openssl"].contains { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Writes `text` to the connection.
    func send(_ text: String) throws {
        try input.fileHandleForWriting.write(contentsOf: Data(text.utf8))
    }

    /// What the server sent.
    var received: String { collected.text }

    /// Waits until the server closed the connection (`s_client` exited) or `deadline` passed.
    /// - Returns: Whether it closed in time.
    func waitUntilClosed(within deadline: Duration) async -> Bool {
        let clock = ContinuousClock()
        let end = clock.now.advanced(by: deadline)
        while process.isRunning, clock.now < end {
            try? await Task.sleep(for: .milliseconds(20))
        }
        return !process.isRunning
    }

    /// Ends `s_client` if it still runs.
    func stop() {
        if process.isRunning { process.terminate() }
        output.fileHandleForReading.readabilityHandler = nil
    }

    private final class OutputCollector: @unchecked Sendable {
        private let lock = NSLock()
        private var data = Data()
        func append(_ more: Data) { lock.withLock { data.append(more) } }
        var text: String { lock.withLock { String(decoding: data, as: UTF8.self) } }
    }
}
