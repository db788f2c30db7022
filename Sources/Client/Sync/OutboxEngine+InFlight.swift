import Logging
import RooftopShared

/// What the changes queued while an object's earlier changes were in flight need when those are
/// acknowledged: the object's history since the base they were all made on, and its class's
/// merge rules (see ``OutboxEngine/inFlightHistories(_:rows:scope:core:)``).
struct InFlightHistory: Sendable {
    /// The object's operations after the base version the acknowledged rows were sent with.
    var records: [OperationRecord]
    /// The class's merge rules.
    var rules: MergeRules
}

extension OutboxEngine {
    static let logger = Logger(label: "rooftop.outbox")

    /// The histories the acknowledged objects of a push need for the changes queued while it was
    /// in flight.
    ///
    /// Such a change was made on the object's state at the push's base version plus the pushed
    /// changes. When the push's answer shows that nobody else wrote the object in between (each
    /// acknowledged row made the next version, and no merge was reported), the queued change
    /// simply moves on to the acknowledged version. Otherwise others' changes were committed
    /// between the base and that version, which the queued change never saw: it must be rebased
    /// over them (``Rebase/afterAcknowledged(queued:acknowledged:ownOrigins:records:sentBase:object:rules:)``),
    /// exactly as the server merges a change chained after the client's earlier ones. Only then
    /// is one history read for the object.
    ///
    /// - Throws: The error of a history (or of merge rules) that could not be read for a
    ///   transient reason: the push's answers are then left unsettled, and the rows go again
    ///   with the same IDs (the server answers them as before, and chains the queued changes
    ///   after them when they travel together). For any other reason (the history expired, or
    ///   the caller may not read it) the queued change moves on unrebased, and a notice is logged.
    func inFlightHistories(_ response: PushResponse, rows: [OutboxRow], scope: String, core: ClientCore)
        async throws(RooftopError) -> [ObjectKey: InFlightHistory]
    {
        var needed: [ObjectKey: Int64] = [:]
        var expected: [ObjectKey: Int64] = [:]
        var disturbed: Set<ObjectKey> = []
        for row in rows {
            guard case .applied(_, let version, let object, let merges)? = response.result(for: row.mutation.mutationId)
            else { continue }
            let key = row.key
            if expected[key] == nil {
                expected[key] = row.mutation.baseVersion ?? 0
                needed[key] = row.mutation.baseVersion ?? 0
            }
            if version != (expected[key] ?? 0) + 1 || !merges.isEmpty { disturbed.insert(key) }
            // Deleted: the queued changes keep their base or follow the client's own delete.
            if object == nil { needed[key] = nil }
            expected[key] = version
        }
        let sent = Set(rows.map(\.mutation.mutationId))
        var histories: [ObjectKey: InFlightHistory] = [:]
        for key in disturbed {
            guard let base = needed[key] else { continue }
            let waiting: [OutboxRow]
            do {
                waiting = try core.store.queued(for: key, scope: scope).filter { !sent.contains($0.mutation.mutationId) }
            } catch {
                continue  // settle reads the queue again and fails the round if it cannot
            }
            guard waiting.contains(where: { !$0.mayHaveReachedServer }) else { continue }
            do throws(RooftopError) {
                let records = try await core.api.operations(key, after: base)
                guard let rules = await core.services.rules.rules(for: key.className, api: core.api) else {
                    throw RooftopError(.noConnection, "the merge rules of \(key.className) could not be fetched")
                }
                histories[key] = InFlightHistory(records: records, rules: rules)
            } catch {
                if error.isTransient { throw error }
                OutboxEngine.logger.notice(
                    "changes queued during a push not rebased over concurrent changes; they apply on the acknowledged version",
                    metadata: ["object": "\(key)", "error": "\(error)"])
            }
        }
        return histories
    }
}

extension Rebase {
    /// Rebases the changes queued while an object's earlier changes were in flight over the
    /// changes others committed between the base version they were all made on and the version
    /// the acknowledged changes reached: the client's side of the chain the server builds within
    /// one push (``ObjectMerge/rebaseStep(local:after:over:base:current:className:rules:)``), so
    /// that a stale queued value does not silently win over a concurrent one.
    ///
    /// - Parameters:
    ///   - queued: The queued changes, in order, all made on `sentBase` plus `acknowledged`.
    ///   - acknowledged: The acknowledged changes of the object, as the client made them.
    ///   - ownOrigins: The origins of the acknowledged changes' operations
    ///     (`OperationOrigin.make`).
    ///   - records: The object's history after `sentBase`.
    ///   - sentBase: The base version the acknowledged changes were sent with.
    ///   - object: The object at the acknowledged version.
    ///   - rules: The merge rules.
    /// - Returns: One rebased change per queued one (`nil`: nothing left of it) and the merge
    ///   decisions; the queued changes unchanged when nobody else wrote in between; `nil` when
    ///   the history does not cover the span or the changes do not replay on it.
    static func afterAcknowledged(
        queued: [ObjectChange], acknowledged: [ObjectChange], ownOrigins: Set<String>, records: [OperationRecord],
        sentBase: Int64, object: ObjectSnapshot, rules: MergeRules
    ) -> (changes: [ObjectChange?], decisions: [MergeDecision])? {
        let history = records.filter { $0.version > sentBase && $0.version <= object.version }
        guard OperationRecord.complete(history, after: sentBase, through: object.version) else { return nil }
        let foreign = history.filter { record in record.origin.map { !ownOrigins.contains($0) } ?? true }
        guard !foreign.isEmpty else { return (queued, []) }
        let base = OperationRecord.fields(before: history, current: object.fields)
        var state: ObjectSnapshot? = object
        var earlier = acknowledged
        var changes: [ObjectChange?] = []
        var decisions: [MergeDecision] = []
        for change in queued {
            guard let current = state,
                let step = try? ObjectMerge.rebaseStep(
                    local: change, after: earlier, over: foreign.map(\.change), base: base, current: current.fields,
                    className: object.className, rules: rules)
            else { return nil }
            changes.append(step.change)
            decisions += step.decisions
            if let applied = step.change {
                guard let next = try? current.applying(applied) else { return nil }
                state = next
            }
            earlier.append(change)
        }
        return (changes, decisions)
    }
}

