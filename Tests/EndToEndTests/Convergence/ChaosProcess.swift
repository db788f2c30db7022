import Foundation
import RooftopChaos
import RooftopTestSupport
import Synchronization

/// A replica in its own `rooftop-chaos-client` process, driven with JSON lines: one command at a
/// time, each answered by one reply, with the offline queue's events in between. It can be killed
/// with SIGKILL at any moment (a crash) and a new one started on the same cache file.
final class ChaosProcess: Sendable {
    private struct State {
        var buffer = Data()
        var ready = false
        var fatal: String?
        var replies: [ChaosReply] = []
        var log = ""
    }

    private let process: ChildProcess
    private let input: FileHandle
    private let state = Mutex(State())
    private let onEvent: @Sendable (ChaosEvent) -> Void

    private init(process: ChildProcess, input: FileHandle, onEvent: @escaping @Sendable (ChaosEvent) -> Void) {
        self.process = process
        self.input = input
        self.onEvent = onEvent
    }

    /// Starts a process and waits (up to `limit`) until its replica is open.
    static func start(
        _ settings: ChaosReplicaSettings, within limit: Duration = .seconds(60),
        onEvent: @escaping @Sendable (ChaosEvent) -> Void
    ) async throws -> ChaosProcess {
        // A write to the pipe of a process that just died must fail, not kill the test process.
        signal(SIGPIPE, SIG_IGN)
        let process = ChildProcess()
        process.executableURL = try BuiltExecutable.url(
            named: "rooftop-chaos-client", environmentVariable: "ROOFTOP_CHAOS_CLIENT_BINARY")
        process.arguments = [String(decoding: try JSONEncoder().encode(settings), as: UTF8.self)]
        let stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = .pipe(stdin)
        process.standardOutput = .pipe(stdout)
        // What the client writes to stderr before it is ready says why it died, when it does: kept
        // in an unlinked file, read only then.
        let errorPath = FileManager.default.temporaryDirectory
            .appendingPathComponent("rooftop-chaos-\(UUID().uuidString).stderr").path
        _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
        let errorOutput = FileHandle(forWritingAtPath: errorPath)
        let errorInput = FileHandle(forReadingAtPath: errorPath)
        unlink(errorPath)
        defer {
            try? errorOutput?.close()
            try? errorInput?.close()
        }
        process.standardError = .handle(errorOutput ?? .nullDevice)
        let child = ChaosProcess(process: process, input: stdin.fileHandleForWriting, onEvent: onEvent)
        try process.run()
        // Read once the child has started: a child that cannot start leaves no thread waiting.
        BlockingRead.drain(stdout.fileHandleForReading) { [weak child] data in child?.received(data) }
        do {
            try await TestWait.until(within: limit, "the chaos client to open") {
                let (ready, fatal) = child.state.withLock { ($0.ready, $0.fatal) }
                if let fatal { throw ConvergenceFailure("the chaos client failed: \(fatal)") }
                if !ready && !process.isRunning {
                    let written = (try? errorInput?.readToEnd()) ?? nil
                    let tail = String(decoding: (written ?? Data()).suffix(2_000), as: UTF8.self)
                    throw ConvergenceFailure(
                        "the chaos client exited before it was ready (status or signal \(process.terminationStatus)); "
                            + "its last words: \(tail)")
                }
                return ready
            }
        } catch {
            await child.kill()
            throw error
        }
        return child
    }

    /// Whether the process is still running.
    var isRunning: Bool { process.isRunning }

    /// Sends a command and waits (up to `limit`) for its reply.
    func perform(_ command: ChaosCommand, within limit: Duration = .seconds(60)) async throws -> ChaosReply {
        let line = try JSONEncoder().encode(command) + Data("\n".utf8)
        do {
            try input.write(contentsOf: line)
        } catch {
            throw ConvergenceFailure("the chaos client no longer reads commands: \(error)")
        }
        var reply: ChaosReply?
        try await TestWait.until(within: limit, "the reply to \(command.kind)") {
            reply = state.withLock { $0.replies.isEmpty ? nil : $0.replies.removeFirst() }
            if reply == nil && !process.isRunning { throw ConvergenceFailure("the chaos client exited during \(command.kind)") }
            return reply != nil
        }
        guard let reply else { throw ConvergenceFailure("no reply to \(command.kind)") }
        return reply
    }

    /// Kills the process with SIGKILL (no chance to finish anything) and waits until it is gone.
    func kill() async {
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        await process.waitForExit(deadline: .seconds(30))
        try? input.close()
    }

    /// Asks the process to stop (it shuts its client down), killing it if it has not exited
    /// within `limit`.
    func stop(within limit: Duration = .seconds(20)) async {
        if process.isRunning {
            try? input.write(contentsOf: try JSONEncoder().encode(ChaosCommand(.stop)) + Data("\n".utf8))
        }
        await process.waitForExit(deadline: limit)
        try? input.close()
    }

    /// Splits what the process printed into lines and dispatches them.
    private func received(_ data: Data) {
        let lines = state.withLock { state -> [Data] in
            state.buffer.append(data)
            var lines: [Data] = []
            while let end = state.buffer.firstIndex(of: UInt8(ascii: "\n")) {
                lines.append(state.buffer[state.buffer.startIndex..<end])
                state.buffer.removeSubrange(state.buffer.startIndex...end)
            }
            return lines
        }
        for line in lines {
            guard let message = try? JSONDecoder().decode(ChaosLine.self, from: line) else {
                state.withLock { $0.log += String(decoding: line, as: UTF8.self) + "\n" }
                continue
            }
            if let event = message.event { onEvent(event) }
            state.withLock { state in
                if message.ready == true { state.ready = true }
                if let fatal = message.fatal { state.fatal = fatal }
                if let reply = message.reply { state.replies.append(reply) }
            }
        }
    }
}
