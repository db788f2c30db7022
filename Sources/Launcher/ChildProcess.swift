import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A child process started with `posix_spawn`, with the part of `Foundation.Process`'s interface
/// the tests use.
///
/// Foundation's `Process.run()` on Linux (Swift 6.3.1) now and then crashes the calling process
/// with a bad pointer dereference: it copies whole `dirent` names while listing `/proc/self/fd`,
/// reading past glibc's buffer (swift-corelibs-foundation#5472, fixed after 6.3.1). The
/// convergence harness, which starts hundreds of processes, hit it. This type spawns directly:
/// the child gets the given standard streams and closes every other descriptor.
///
/// ```swift
/// let child = ChildProcess()
/// child.executableURL = URL(fileURLWithPath: "/usr/bin/env")
/// child.arguments = ["true"]
/// try child.run()
/// child.waitUntilExit()
/// child.terminationStatus  // 0
/// ```
public final class ChildProcess: @unchecked Sendable {
    /// What a standard stream of the child is connected to.
    public enum Stream {
        /// The pipe's reading end (standard input) or writing end (output), closed in this process
        /// once the child has started, as `Foundation.Process` does.
        case pipe(Pipe)
        /// An open file handle (for example `FileHandle.nullDevice`).
        case handle(FileHandle)
    }

    /// The executable (required before ``run()``).
    public var executableURL: URL?
    /// The arguments, without the executable's name.
    public var arguments: [String] = []
    /// The environment; `nil` (the default) inherits this process's.
    public var environment: [String: String]?
    /// The child's standard input; `nil` (the default) inherits this process's.
    public var standardInput: Stream?
    /// The child's standard output; `nil` (the default) inherits this process's.
    public var standardOutput: Stream?
    /// The child's standard error; `nil` (the default) inherits this process's.
    public var standardError: Stream?

    private struct State {
        var pid: pid_t = 0
        /// The raw `waitpid` status once the child has been reaped.
        var status: Int32?
    }

    private let state = Mutex(State())

    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    /// glibc's `posix_spawn_file_actions_addclosefrom_np`, when the C library has it.
    private static let addCloseFrom: AddCloseFrom? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
        else { return nil }
        return unsafeBitCast(symbol, to: AddCloseFrom.self)
    }()

    /// Creates a process to configure and ``run()``.
    public init() {}

    /// The child's process ID (0 before ``run()``).
    public var processIdentifier: Int32 { state.withLock { $0.pid } }

    /// Starts the child.
    /// - Throws: ``ChildProcessError`` when there is no executable or `posix_spawn` fails.
    public func run() throws {
        guard let executableURL else { throw ChildProcessError("no executable") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let streams: [(Stream?, Int32)] = [(standardInput, 0), (standardOutput, 1), (standardError, 2)]
        for (stream, target) in streams {
            guard let stream else { continue }
            let descriptor: Int32
            switch stream {
            case .pipe(let pipe):
                descriptor = target == 0 ? pipe.fileHandleForReading.fileDescriptor : pipe.fileHandleForWriting.fileDescriptor
            case .handle(let handle):
                descriptor = handle.fileDescriptor
            }
            posix_spawn_file_actions_adddup2(&actions, descriptor, target)
        }
        // Nothing else leaks into the child: another child's pipe held open here would never
        // reach its end of file. (glibc 2.34+; the Swift module does not import it, hence dlsym.)
        if let closeFrom = Self.addCloseFrom { _ = closeFrom(&actions, 3) }

        let path = executableURL.path
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let environment = self.environment ?? ProcessInfo.processInfo.environment
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in envp { free(pointer) } }

        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, nil, argv, envp)
        guard result == 0 else {
            throw ChildProcessError("posix_spawn \(path) failed: \(String(cString: strerror(result)))")
        }
        state.withLock { $0.pid = pid }
        // The child's ends of its pipes belong to the child now.
        for (stream, target) in streams {
            guard case .pipe(let pipe)? = stream else { continue }
            try? (target == 0 ? pipe.fileHandleForReading : pipe.fileHandleForWriting).close()
        }
    }

    /// Whether the child has started and not exited yet.
    public var isRunning: Bool {
        reap(blocking: false)
        return state.withLock { $0.pid != 0 && $0.status == nil }
    }

    /// Sends SIGTERM.
    public func terminate() {
        let pid = processIdentifier
        if pid != 0 { kill(pid, SIGTERM) }
    }

    /// Blocks until the child has exited.
    public func waitUntilExit() {
        while processIdentifier != 0 && state.withLock({ $0.status == nil }) {
            reap(blocking: true)
        }
    }

    /// The exit code, or the number of the signal that ended the child (as
    /// `Foundation.Process` reports it); 0 while it runs.
    public var terminationStatus: Int32 {
        guard let status = state.withLock({ $0.status }) else { return 0 }
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : signal
    }

    /// Collects the child's exit status if it has exited (waiting for it when `blocking`).
    private func reap(blocking: Bool) {
        let pid = processIdentifier
        guard pid != 0, state.withLock({ $0.status == nil }) else { return }
        var status: Int32 = 0
        let result = waitpid(pid, &status, blocking ? 0 : WNOHANG)
        if result == pid {
            state.withLock { $0.status = status }
        } else if result == -1 && errno == ECHILD {
            // Reaped by a concurrent call, which records the status; a blocking caller looks again.
            if blocking { sched_yield() }
        }
    }

    /// Waits (polling) for the child to exit; kills it with SIGKILL if it has not by the deadline.
    /// - Returns: The exit status.
    @discardableResult
    public func waitForExit(deadline: Duration) async -> Int32 {
        let clock = ContinuousClock()
        let end = clock.now.advanced(by: deadline)
        while isRunning && clock.now < end {
            try? await Task.sleep(for: .milliseconds(5))
        }
        if isRunning {
            kill(processIdentifier, SIGKILL)
            waitUntilExit()
        }
        return terminationStatus
    }
}

/// A child process could not be started.
public struct ChildProcessError: Error, CustomStringConvertible {
    /// What went wrong.
    public let description: String

    init(_ description: String) { self.description = description }
}
