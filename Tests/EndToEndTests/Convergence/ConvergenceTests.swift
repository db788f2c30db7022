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
/// Failures explained entirely by a bug the harness found and that is not fixed yet
/// (``KnownConvergenceBugs``) are recorded as known, intermittent issues: they stay visible in
/// the output without failing the run; any other failure fails it.
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
        var knownFailures = 0
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
                if let bug = KnownConvergenceBugs.explaining("\(error)") {
                    knownFailures += 1
                    withKnownIssue(Comment(rawValue: bug), isIntermittent: true) { Issue.record(Comment(rawValue: message)) }
                } else {
                    Issue.record(Comment(rawValue: message))
                }
                if failures.count - knownFailures >= maximumFailures { break }
            }
            if (iteration + 1) % 50 == 0 {
                print("convergence: \(iteration + 1)/\(iterations) after \(clock.now - started); \(failures.count) failed")
            }
        }
        print(
            """
            convergence: seeds \(base)...; \(clock.now - started); failed seeds \(failures) (\(knownFailures) by known \
            bugs); \(total.summary)
            """)
        #expect(total.iterations + failures.count >= 1, "at least one iteration ran")
        #expect(total.changes > 0 || !failures.isEmpty, "iterations queued changes")
    }

    @Test("only failures fully explained by a known bug are recorded as known issues")
    func knownBugsAreRecognizedOnlyWhenTheyExplainEverything() {
        let stale = "replica 2 (user 2) object o1 is stored locally but the server does not give it"
        let resurrected = """
            object o2 exists after an acknowledged delete
            object o2: b is missing despite acknowledged writes
            """
        #expect(KnownConvergenceBugs.explaining("iteration failed\n" + stale) == KnownConvergenceBugs.staleCopy)
        #expect(KnownConvergenceBugs.explaining(resurrected) == KnownConvergenceBugs.resurrection)
        #expect(KnownConvergenceBugs.explaining(resurrected + "\nobject o3: b is missing despite acknowledged writes") == nil,
                "a problem with another object is not explained by o2's resurrection")
        #expect(KnownConvergenceBugs.explaining("object o4: n = 2 (base 4) holds increments never made") == nil)
        #expect(KnownConvergenceBugs.explaining("timed out waiting for the reply") == nil)
    }

    @Test("a missing increment or a resurrection gets a trace, which leaves known-bug matching alone")
    func missingIncrementsAreTraced() {
        let problems = [
            "object o1: n = 10 (base 4) lacks acknowledged increments 1",
            "object o2: n = 2 (base 4) holds increments never made, refused or applied twice (allowed 1)",
            "object o1: b is missing despite acknowledged writes",
            "object o3: n = 0 (base 4) lacks acknowledged increments 100",
        ]
        #expect(ConvergenceChecks.tracedObjects(problems) == ["o1", "o3"])
        #expect(ConvergenceChecks.tracedObjects(["object o5 exists after an acknowledged delete"] + problems) == ["o5", "o1", "o3"])
        let resurrected = """
            object o2 exists after an acknowledged delete
            object o2: n = 0 (base 4) lacks acknowledged increments 1
            trace of object o2 (increments in base 4):
              increment 1 m1 replica 0 life 0: acknowledged, acknowledged(version: 2)
              v2 n: +1 (origin x)
            """
        #expect(KnownConvergenceBugs.explaining(resurrected) == KnownConvergenceBugs.resurrection)
    }
}

/// Bugs the harness found that are not fixed yet, recognized in a failure's problem lines so that
/// only failures they fully explain are recorded as known issues.
enum KnownConvergenceBugs {
    /// A deleted object comes back after an acknowledged delete, holding only the fields of one
    /// update (seen about once in 50 iterations; see RELIABILITY.md).
    static let resurrection = "a deleted object is re-created by an update"
    /// A replica keeps an object the server no longer gives its user (seen about once in 40
    /// iterations; see RELIABILITY.md).
    static let staleCopy = "a replica keeps a local copy the server no longer gives its user"

    /// The known bug that explains every problem line of `failure`, or `nil`.
    static func explaining(_ failure: String) -> String? {
        let lines = failure.split(separator: "\n").map(String.init).filter { $0.hasPrefix("object ") || $0.hasPrefix("replica ") }
        guard !lines.isEmpty else { return nil }
        let resurrected = Set(lines.filter { $0.hasSuffix("exists after an acknowledged delete") }.compactMap(objectId))
        var bugs: Set<String> = []
        for line in lines {
            if line.hasSuffix("is stored locally but the server does not give it") {
                bugs.insert(staleCopy)
            } else if let id = objectId(line), resurrected.contains(id) {
                bugs.insert(resurrection)
            } else {
                return nil
            }
        }
        return bugs.sorted().joined(separator: "; ")
    }

    /// The object ID a problem line names (`object <id>` or `... object <id> ...`).
    private static func objectId(_ line: String) -> String? {
        let words = line.split(separator: " ")
        guard let index = words.firstIndex(of: "object"), words.indices.contains(index + 1) else { return nil }
        return String(words[index + 1].trimmingCharacters(in: CharacterSet(charactersIn: ":")))
    }
}
