import Foundation
import RooftopChaos
import RooftopShared
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
/// Any failing iteration fails the run. The bugs the harness found, and the tests that now pin
/// each one down, are in RELIABILITY.md.
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
        // A long run loads first syncs in bulk (a joiner's count goes with a killed process,
        // so a run of a few iterations may count none).
        if total.iterations >= 20 {
            #expect(total.bulkLoads > 0, "replicas that joined half-way loaded their first sync in bulk")
        }
    }

    @Test("the merge-choice check refuses each rule applied as another")
    func mergeChoices() {
        func problem(_ rule: MergeRule, wrote: Int64, over prior: Int64?, left result: Int64?, earlier: [Int64] = [])
            -> String?
        {
            MergeChoiceCheck.problem(
                rule: rule, written: .int(wrote), prior: prior.map(Value.int), result: result.map(Value.int),
                earlier: earlier.map(Value.int), ordered: true)
        }
        // What each rule should do, under a larger (concurrent) and a smaller prior value.
        #expect(problem(.local, wrote: 5, over: 9, left: 5) == nil)
        #expect(problem(.remote, wrote: 5, over: 9, left: 9) == nil)
        #expect(problem(.remote, wrote: 5, over: 3, left: 5) == nil)
        #expect(problem(.remote, wrote: 5, over: 3, left: 3) == nil)
        #expect(problem(.max, wrote: 5, over: 9, left: 9) == nil)
        #expect(problem(.max, wrote: 5, over: 3, left: 5) == nil)
        #expect(problem(.max, wrote: 5, over: nil, left: 5) == nil)
        #expect(problem(.min, wrote: 5, over: 9, left: 5) == nil)
        #expect(problem(.min, wrote: 5, over: 3, left: 3) == nil)
        #expect(problem(.min, wrote: 5, over: 7, left: 2, earlier: [2, 7]) == nil)
        // Each rule applied as another is seen.
        #expect(problem(.max, wrote: 5, over: 9, left: 5) != nil, "max applied as local")
        #expect(problem(.max, wrote: 5, over: 3, left: 3) != nil, "max applied as min")
        #expect(problem(.min, wrote: 5, over: 9, left: 9) != nil, "min applied as max or remote")
        #expect(problem(.remote, wrote: 5, over: 9, left: 5) != nil, "remote applied as local")
        #expect(problem(.local, wrote: 5, over: 3, left: 3) != nil, "local applied as remote")
        #expect(problem(.local, wrote: 5, over: 9, left: 9) != nil, "local applied as max")
        #expect(problem(.remote, wrote: 5, over: 3, left: 4) != nil, "a value neither side wrote")
        #expect(problem(.min, wrote: 5, over: 3, left: 1, earlier: [3]) != nil, "a value the field never held")

        // Decisions the replicas report.
        func decision(_ rule: MergeRule, base: Int64?, local: Int64?, remote: Int64?, result: Int64?) -> String? {
            MergeChoiceCheck.decisionProblem(
                MergeDecision(
                    field: "a", baseValue: base.map(Value.int), localValue: local.map(Value.int),
                    remoteValue: remote.map(Value.int), rule: rule, result: result.map(Value.int), resolution: .rule),
                rule: rule)
        }
        #expect(decision(.max, base: 1, local: 5, remote: 9, result: 9) == nil)
        #expect(decision(.max, base: 1, local: 5, remote: 9, result: 5) != nil)
        #expect(decision(.min, base: 1, local: 5, remote: 9, result: 5) == nil)
        #expect(decision(.min, base: 1, local: 5, remote: 9, result: 9) != nil)
        #expect(decision(.min, base: 1, local: 5, remote: nil, result: 5) == nil)
        #expect(decision(.local, base: 1, local: 5, remote: 9, result: 5) == nil)
        #expect(decision(.local, base: 1, local: 5, remote: 9, result: 9) != nil)
        #expect(decision(.remote, base: 1, local: 5, remote: 9, result: 9) == nil)
        #expect(decision(.remote, base: 1, local: 5, remote: 9, result: 5) != nil)
        #expect(decision(.sum, base: 1, local: 5, remote: 9, result: 13) == nil)
        #expect(decision(.sum, base: 1, local: 5, remote: 9, result: 9) != nil)
        var rules = MergeChoiceCheck(rules: ["a": .max])
        let wrongRule = MergeDecision(
            field: "a", baseValue: .int(1), localValue: .int(5), remoteValue: .int(9), rule: .remote, result: .int(9),
            resolution: .rule)
        #expect(rules.check([.init(replica: 0, objectId: "x", mutationId: "", decision: wrongRule)]).count == 1)

        // Through a history: a max applied as local, and an increment that changed `a`.
        let origin = "o1"
        let history = [
            OperationRecord(version: 1, change: .update([FieldUpdate("a", .set(.int(9)))]), priorValues: ["a": nil]),
            OperationRecord(
                version: 2, change: .update([FieldUpdate("a", .set(.int(5)))]), priorValues: ["a": .int(9)],
                origin: origin),
            OperationRecord(
                version: 3, change: .update([FieldUpdate("a", .set(.int(1)))]), priorValues: ["a": .int(5)],
                origin: "o2"),
        ]
        var check = MergeChoiceCheck(rules: ["a": .max])
        let problems = check.check(
            "x", history: history,
            made: [origin: ChaosCommand(.setA, objectId: "x", int: 5), "o2": ChaosCommand(.increment, objectId: "x", int: 1)])
        #expect(problems.count == 2, "\(problems)")
        #expect(problems.first?.contains("max must keep 9") == true)
        #expect(problems.last?.contains("changed a, which the change does not write") == true)
        #expect(check.figures.checked[.max] == 1 && check.figures.contested[.max] == 1)
        // A set of `a` a rebase folded into the increment was sent with it: its write is the
        // increment's record's.
        var folding = MergeChoiceCheck(rules: ["a": .max])
        let withFold = folding.check(
            "x", history: history,
            made: [origin: ChaosCommand(.setA, objectId: "x", int: 5), "o2": ChaosCommand(.increment, objectId: "x", int: 1)],
            folded: ["o2": [ChaosCommand(.setA, objectId: "x", int: 1)]])
        #expect(withFold.count == 1 && withFold.first?.contains("max must keep 9") == true, "\(withFold)")
        // Two sets of `a` folded into one write: the later one's value is what was written
        // (under `min`, 32 left over 33 is the fold's 32, not more than the first set's 28).
        let overwritten = [
            OperationRecord(version: 1, change: .update([FieldUpdate("a", .set(.int(33)))]), priorValues: ["a": nil], origin: "r"),
            OperationRecord(
                version: 2, change: .update([FieldUpdate("a", .set(.int(32)))]), priorValues: ["a": .int(33)],
                origin: "s"),
        ]
        let sets = [
            "r": ChaosCommand(.setA, objectId: "z", int: 33), "s": ChaosCommand(.setA, objectId: "z", int: 28),
        ]
        var unfolded = MergeChoiceCheck(rules: ["a": .min])
        let alone = unfolded.check("z", history: overwritten, made: sets)
        #expect(alone.count == 1 && alone.first?.contains("min must keep at most the written value") == true, "\(alone)")
        var refolded = MergeChoiceCheck(rules: ["a": .min])
        let together = refolded.check(
            "z", history: overwritten, made: sets, folded: ["s": [ChaosCommand(.setA, objectId: "z", int: 32)]])
        #expect(together.isEmpty, "\(together)")

        // A first creation is logged without its updates: its values are the next record's
        // priors. A set that made the object is not checked (nothing merged over it); one that
        // overwrote a larger created value under `max` is.
        let created = [
            OperationRecord(version: 1, change: .update([]), priorValues: ["a": nil], origin: "c1"),
            OperationRecord(
                version: 2, change: .update([FieldUpdate("a", .set(.int(5)))]), priorValues: ["a": .int(90)],
                origin: "c2"),
        ]
        var fresh = MergeChoiceCheck(rules: ["a": .max])
        let found = fresh.check(
            "y", history: created,
            made: ["c1": ChaosCommand(.setA, objectId: "y", int: 57), "c2": ChaosCommand(.setA, objectId: "y", int: 5)])
        #expect(found.count == 1 && found.first?.contains("v2") == true && found.first?.contains("max must keep 90") == true, "\(found)")
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
        #expect(ConvergenceChecks.tracedObjects(["object o7: l lost the acknowledged element r0-34: [\"r1-2\"]"]) == ["o7"])
    }
}
