import Dispatch
import Foundation

/// Blocking reads of a pipe or file, run on a thread of their own instead of Swift
/// concurrency's cooperative pool. That pool has one thread per core — two here — so a test
/// that blocked one of them reading a child process's output for seconds stalled every other
/// test's tasks meanwhile, and tests waiting on them (the live connection's backoff on its test
/// clock, among others) timed out in a full run.
public enum BlockingRead {
    /// Everything until end of file.
    public static func toEnd(_ handle: FileHandle) async -> Data {
        await run { handle.readDataToEndOfFile() }
    }

    /// What is available now, waiting for at least one byte; empty at end of file.
    public static func available(_ handle: FileHandle) async -> Data {
        await run { handle.availableData }
    }

    /// Reads `handle` on a thread of its own until end of file, handing each chunk to `chunk`;
    /// the thread holds the handle until then. Not `FileHandle.readabilityHandler`: on Linux its
    /// dispatch read source, torn down while other pipes' sources come and go, crashes the whole
    /// process in libdispatch's `_dispatch_event_loop_drain` (swift-corelibs-libdispatch#949,
    /// swift-corelibs-foundation#3276) — a full test run under load hit it. A blocking read
    /// registers nothing with libdispatch.
    public static func drain(_ handle: FileHandle, _ chunk: @escaping @Sendable (Data) -> Void) {
        drain(handle, chunk, ended: {})
    }

    /// ``drain(_:_:)``, then `ended`, once, at end of file.
    public static func drain(
        _ handle: FileHandle, _ chunk: @escaping @Sendable (Data) -> Void, ended: @escaping @Sendable () -> Void
    ) {
        Thread.detachNewThread {
            while true {
                let data = handle.availableData
                if data.isEmpty {
                    ended()
                    return
                }
                chunk(data)
            }
        }
    }

    /// Runs blocking work (a read, a poll loop) on a thread of its own and waits for its result.
    public static func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: work()) }
        }
    }
}
