import Synchronization

/// A gate tasks pass while it is open and wait at while it is closed. The waiting go on when it
/// opens, or are turned back (``drop()``: the connection they were on went down).
final class Gate: Sendable {
    private let state = Mutex<(open: Bool, waiting: [CheckedContinuation<Bool, Never>])>((true, []))

    /// Whether tasks pass without waiting.
    var isOpen: Bool { state.withLock { $0.open } }

    /// How many tasks wait at the gate.
    var waiting: Int { state.withLock { $0.waiting.count } }

    func close() { state.withLock { $0.open = false } }

    /// Opens the gate: the waiting go on, and later ones pass.
    func open() { release(passing: true) }

    /// Turns the waiting back; the gate stays closed.
    func drop() { release(passing: false) }

    private func release(passing: Bool) {
        let waiting = state.withLock { state in
            if passing { state.open = true }
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume(returning: passing) }
    }

    /// Waits while the gate is closed.
    /// - Returns: Whether the task goes on (false: turned back by ``drop()``).
    @discardableResult
    func pass() async -> Bool {
        await withCheckedContinuation { continuation in
            let open = state.withLock { state in
                if !state.open { state.waiting.append(continuation) }
                return state.open
            }
            if open { continuation.resume(returning: true) }
        }
    }
}
