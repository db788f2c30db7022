import Foundation
@testable import Rooftop
import RooftopShared
import Synchronization

/// Collects the events of a client ``LiveConnection`` as they come, so a test can wait for the
/// next one (or the next matching one) with a deadline. (ClientTests has the same helper; test
/// targets cannot share sources.)
///
/// ```swift
/// let events = ClientLiveRecorder(live.events)
/// #expect(try await events.next() == .connected)
/// ```
final class ClientLiveRecorder: Sendable {
    private struct State {
        var events: [LiveEvent] = []
        var cursor = 0
        var finished = false
    }

    /// The state, shared with the collecting task (a `Mutex` cannot be captured itself).
    private final class Box: Sendable {
        let state = Mutex(State())
    }

    private let box = Box()

    /// Starts collecting `stream`; collecting ends with the stream.
    init(_ stream: AsyncStream<LiveEvent>) {
        let box = self.box
        Task {
            for await event in stream { box.state.withLock { $0.events.append(event) } }
            box.state.withLock { $0.finished = true }
        }
    }

    /// Every event received so far.
    var events: [LiveEvent] { box.state.withLock { $0.events } }

    /// Whether the stream has finished.
    var isFinished: Bool { box.state.withLock { $0.finished } }

    /// The next event not taken yet, waiting up to `limit`.
    func next(within limit: Duration = .seconds(20)) async throws -> LiveEvent {
        try await next(within: limit, "the next event") { _ in true }
    }

    /// The next event (not taken yet) that matches `predicate`; events before it are skipped.
    /// - Throws: ``FixtureError`` when none comes in time or the stream ends first.
    func next(
        within limit: Duration = .seconds(20), _ what: String, where predicate: (LiveEvent) -> Bool
    ) async throws -> LiveEvent {
        let clock = ContinuousClock()
        let end = clock.now.advanced(by: limit)
        while true {
            let (found, finished): (LiveEvent?, Bool) = box.state.withLock { state in
                while state.cursor < state.events.count {
                    let event = state.events[state.cursor]
                    state.cursor += 1
                    if predicate(event) { return (event, false) }
                }
                return (nil, state.finished)
            }
            if let found { return found }
            if finished { throw FixtureError("the live events ended before \(what); got \(events)") }
            guard clock.now < end else { throw FixtureError("no \(what) within \(limit); got \(events)") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// The next `.changed` event.
    func nextChange(within limit: Duration = .seconds(20)) async throws -> (DatastoreID, Int64) {
        let event = try await next(within: limit, "a changed event") {
            if case .changed = $0 { true } else { false }
        }
        guard case .changed(let datastore, let sequence) = event else { throw FixtureError("unreachable") }
        return (datastore, sequence)
    }

    /// Waits until the stream finishes.
    func waitForEnd(within limit: Duration = .seconds(10)) async throws {
        let clock = ContinuousClock()
        let end = clock.now.advanced(by: limit)
        while !isFinished {
            guard clock.now < end else { throw FixtureError("the live events did not end within \(limit)") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}

extension LiveConnection {
    /// A started connection to a test server, trusting `trust` (default: its CA).
    static func started(
        to server: ServerProcess, token: String?, subscribing datastores: [DatastoreID], trust: TrustPolicy? = nil,
        appId: String? = nil, retry: RetryPolicy = RetryPolicy(initialDelay: .milliseconds(50), maximumDelay: .milliseconds(200), jitter: 0)
    ) async throws -> (LiveConnection, ClientLiveRecorder) {
        var configuration = try ClientTransportFixture.configuration(server, trust: trust)
        configuration.retry = retry
        if let appId { configuration.appId = appId }
        let live = try LiveConnection(configuration: configuration, token: token)
        let recorder = ClientLiveRecorder(live.events)
        await live.subscribe(datastores)
        await live.start()
        return (live, recorder)
    }
}

/// The machine's TCP connections, read from `/proc/net/tcp` and `/proc/net/tcp6` (Linux only).
/// (ClientTests has the same helper; test targets cannot share sources.)
enum ClientLiveSockets {
    /// Whether connections can be listed on this system.
    static var isAvailable: Bool { FileManager.default.isReadableFile(atPath: "/proc/net/tcp") }

    /// How many connections to `port` (as their remote port) are established or waiting to be
    /// closed by their owner: sockets a client still holds.
    static func openConnections(toPort port: Int) -> Int {
        let remotePort = String(format: "%04X", port)
        var count = 0
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            guard let text = contents(of: table) else { continue }
            for line in text.split(separator: "\n").dropFirst() {
                let columns = line.split(separator: " ", omittingEmptySubsequences: true)
                // sl, local_address, rem_address, st: 01 = ESTABLISHED, 08 = CLOSE_WAIT.
                guard columns.count > 3, columns[2].hasSuffix(":" + remotePort) else { continue }
                if columns[3] == "01" || columns[3] == "08" { count += 1 }
            }
        }
        return count
    }

    /// A procfs file's whole text. These files report size 0 and hand out a page per read, so
    /// they must be read until the end rather than by their size.
    private static func contents(of path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        return (try? handle.readToEnd()).map { String(decoding: $0, as: UTF8.self) }
    }
}
