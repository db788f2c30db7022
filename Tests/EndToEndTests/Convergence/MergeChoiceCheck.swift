import RooftopChaos
import RooftopShared

/// (6) Which value each merge rule picked, operation by operation, from the server's committed
/// history of an object: every operation made by a `setA` or `setB` change (found by its origin)
/// is checked against the value the change wrote, `v`, and the value the field held just before
/// the operation, `p` (the remote value the merge saw), for the field's rule:
///
/// - `local`: the field is `v` afterwards;
/// - `remote`: the field is `v` or still `p`, and still `p` when `p > v`;
/// - `max`: the field is the larger of `v` and `p`;
/// - `min`: the field is at most `v`, and is `v` or a value it held earlier.
///
/// These hold whatever the concurrency was, because the harness writes `a` in increasing order
/// (each `setA` writes the run's counter): a value larger than `v` was written by a change made
/// after `v`'s, so it is necessarily concurrent with it (nothing `v`'s replica had seen), and a
/// client that rebased its change before sending it resolved it with the same rule. For `b`
/// (text, no order among writers) `local` and `remote` are checked the same way without the
/// order clause. Operations made by any other change must leave `a` and `b` alone.
///
/// The check sees a wrong rule: `max` applied as `local` sets `v` under a larger `p`, `min` as
/// `max` leaves a value above `v`, `remote` as `local` overwrites a later `p`, `local` as `remote`
/// keeps `p` (``ConvergenceTests/mergeChoices()`` feeds it each).
///
/// The merge decisions the replicas report are checked too (``check(_:)``): those of the server,
/// answering a push, and those of the clients, rebasing queued changes over pulled ones — a
/// conflict resolved on the client before its change was sent leaves no trace in the server's
/// history, so this is where most of `remote`, `max` and `min`'s choices show.
struct MergeChoiceCheck {
    /// How many operations were checked per rule, and how many of them wrote over a different
    /// value (a merge that kept the other value leaves no operation: the decisions show those).
    struct Figures: Sendable {
        var checked: [MergeRule: Int] = [:]
        var contested: [MergeRule: Int] = [:]
        /// Merge decisions by rule the replicas reported (the server's answering a push, the
        /// client's rebasing), each checked with ``decisionProblem(_:rule:)``.
        var serverDecisions: [MergeRule: Int] = [:]
        var clientDecisions: [MergeRule: Int] = [:]

        mutating func add(_ other: Figures) {
            checked.merge(other.checked, uniquingKeysWith: +)
            contested.merge(other.contested, uniquingKeysWith: +)
            serverDecisions.merge(other.serverDecisions, uniquingKeysWith: +)
            clientDecisions.merge(other.clientDecisions, uniquingKeysWith: +)
        }

        /// `operations: max 12 (3 over another value), ...; decisions (server/client): max 2/5, ...`
        var summary: String {
            func sorted(_ counts: [MergeRule: Int]...) -> [MergeRule] {
                Set(counts.flatMap(\.keys)).sorted { $0.rawValue < $1.rawValue }
            }
            let operations = sorted(checked).map { "\($0) \(checked[$0] ?? 0) (\(contested[$0] ?? 0) over another value)" }
            let decisions = sorted(serverDecisions, clientDecisions).map {
                "\($0) \(serverDecisions[$0] ?? 0)/\(clientDecisions[$0] ?? 0)"
            }
            return "operations: " + operations.joined(separator: ", ") + "; decisions (server/client): "
                + decisions.joined(separator: ", ")
        }
    }

    /// The rules of the fields checked (`a`, `b`).
    let rules: [String: MergeRule]
    private(set) var figures = Figures()

    /// The fields a change of each kind may change; a create sets every field.
    private static let fields: [ChaosCommand.Kind: Set<String>] = [
        .setA: ["a"], .setB: ["b"], .increment: ["n"], .append: ["l"], .insert: ["l"], .remove: ["l"], .move: ["l"],
        .changeACL: [], .delete: [],
    ]

    /// Checks one object's history (in version order, from its creation). `made` names the
    /// change that made each operation, by the operation's origin; operations of unknown origin
    /// are not checked. `folded` names, by origin, the other changes acknowledged at the same
    /// version (a rebase may have folded them into that one, sent as one write): the fields they
    /// write are its too, and any value they set may be the one written.
    /// - Returns: One line per problem.
    mutating func check(
        _ id: String, history: [OperationRecord], made: [String: ChaosCommand], folded: [String: [ChaosCommand]] = [:]
    ) -> [String] {
        var problems: [String] = []
        var current: [String: Value] = [:]
        var held: [String: [Value]] = [:]
        for record in history {
            // The prior values a record keeps are the fields' values just before it: they also
            // tell the values of an object's first creation, whose updates are not kept.
            for (field, value) in record.priorValues { current[field] = value }
            let before = current
            for update in record.change.updates {
                switch update.operation {
                case .set(let value): current[update.field] = value
                case .unset: current[update.field] = nil
                default: break
                }
            }
            defer {
                for field in ["a", "b"] { if let value = before[field] { held[field, default: []].append(value) } }
            }
            guard let command = record.origin.flatMap({ made[$0] }) else { continue }
            let what = "object \(id) v\(record.version) (\(command.kind))"
            if var allowed = Self.fields[command.kind] {
                for other in record.origin.flatMap({ folded[$0] }) ?? [] {
                    allowed.formUnion(Self.fields[other.kind] ?? [])
                }
                // Changed in value: a client whose instance has no server state yet (reopened
                // before its create was answered) sends every field, unchanged ones included.
                let changed = Set(["a", "b"].filter { before[$0] != current[$0] })
                for field in changed.subtracting(allowed).sorted() {
                    problems.append("\(what) changed \(field), which the change does not write")
                }
            }
            // Changes acknowledged at this record's version with it may have been folded into it
            // (sent as one write: then the value written is the last of theirs), or have been
            // acknowledged there without writing (lost to the rule): the ledger cannot tell
            // which, so the record passes when one of their values explains it.
            let together = [command] + (record.origin.flatMap { folded[$0] } ?? []).filter { $0.kind == command.kind }
            let field: String
            let candidates: [Value]
            switch command.kind {
            case .setA: (field, candidates) = ("a", together.compactMap { $0.int.map(Value.int) })
            case .setB: (field, candidates) = ("b", together.compactMap { $0.text.map(Value.string) })
            default: continue
            }
            let written = candidates.first
            // An object's first creation is logged without its updates (its prior values name the
            // fields it made): nothing merged over it, and its values are the next record's priors.
            guard let written, let rule = rules[field], !record.change.updates.isEmpty else { continue }
            let prior = before[field]
            let result = current[field]
            figures.checked[rule, default: 0] += 1
            if let prior, prior != written { figures.contested[rule, default: 0] += 1 }
            let found = candidates.map {
                Self.problem(rule: rule, written: $0, prior: prior, result: result, earlier: held[field] ?? [], ordered: field == "a")
            }
            if !found.contains(where: { $0 == nil }), let problem = found.first ?? nil {
                problems.append("\(what) \(field): \(problem)")
            }
        }
        return problems
    }

    /// Checks the merge decisions the replicas reported: each decided by a rule must name the
    /// field's configured rule and pick what the rule says between the local and remote values.
    /// - Returns: One line per problem.
    mutating func check(_ merges: [ConvergenceLedger.Merge]) -> [String] {
        var problems: [String] = []
        for merge in merges where merge.decision.resolution == .rule {
            let decision = merge.decision
            let source = merge.mutationId.isEmpty ? "the client rebasing" : "the server answering \(merge.mutationId)"
            let configured = rules[decision.field] ?? (decision.field == "n" ? .sum : .remote)
            if merge.mutationId.isEmpty {
                figures.clientDecisions[decision.rule, default: 0] += 1
            } else {
                figures.serverDecisions[decision.rule, default: 0] += 1
            }
            if decision.rule != configured {
                problems.append(
                    "replica \(merge.replica) object \(merge.objectId) \(decision.field): \(source) used \(decision.rule), "
                        + "the class says \(configured)")
            } else if let problem = Self.decisionProblem(decision, rule: configured) {
                problems.append("replica \(merge.replica) object \(merge.objectId) \(decision.field): \(source) \(problem)")
            }
        }
        return problems
    }

    /// Why a decision by `rule` is not what the rule picks between its local and remote values
    /// (absent values: `nil`), or `nil`.
    static func decisionProblem(_ decision: MergeDecision, rule: MergeRule) -> String? {
        let (local, remote, result) = (decision.localValue, decision.remoteValue, decision.result)
        let expected: Value?
        switch rule {
        case .local: expected = local
        case .remote: expected = remote
        case .max, .min:
            guard let local, let remote else {
                expected = local ?? remote
                break
            }
            let order = Value.compare(local, remote)
            expected = (rule == .max) == (order >= 0) ? local : remote
        case .sum:
            guard case .int(let localInt)? = local, case .int(let remoteInt)? = remote else { return nil }
            let base: Int64
            switch decision.baseValue {
            case nil: base = 0
            case .int(let value)?: base = value
            default: return nil
            }
            expected = .int(remoteInt &+ localInt &- base)
        }
        guard result != expected else { return nil }
        let text = { (value: Value?) in value.map { "\($0)" } ?? "nothing" }
        return "picked \(text(result)) by \(rule) between local \(text(local)) and remote \(text(remote)) "
            + "(base \(text(decision.baseValue))), expected \(text(expected))"
    }

    /// Why `result` is not what `rule` may pick between `written` and `prior`, or `nil`.
    /// `ordered`: values were written in increasing order, so a larger prior is concurrent.
    static func problem(
        rule: MergeRule, written: Value, prior: Value?, result: Value?, earlier: [Value], ordered: Bool
    ) -> String? {
        let shown = "wrote \(written) over \(prior.map { "\($0)" } ?? "nothing"), left \(result.map { "\($0)" } ?? "nothing")"
        let priorLarger = prior.map { Value.compare($0, written) > 0 } ?? false
        switch rule {
        case .local:
            return result == written ? nil : "\(shown): local must keep the written value"
        case .remote, .sum:
            if result != written && result != prior { return "\(shown): remote must keep one of the two" }
            if ordered && priorLarger && result != prior { return "\(shown): remote must keep the later concurrent value" }
            return nil
        case .max:
            let larger = prior.map { priorLarger ? $0 : written } ?? written
            return result == larger ? nil : "\(shown): max must keep \(larger)"
        case .min:
            guard let result else { return "\(shown): min must keep a value" }
            if Value.compare(result, written) > 0 { return "\(shown): min must keep at most the written value" }
            if result != written && !earlier.contains(result) && result != prior {
                return "\(shown): min kept a value the field never held"
            }
            return nil
        }
    }
}
