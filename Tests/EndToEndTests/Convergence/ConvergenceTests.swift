import Foundation
import RooftopTestSupport
import Testing

/// The randomized convergence harness: replicas in the test process and in their own processes
/// make random changes through the offline queue while their networks fail in every way the
/// fault proxy knows, the server is killed with SIGKILL and restarted, and replica processes
/// crash and reopen their cache files; at the end everyone syncs until idle and
/// ``ConvergenceChecks`` hold.
///
/// A few iterations run with every `swift test`. The long run:
///
/// ```sh
/// ROOFTOP_CONVERGENCE_ITERATIONS=1000 ROOFTOP_CONVERGENCE_SEED=random swift test -c release --filter Convergence
/// ```
///
/// A failing iteration prints its seed; `ROOFTOP_CONVERGENCE_SEED=<seed> ROOFTOP_CONVERGENCE_ITERATIONS=1`
/// runs it again (the same changes and faults in the same order; the timing of the network and
/// of the processes still varies).
///
/// Any failing iteration fails the run (the bugs the harness found are fixed: RELIABILITY.md).
@Suite("Randomized convergence", .serialized)
struct ConvergenceTests {
    /// The first seed when `ROOFTOP_CONVERGENCE_SEED` is not set, so that CI runs the same
    /// sequences every time.
    static let defaultSeed: UInt64 = 0x2026_1123
    /// Iterations when `ROOFTOP_CONVERGENCE_ITERATIONS` is not set (kept under a minute in a
    /// debug build).
    static let defaultIterations = 3
    /// A long run stops after this many failing iterations (`ROOFTOP_CONVERGENCE_MAX_FAILURES`).
    static let maximumFailures = 10

    @Test("replicas converge on the server's state, and the server's state is explained by what was acknowledged")
    func converges() async throws {
        let environment = ProcessInfo.processInfo.environment
        let iterations = environment["ROOFTOP_CONVERGENCE_ITERATIONS"].flatMap(Int.init) ?? Self.defaultIterations
        let seedText = environment["ROOFTOP_CONVERGENCE_SEED"]
        let base: UInt64 =
            seedText == "random" ? UInt64.random(in: 1..<UInt64(1) << 48) : seedText.flatMap(UInt64.init) ?? Self.defaultSeed
        var total = ConvergenceFigures()
        var failures: [UInt64] = []
        let maximumFailures =
            environment["ROOFTOP_CONVERGENCE_MAX_FAILURES"].flatMap(Int.init) ?? Self.maximumFailures
        let clock = ContinuousClock()
        let started = clock.now
        for iteration in 0..<max(1, iterations) {
            let seed = base &+ UInt64(iteration)
            do {
                var run = ConvergenceRun(seed: seed)
                let figures = try await withSyncHarness { harness in try await run.run(harness) }
                total.add(figures)
            } catch {
                failures.append(seed)
                let message = """
                    convergence iteration \(iteration) failed; replay it with \
                    ROOFTOP_CONVERGENCE_SEED=\(seed) ROOFTOP_CONVERGENCE_ITERATIONS=1 swift test --filter Convergence
                    \(error)
                    """
                Issue.record(Comment(rawValue: message))
                if failures.count >= maximumFailures { break }
            }
            if (iteration + 1) % 50 == 0 {
                print("convergence: \(iteration + 1)/\(iterations) after \(clock.now - started); \(failures.count) failed")
            }
        }
        print(
            """
            convergence: seeds \(base)...; \(clock.now - started); failed seeds \(failures); \(total.summary)
            """)
        #expect(total.iterations + failures.count >= 1, "at least one iteration ran")
        #expect(total.changes > 0 || !failures.isEmpty, "iterations queued changes")
    }

    @Test("a missing increment, a resurrection or a stale copy gets a trace of the object")
    func missingIncrementsAreTraced() {
        let problems = [
            "object o1: n = 10 (base 4) lacks acknowledged increments 1",
            "object o2: n = 2 (base 4) holds increments never made, refused or applied twice (allowed 1)",
            "object o1: b is missing despite acknowledged writes",
            "object o3: n = 0 (base 4) lacks acknowledged increments 100",
        ]
        #expect(ConvergenceChecks.tracedObjects(problems) == ["o1", "o3"])
        #expect(ConvergenceChecks.tracedObjects(["object o5 exists after an acknowledged delete"] + problems) == ["o5", "o1", "o3"])
        #expect(
            ConvergenceChecks.tracedObjects(["replica 2 (user 1) object o6 is stored locally but the server does not give it"])
                == ["o6"])
    }
}
