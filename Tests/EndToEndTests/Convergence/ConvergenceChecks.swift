import Crypto
import Foundation
import RooftopChaos
import RooftopShared

/// The assertions at the end of a convergence iteration, once every replica has synced until
/// idle:
///
/// 1. every replica holds exactly what the server lets its user read, field for field, version
///    for version; its local queries ordered by each field and filtered by ranges and a prefix
///    (``ChaosReplica/checkedQueries``, through the declared index when one has the field) answer
///    what the shared evaluator answers over those objects, and its local count is theirs;
/// 2. the server's state is explained by the ledger: each field's value was written by a change
///    that was not refused; acknowledged changes are applied exactly once, unacknowledged ones
///    (answers lost to a crash) at most once;
/// 3. nothing acknowledged is lost: an object with an acknowledged change exists unless a delete
///    may have removed it, an acknowledged delete removed it, and acknowledged list elements are
///    there unless a removal was queued for that list;
/// 4. each counter is the sum of exactly the increments applied, a distinct power of four each:
///    every acknowledged one, no refused one, none twice;
/// 5. no change is still queued, and every refusal is visible in the replica's refused list with
///    its code (none dropped silently);
/// 6. each merge rule picked the value it should have (``MergeChoiceCheck``), operation by
///    operation in the server's history of each object.
struct ConvergenceChecks {
    let replicas: [ConvergenceReplica]
    let users: [TestUser]
    let datastore: DatastoreID
    let api: APIClient
    let ledger: ConvergenceLedger
    /// The class's merge rules for `a` and `b`.
    let rules: [String: MergeRule]

    /// What the checks counted.
    struct Outcome {
        var acknowledged: Int
        var rejected: [String: Int]
        var unknown: Int
        var mergeChoices: MergeChoiceCheck.Figures
        /// Bulk loads of a first sync the replicas began (those of the replicas' current processes).
        var bulkLoads: Int
    }

    private enum Fate: Equatable {
        case acknowledged
        case rejected
        /// Answered while nobody listened (a killed process): applied at most once.
        case unknown
    }

    /// Runs every check; throws one ``ConvergenceFailure`` listing every problem found.
    /// - Returns: How many changes were acknowledged, rejected (by error code), and of unknown
    ///   fate, and the merge choices checked.
    func run() async throws -> Outcome {
        var problems: [String] = ledger.conflictingOutcomes.map { "answered twice differently: \($0)" }
        var codes: [String: Int] = [:]
        let fates = try await settleFates(&problems, codes: &codes)
        let bulkLoads = try await compareReplicas(&problems)
        let serverObjects = try await objects(token: nil, admin: true)
        checkModel(serverObjects, fates, &problems)
        let mergeChoices = try await checkMergeChoices(serverObjects, &problems)
        // A counter that lacks an acknowledged increment, an object back after a delete: how each
        // change was answered and what the server committed, so that one failing run tells the
        // explanations apart (a lost application, a later overwrite, a re-creation and by whom).
        for id in Self.tracedObjects(problems) {
            problems.append(try await objectTrace(id, fates, version: serverObjects[id]?.version))
        }
        if !problems.isEmpty {
            throw ConvergenceFailure(problems.prefix(40).joined(separator: "\n"))
        }
        let values = Array(fates.values)
        return Outcome(
            acknowledged: values.filter { $0 == .acknowledged }.count, rejected: codes,
            unknown: values.filter { $0 == .unknown }.count, mergeChoices: mergeChoices, bulkLoads: bulkLoads)
    }

    /// (6) The merge rules' choices, in each object's committed history.
    private func checkMergeChoices(_ server: [String: ObjectSnapshot], _ problems: inout [String]) async throws
        -> MergeChoiceCheck.Figures
    {
        var made: [String: ChaosCommand] = [:]
        var origins: [String: String] = [:]
        for change in ledger.issued {
            guard let user = replicas.first(where: { $0.index == change.replica })?.user else { continue }
            let origin = Self.origin(of: change.mutationId, userId: users[user].id)
            made[origin] = change.command
            origins[change.mutationId] = origin
        }
        // Changes of one object acknowledged at one version were one write: a rebase folded the
        // later ones into the first (the survivor), whose record carries their fields too.
        let outcomes = ledger.outcomes
        var writes: [String: [ConvergenceLedger.Issued]] = [:]
        for change in ledger.issued {
            guard case .acknowledged(let version)? = outcomes[change.mutationId], let object = change.command.objectId
            else { continue }
            writes["\(object) v\(version)", default: []].append(change)
        }
        var folded: [String: [ChaosCommand]] = [:]
        for group in writes.values where group.count > 1 {
            for change in group {
                guard let origin = origins[change.mutationId] else { continue }
                folded[origin] = group.filter { $0.mutationId != change.mutationId }.map(\.command)
            }
        }
        var check = MergeChoiceCheck(rules: rules)
        problems += check.check(ledger.merges)
        for (id, object) in server.sorted(by: { $0.key < $1.key }) {
            guard let history = try await operations(id) else {
                // Refused from its start: the ID was deleted and created again, and the server
                // answers only the current incarnation's history (docs/server.md, "Deleted IDs"),
                // for the admin key too. No change of this run re-creates an ID (creations take
                // new ones): a write with no base version brought a deleted object back.
                problems.append("object \(id) was deleted and created again: no change of the run re-creates an ID")
                let incarnation = try await incarnationHistory(id, through: object.version)
                problems += check.check(id, history: incarnation, made: made, folded: folded)
                continue
            }
            problems += check.check(id, history: history, made: made, folded: folded)
        }
        return check.figures
    }

    /// An object's committed history after a version, as the admin reads it; nil when the server
    /// refuses it as reaching before the ID's current incarnation (410).
    private func operations(_ id: String, after version: Int64 = 0) async throws -> [OperationRecord]? {
        let reply = try await api.send(
            .GET, APIClient.objectPath(datastore, ChaosReplica.className, id) + "/operations?after=\(version)",
            admin: true)
        if reply.status == 410 { return nil }
        guard (200..<300).contains(reply.status) else {
            throw ConvergenceFailure("the history of object \(id) is unavailable: HTTP \(reply.status)")
        }
        return try reply.decode(OperationList.self).operations
    }

    /// The history of a re-created object's current incarnation, from its creation: the server
    /// answers history after a version exactly when the version is at or after the ID's last
    /// delete, so the smallest such version is found by bisection between 0 (refused) and the
    /// object's version (answered, empty).
    /// - Throws: ``ConvergenceFailure`` when the history found does not start right after the
    ///   delete with a creation (a gap would make the bisection find its end instead).
    private func incarnationHistory(_ id: String, through version: Int64) async throws -> [OperationRecord] {
        var (refused, answered) = (Int64(0), version)
        var found: [OperationRecord] = []
        while answered - refused > 1 {
            let middle = refused + (answered - refused) / 2
            if let history = try await operations(id, after: middle) {
                (answered, found) = (middle, history)
            } else {
                refused = middle
            }
        }
        guard let first = found.first, first.version == answered + 1, first.priorValues.values.allSatisfy({ $0 == nil })
        else {
            throw ConvergenceFailure(
                "the history of re-created object \(id) does not start with its creation after version \(answered)")
        }
        return found
    }

    /// (5) The final status of every queued change, checked against the events heard.
    private func settleFates(_ problems: inout [String], codes: inout [String: Int]) async throws -> [String: Fate] {
        let outcomes = ledger.outcomes
        let issued = ledger.issued
        var fates: [String: Fate] = [:]
        for replica in replicas {
            let mine = issued.filter { $0.replica == replica.index }
            let reply = try await replica.perform(ChaosCommand(.statuses, ids: mine.map(\.mutationId)))
            let statuses = reply.statuses ?? [:]
            let refused = reply.rejected ?? [:]
            for change in mine {
                let id = change.mutationId
                let status = statuses[id] ?? "missing"
                let heard = outcomes[id]
                let what = "replica \(replica.index) \(change.command.kind) \(id) (life \(change.life))"
                if status == "pending" || status == "sent" || status == "missing" {
                    problems.append("\(what) is still \(status) after syncing until idle")
                } else if status.hasPrefix("rejected:") {
                    let code = String(status.dropFirst("rejected:".count))
                    if refused[id] != code {
                        // What the list holds, to tell a missing refusal from one filed under the
                        // mutation this change was folded into.
                        let entry = refused[id].map { "it as \($0)" } ?? "no entry for it"
                        let sameCode = refused.values.filter { $0 == code }.count
                        problems.append(
                            "\(what) is rejected (\(code)) but not in the refused list, which has \(entry)"
                                + " (\(refused.count) entries, \(sameCode) of them \(code))")
                    }
                    if case .acknowledged = heard { problems.append("\(what) was acknowledged, then reported rejected") }
                    fates[id] = .rejected
                    codes[code, default: 0] += 1
                } else if status.hasPrefix("acknowledged:") {
                    if case .rejected = heard { problems.append("\(what) was rejected, then reported acknowledged") }
                    fates[id] = .acknowledged
                } else {
                    // Unknown: the queue no longer remembers it. Refusals are kept durably, so
                    // only an acknowledgement can be forgotten, and only by a process that died.
                    switch heard {
                    case .rejected(let code)?:
                        // The refused list names a change folded into the refused one
                        // (`foldedMutationIds`), and its status reads that refusal.
                        problems.append(
                            refused[id] == code
                                ? "\(what) is in the refused list (\(code)) but its status is unknown"
                                : "\(what) was rejected (\(code)) but is not in the refused list, which has "
                                    + (refused[id].map { "it as \($0)" } ?? "no entry for it"))
                        fates[id] = .rejected
                    case .acknowledged?:
                        fates[id] = .acknowledged
                    case nil:
                        if change.life < replica.life {
                            fates[id] = .unknown
                        } else {
                            problems.append("\(what) vanished: neither acknowledged nor rejected")
                        }
                    }
                }
            }
        }
        return fates
    }

    /// (1) Every replica's local objects against what the server gives its user; its ordered
    /// local queries and count against those objects.
    /// - Returns: First syncs the replicas loaded in bulk.
    private func compareReplicas(_ problems: inout [String]) async throws -> Int {
        var bulkLoads = 0
        for replica in replicas {
            let user = users[replica.user]
            let server = try await objects(token: user.token, admin: false)
            let reply = try await replica.perform(ChaosCommand(.snapshot))
            if let error = reply.error { throw ConvergenceFailure("replica \(replica.index) snapshot: \(error)") }
            let local = reply.objects ?? [:]
            bulkLoads += reply.bulkLoads ?? 0
            for inconsistency in reply.storeInconsistencies ?? [] {
                problems.append("replica \(replica.index) local store: \(inconsistency)")
            }
            if reply.count != local.count {
                problems.append("replica \(replica.index) counts \(String(describing: reply.count)) objects locally, lists \(local.count)")
            }
            for checked in ChaosReplica.checkedQueries {
                var query = Query(ChaosReplica.className).order(by: checked.order)
                query.predicate = checked.predicate
                let expected = QueryEvaluator.run(
                    query, over: Array(local.values), lookup: { _ in nil }, canRead: { _ in true }
                ).objects.map(\.objectId)
                if reply.checked?[checked.name] != expected {
                    problems.append(
                        "replica \(replica.index) \(checked.name): \(reply.checked?[checked.name] ?? []), "
                            + "the evaluator gives \(expected)")
                }
            }
            for id in Set(server.keys).union(local.keys).sorted() {
                let what = "replica \(replica.index) (user \(replica.user)) object \(id)"
                switch (local[id], server[id]) {
                case (nil, _?): problems.append("\(what) is on the server but missing locally")
                case (_?, nil): problems.append("\(what) is stored locally but the server does not give it")
                case (let mine?, let theirs?):
                    if mine.fields != theirs.fields || mine.version != theirs.version || mine.acl != theirs.acl {
                        problems.append(
                            "\(what) differs: local v\(mine.version) \(mine.fields) \(String(describing: mine.acl)), "
                                + "server v\(theirs.version) \(theirs.fields) \(String(describing: theirs.acl))")
                    }
                case (nil, nil): break
                }
            }
        }
        return bulkLoads
    }

    /// (2), (3), (4) The server's objects against the ledger.
    private func checkModel(_ server: [String: ObjectSnapshot], _ fates: [String: Fate], _ problems: inout [String]) {
        let byObject = Dictionary(grouping: ledger.issued, by: { $0.command.objectId ?? "" })
        for (id, changes) in byObject.sorted(by: { $0.key < $1.key }) {
            let applicable = changes.filter { fates[$0.mutationId] != .rejected }
            let acknowledged = changes.filter { fates[$0.mutationId] == .acknowledged }
            let deleteAcknowledged = acknowledged.contains { $0.command.kind == .delete }
            let deletePossible = applicable.contains { $0.command.kind == .delete }
            guard let object = server[id] else {
                if !acknowledged.isEmpty && !deletePossible {
                    problems.append("object \(id) is gone, but \(acknowledged.count) acknowledged changes and no delete")
                }
                continue
            }
            if deleteAcknowledged { problems.append("object \(id) exists after an acknowledged delete") }
            checkCounter(id, object, applicable, acknowledged, &problems)
            checkValue(id, "a", object, applicable, acknowledged, [.create, .setA], { $0.int.map(Value.int) }, &problems)
            checkValue(id, "b", object, applicable, acknowledged, [.create, .setB], { $0.text.map(Value.string) }, &problems)
            checkList(id, object, changes, applicable, acknowledged, &problems)
        }
    }

    private func checkCounter(
        _ id: String, _ object: ObjectSnapshot, _ applicable: [ConvergenceLedger.Issued],
        _ acknowledged: [ConvergenceLedger.Issued], _ problems: inout [String]
    ) {
        let total = object.fields["n"]?.intValue ?? 0
        let allowed = applicable.filter { $0.command.kind == .increment }.reduce(Int64(0)) { $0 | ($1.command.int ?? 0) }
        let required = acknowledged.filter { $0.command.kind == .increment }.reduce(Int64(0)) { $0 | ($1.command.int ?? 0) }
        if total & ~allowed != 0 {
            problems.append(
                "object \(id): n = \(String(total, radix: 4)) (base 4) holds increments never made, refused or applied "
                    + "twice (allowed \(String(allowed, radix: 4)))")
        }
        if total & required != required {
            problems.append(
                "object \(id): n = \(String(total, radix: 4)) (base 4) lacks acknowledged increments "
                    + "\(String(required & ~total, radix: 4))")
        }
    }

    private func checkValue(
        _ id: String, _ field: String, _ object: ObjectSnapshot, _ applicable: [ConvergenceLedger.Issued],
        _ acknowledged: [ConvergenceLedger.Issued], _ kinds: Set<ChaosCommand.Kind>,
        _ value: (ChaosCommand) -> Value?, _ problems: inout [String]
    ) {
        let allowed = Set(applicable.filter { kinds.contains($0.command.kind) }.compactMap { value($0.command) })
        guard let current = object.fields[field] else {
            if acknowledged.contains(where: { kinds.contains($0.command.kind) }) {
                problems.append("object \(id): \(field) is missing despite acknowledged writes")
            }
            return
        }
        if !allowed.contains(current) {
            problems.append("object \(id): \(field) = \(current) was written by no change that could apply")
        }
    }

    private func checkList(
        _ id: String, _ object: ObjectSnapshot, _ changes: [ConvergenceLedger.Issued],
        _ applicable: [ConvergenceLedger.Issued], _ acknowledged: [ConvergenceLedger.Issued],
        _ problems: inout [String]
    ) {
        let adds: Set<ChaosCommand.Kind> = [.append, .insert]
        let list = object.fields["l"]?.listValue ?? []
        let elements = list.compactMap(\.stringValue)
        if elements.count != list.count || Set(elements).count != elements.count {
            problems.append("object \(id): l = \(list) has duplicates or foreign values (a change applied twice?)")
        }
        let allowed = Set(applicable.filter { adds.contains($0.command.kind) }.compactMap(\.command.text))
        for element in elements where !allowed.contains(element) {
            problems.append("object \(id): l holds \(element), added by no change that could apply")
        }
        guard !changes.contains(where: { $0.command.kind == .remove }) else { return }
        for change in acknowledged where adds.contains(change.command.kind) {
            if let text = change.command.text, !elements.contains(text) {
                problems.append("object \(id): l lost the acknowledged element \(text): \(elements)")
            }
        }
    }

    /// The objects named in problems that need the object's history to be understood: a missing
    /// acknowledged increment or list element, an object back after an acknowledged delete, a
    /// local copy the server no longer gives, a merge rule's wrong choice.
    static func tracedObjects(_ problems: [String]) -> [String] {
        var ids: [String] = []
        for problem in problems
        where problem.contains("lacks acknowledged increments") || problem.hasSuffix("exists after an acknowledged delete")
            || problem.contains("was deleted and created again")
            || problem.hasSuffix("is stored locally but the server does not give it")
            || problem.contains(" must ") || problem.contains("which the change does not write")
            || problem.contains("lost the acknowledged element") || problem.contains("has duplicates")
        {
            let words = problem.split(separator: " ")
            guard let index = words.firstIndex(of: "object"), words.indices.contains(index + 1) else { continue }
            let word = words[index + 1]
            let id = String(word.hasSuffix(":") ? word.dropLast() : word)
            if !ids.contains(id) { ids.append(id) }
        }
        return ids
    }

    /// One line per change queued for the object (kind, value, mutation, replica and its user,
    /// process life, fate, the answer heard) and one per operation the server committed on it
    /// (version, the change, and the queued mutation that made it, found by its origin).
    /// `version` is the object's on the server, which bounds the search for a re-created object's
    /// incarnation (`nil` for one the server does not give).
    private func objectTrace(_ id: String, _ fates: [String: Fate], version: Int64?) async throws -> String {
        let outcomes = ledger.outcomes
        var lines = ["trace of object \(id) (increments in base 4):"]
        var byOrigin: [String: String] = [:]
        for change in ledger.issued where change.command.objectId == id {
            let command = change.command
            let value =
                command.kind == .increment
                ? "+" + String(command.int ?? 0, radix: 4) : [command.int.map(String.init), command.text].compactMap { $0 }.joined(separator: " ")
            let fate = fates[change.mutationId].map { "\($0)" } ?? "no fate"
            let heard = outcomes[change.mutationId].map { "\($0)" } ?? "nothing heard"
            let user = replicas.first { $0.index == change.replica }?.user
            lines.append(
                "  \(command.kind) \(value) \(change.mutationId) replica \(change.replica) user \(user.map(String.init) ?? "?") "
                    + "life \(change.life): \(fate), \(heard)")
            if let user {
                byOrigin[Self.origin(of: change.mutationId, userId: users[user].id)] = "\(command.kind) \(change.mutationId)"
            }
        }
        let history: [OperationRecord]
        do {
            if let whole = try await operations(id) {
                history = whole
            } else {
                history = try await incarnationHistory(id, through: version ?? Int64.max)
                lines.append("  history of the current incarnation only (the ID was deleted and created again)")
            }
        } catch {
            lines.append("  operations unavailable: \(error)")
            return lines.joined(separator: "\n")
        }
        for record in history {
            let change: String
            switch record.change {
            case .delete:
                change = "delete"
            case .update(let updates, _):
                change = updates.map { update -> String in
                    if update.field == "n", case .increment(let amount) = update.operation, let value = amount.intValue {
                        return "n +" + String(value, radix: 4)
                    }
                    return "\(update.field) \(update.operation)"
                }.joined(separator: ", ")
            }
            let maker = record.origin.flatMap { byOrigin[$0] } ?? "origin \(record.origin ?? "none")"
            let prior = record.priorValues.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.map { "\($0)" } ?? "absent")" }
            lines.append("  v\(record.version) \(change) (\(maker)) prior [\(prior.joined(separator: ", "))]")
        }
        for merge in ledger.merges where merge.objectId == id {
            let decision = merge.decision
            let source = merge.mutationId.isEmpty ? "client rebase" : "server, push of \(merge.mutationId)"
            lines.append(
                "  merge on replica \(merge.replica) (\(source)): \(decision.field) by \(decision.rule) base "
                    + "\(String(describing: decision.baseValue)) local \(String(describing: decision.localValue)) remote "
                    + "\(String(describing: decision.remoteValue)) → \(String(describing: decision.result)) (\(decision.resolution))")
        }
        return lines.joined(separator: "\n")
    }

    /// The server's operation origin for a user's mutation (`ObjectService.origin(of:scope:)`).
    private static func origin(of mutationId: String, userId: String) -> String {
        let scope = "user:" + userId
        return String(hex("scope\u{0}" + scope).prefix(16)) + "." + String(hex(scope + "\u{0}" + mutationId).prefix(32))
    }

    private static func hex(_ text: String) -> String {
        SHA256.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// The datastore's objects as a user (or the admin) reads them on the server; none when the
    /// user has no role on the datastore any more.
    private func objects(token: String?, admin: Bool) async throws -> [String: ObjectSnapshot] {
        do {
            let response = try await api.query(
                datastore, className: ChaosReplica.className, text: "limit 1000", token: token, admin: admin)
            return Dictionary(response.objects.map { ($0.objectId, $0) }, uniquingKeysWith: { first, _ in first })
        } catch let error as APIClientError {
            if case .status(let status, _, _) = error, status == 403 || status == 404 { return [:] }
            throw error
        }
    }
}
