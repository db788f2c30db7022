import Foundation
import Synchronization

/// What a server printed, thread-safely: its lines, the value after a known prefix, and why it
/// ended once it has. Fed by a launched process's pipes (``LaunchedServer``) or by an in-process
/// server's output callback.
public final class ServerOutput: Sendable {
    private let state = Mutex("")
    private let endReason = Mutex<String?>(nil)
    /// The attached pipes not yet at their end of file.
    private let openPipes = Mutex(0)

    /// Empty output.
    public init() {}

    /// Everything printed so far.
    public var text: String { state.withLock { $0 } }

    /// Why the server ended, once it has (`nil` while it runs).
    public var ended: String? { endReason.withLock { $0 } }

    /// Records that the server ended, and why (the first reason stays).
    public func markEnded(_ reason: String) {
        endReason.withLock { $0 = $0 ?? reason }
    }

    /// Appends output: complete lines or fragments.
    public func append(_ output: String) {
        state.withLock { $0 += output }
    }

    /// Appends what `pipe` delivers until its end of file (read on a thread of its own,
    /// ``BlockingRead/drain(_:_:)``).
    public func attach(_ pipe: Pipe) {
        openPipes.withLock { $0 += 1 }
        BlockingRead.drain(
            pipe.fileHandleForReading,
            { [weak self] data in self?.append(String(decoding: data, as: UTF8.self)) },
            ended: { [weak self] in self?.openPipes.withLock { $0 -= 1 } })
    }

    /// Waits, polling every 10 ms up to `limit`, until every attached pipe reached its end of file:
    /// once a process has exited, what it printed last may still be in a pipe.
    func drained(within limit: Duration) async {
        let clock = ContinuousClock()
        let end = clock.now.advanced(by: limit)
        while openPipes.withLock({ $0 > 0 }), clock.now < end {
            // Cancelled: the sleep returns at once, and the caller is done waiting anyway.
            do { try await Task.sleep(for: .milliseconds(10)) } catch { return }
        }
    }

    /// The rest of the first complete line starting with `prefix`.
    public func firstMatch(prefix: String) -> String? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        return lines.first { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
    }

    /// Waits, polling every 20 ms up to `deadline`, until the server printed its listening
    /// address and its development CA (or, when it was given its own certificate, until it
    /// listens).
    /// - Parameters:
    ///   - givenCertificate: The certificate passed with `--tls-cert`: no development CA is
    ///     printed then, and this is what clients trust.
    ///   - failed: Why the server can no longer start (it exited), or `nil` while it may.
    /// - Returns: The port and the path of the certificate clients trust.
    /// - Throws: ``ServerLaunchError/ended(_:log:)`` when `failed` answers,
    ///   ``ServerLaunchError/timedOut(log:)`` past the deadline.
    public func waitForListening(
        deadline: Duration, givenCertificate: String? = nil, failed: () -> String?
    ) async throws -> (port: Int, caPath: String) {
        let clock = ContinuousClock()
        let end = clock.now.advanced(by: deadline)
        while true {
            if let port = firstMatch(prefix: "listening on https://127.0.0.1:").flatMap({ Int($0) }),
                let ca = firstMatch(prefix: "development CA: ") ?? givenCertificate
            {
                return (port, ca)
            }
            if let reason = failed() {
                // Its last words (why it stopped) may still be on their way through the pipes.
                await drained(within: .seconds(10))
                throw ServerLaunchError.ended(reason, log: text)
            }
            // Checked after the output, never before: a waiter that ran late (its threads busy
            // with other work past the deadline) still finds a server that listens meanwhile.
            guard clock.now < end else { throw ServerLaunchError.timedOut(log: text) }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}

/// Why a server did not start.
public enum ServerLaunchError: Error, CustomStringConvertible {
    /// The executable is not there.
    case notExecutable(String)
    /// Its process exited before listening, with its status and output.
    case exited(status: Int32, log: String)
    /// An in-process server ended before listening, with the reason and its output.
    case ended(String, log: String)
    /// It did not listen before the deadline.
    case timedOut(log: String)

    /// What went wrong, with the server's output.
    public var description: String {
        switch self {
        case .notExecutable(let path): "\(path) is not an executable (build it with `swift build`)"
        case .exited(let status, let log): "the server exited with status \(status) before listening:\n\(log)"
        case .ended(let reason, let log): "\(reason) before listening:\n\(log)"
        case .timedOut(let log): "the server did not start listening in time:\n\(log)"
        }
    }
}
