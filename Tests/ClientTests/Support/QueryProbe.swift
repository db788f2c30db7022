import Foundation
import Synchronization

/// A value did not arrive before the deadline.
struct ProbeTimeout: Error, CustomStringConvertible {
    var description: String
}

/// Iterates a stream in its own task and lets a test wait — with a deadline, never a sleep —
/// for the values it yields. Values are consumed in order: each wait starts after the value the
/// previous one returned.
final class StreamProbe<Element: Sendable>: Sendable {
    private struct Waiter {
        var predicate: @Sendable (Element) -> Bool
        var continuation: CheckedContinuation<Element?, Never>
    }

    private struct State {
        var values: [Element] = []
        var cursor = 0
        var finished = false
        var waiters: [UUID: Waiter] = [:]
    }

    private let state = Mutex(State())
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(_ stream: AsyncStream<Element>) {
        let started = Task { [self] in
            for await value in stream {
                let ready = self.state.withLock { state -> [(CheckedContinuation<Element?, Never>, Element)] in
                    state.values.append(value)
                    return Self.match(&state)
                }
                for (continuation, value) in ready { continuation.resume(returning: value) }
            }
            let waiting = self.state.withLock { state in
                state.finished = true
                defer { state.waiters = [:] }
                return state.waiters.values.map(\.continuation)
            }
            for continuation in waiting { continuation.resume(returning: nil) }
        }
        task.withLock { $0 = started }
    }

    /// Every value received so far.
    var values: [Element] { state.withLock { $0.values } }

    /// Whether the stream ended.
    var isFinished: Bool { state.withLock { $0.finished } }

    /// Waits for the next value (after the last one returned) that meets `predicate`.
    /// - Throws: ``ProbeTimeout`` when none arrives within `timeout`, or the stream ends first.
    @discardableResult
    func next(
        within timeout: Duration = .seconds(10), _ what: String = "a value",
        where predicate: @escaping @Sendable (Element) -> Bool = { _ in true }
    ) async throws -> Element {
        let id = UUID()
        let result = try await withThrowingTaskGroup(of: Element?.self) { group in
            group.addTask { await self.wait(id, predicate) }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw ProbeTimeout(description: "no \(what) within \(timeout)")
            }
            defer { group.cancelAll() }
            guard let first = try await group.next() else { return nil as Element? }
            return first
        }
        guard let result else { throw ProbeTimeout(description: "the stream ended before \(what)") }
        return result
    }

    /// Waits until the stream ends.
    func finish(within timeout: Duration = .seconds(10)) async throws {
        _ = try? await next(within: timeout, "the end") { _ in false }
        guard isFinished else { throw ProbeTimeout(description: "the stream did not end within \(timeout)") }
    }

    /// Stops iterating.
    func cancel() { task.withLock { $0?.cancel() } }

    private func wait(_ id: UUID, _ predicate: @escaping @Sendable (Element) -> Bool) async -> Element? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Element?, Never>) in
                let ready = state.withLock { state -> [(CheckedContinuation<Element?, Never>, Element?)] in
                    state.waiters[id] = Waiter(predicate: predicate, continuation: continuation)
                    var ready = Self.match(&state).map { ($0.0, Optional($0.1)) }
                    // Nothing more will come for this waiter: the stream ended or the wait was
                    // cancelled before it was registered.
                    if state.finished || Task.isCancelled, let waiter = state.waiters.removeValue(forKey: id) {
                        ready.append((waiter.continuation, nil))
                    }
                    return ready
                }
                for (continuation, value) in ready { continuation.resume(returning: value) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.continuation.resume(returning: nil)
        }
    }

    /// Hands the values not consumed yet to the waiters they satisfy.
    private static func match(_ state: inout State) -> [(CheckedContinuation<Element?, Never>, Element)] {
        var ready: [(CheckedContinuation<Element?, Never>, Element)] = []
        for (id, waiter) in state.waiters {
            guard let index = state.values[state.cursor...].firstIndex(where: waiter.predicate) else { continue }
            state.cursor = index + 1
            state.waiters[id] = nil
            ready.append((waiter.continuation, state.values[index]))
        }
        return ready
    }
}

/// Waits until a condition holds, checking after each scheduling turn, until a deadline.
func eventually(
    within timeout: Duration = .seconds(10), _ what: String, _ condition: @Sendable () -> Bool
) async throws {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while !condition() {
        guard ContinuousClock.now < deadline else {
            throw ProbeTimeout(description: "\(what) did not happen within \(timeout)")
        }
        await Task.yield()
    }
}
