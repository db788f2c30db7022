import Foundation
@testable import Rooftop
import RooftopShared
import Synchronization

/// A client over the fake server, with a test clock and a fixed retry jitter (0.5: no spread).
func syncClient(
    _ server: SyncFakeServer, clock: TestClock = TestClock(), storage: LocalStorage = .inMemory,
    retry: RetryPolicy = .default
) throws -> RooftopClient {
    var configuration = ClientConfiguration(serverURL: URL(fileURLWithPath: "/"))
    configuration.storage = storage
    configuration.clock = clock
    configuration.retry = retry
    return try RooftopClient(configuration: configuration, transport: server, random: { 0.5 })
}

/// Waits (real time, up to `timeout`) until `condition` holds, checking often; fails otherwise.
func eventually(
    _ what: String, timeout: Duration = .seconds(10), _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(5))
    }
    throw TestFailure("timed out waiting until \(what)")
}

/// A failure raised by a test helper.
struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Collects the elements of a stream in the background, for assertions.
final class Collector<Element: Sendable>: Sendable {
    private let box = Box()
    private let task: Task<Void, Never>

    private final class Box: Sendable {
        let elements = Mutex<[Element]>([])
        let finished = Mutex(false)
    }

    init(_ stream: AsyncStream<Element>) {
        let box = self.box
        task = Task {
            for await element in stream { box.elements.withLock { $0.append(element) } }
            box.finished.withLock { $0 = true }
        }
    }

    var elements: [Element] { box.elements.withLock { $0 } }

    /// Whether the stream ended.
    var isFinished: Bool { box.finished.withLock { $0 } }

    /// Waits until an element satisfies `predicate`; returns it.
    @discardableResult
    func first(_ what: String, where predicate: @escaping @Sendable (Element) -> Bool) async throws -> Element {
        try await eventually(what) { elements.contains(where: predicate) }
        guard let found = elements.first(where: predicate) else { throw TestFailure("no element: \(what)") }
        return found
    }

    deinit { task.cancel() }
}

extension RooftopClient {
    /// Signs up on the fake server (the user's ID is `u<n>`).
    func signUpForTest(_ username: String) async throws -> UserInfo {
        try await signUp(username: username, password: "secret")
    }
}
