import PropertyBased
import RooftopShared
import Testing
import RooftopTestSupport

@Suite("Merge properties")
struct MergePropertyTests {
    /// Arrival orders of `count` pushes: as generated, reversed, and sorted by random keys.
    private static func orders(_ keys: [Int]) -> [[Int]] {
        let indices = Array(keys.indices)
        return [indices, indices.reversed(), indices.sorted { (keys[$0], $0) < (keys[$1], $1) }]
    }

    @Test func sumOfConcurrentIncrementsCountsEveryIncrementInAnyOrder() async {
        let client = zip(Gen.int(in: -50...50).array(of: 1...3), Gen.int(in: 0...1000))
        await propertyCheck(input: Gen.int(in: -1000...1000), client.array(of: 1...6)) { base, clients in
            recordingErrors {
                let total = clients.flatMap(\.0).reduce(base, +)
                for order in Self.orders(clients.map(\.1)) {
                    var server = MergeTestServer(
                        base: ["n": .int(Int64(base))], rules: MergeRules(classes: ["C": ["n": .sum]]))
                    for index in order {
                        let increments = clients[index].0.map { FieldUpdate("n", .increment(.int(Int64($0)))) }
                        try server.push([.update(increments)], baseVersion: 0)
                    }
                    #expect(server.current?["n"] == .int(Int64(total)), "order \(order)")
                }
            }
        }
    }

    /// One client's change of a max/min field: a set of an int or a string, an increment, or an unset.
    private static func operation(_ code: Int) -> FieldOperation {
        switch code % 4 {
        case 0: .set(.int(Int64(code % 201 - 100)))
        case 1: .set(.string("s\(code % 13)"))
        case 2: .increment(.int(Int64(code % 41 - 20)))
        default: .unset
        }
    }

    @Test(arguments: [MergeRule.max, .min])
    func maxAndMinReachTheSameValueInAnyOrder(rule: MergeRule) async {
        let client = zip(Gen.int(in: 0...10_000), Gen.int(in: 0...1000))
        await propertyCheck(input: Gen.int(in: -100...100), client.array(of: 1...6)) { base, clients in
            recordingErrors {
                let localValues = try clients.map { try Self.operation($0.0).apply(to: .int(Int64(base))) }
                // Every local value competes; absent ones lose to present ones.
                let present = localValues.compactMap { $0 }
                let best = present.dropFirst().reduce(present.first) { best, value in
                    best.map { rule == .max ? Value.maximum($0, value) : Value.minimum($0, value) }
                }
                for order in Self.orders(clients.map(\.1)) {
                    var server = MergeTestServer(base: ["n": .int(Int64(base))], rules: MergeRules(default: rule))
                    for index in order {
                        try server.push([.update([FieldUpdate("n", Self.operation(clients[index].0))])], baseVersion: 0)
                    }
                    #expect(server.current?["n"] == best, "order \(order)")
                }
            }
        }
    }

    @Test func listTransformKeepsEveryInsertAndAppliesCleanly() async {
        let codes = Gen.int(in: 0...10_000).array(of: 0...8)
        await propertyCheck(count: 300, input: Gen.int(in: 0...6), codes, codes, Gen<MergeRule>.case) {
            count, remoteCodes, localCodes, rule in
            recordingErrors {
                let base = ListScript.base(count: count)
                let remote = ListScript.operations(from: remoteCodes, on: base, prefix: "r")
                let local = ListScript.operations(from: localCodes, on: base, prefix: "l")
                let remoteValue = try FieldOperation.apply(remote, to: .list(base))
                let localValue = try FieldOperation.apply(local, to: .list(base))

                let merged = try FieldMerge.rebase(field: "l", base: .list(base), local: local, over: remote, rule: rule)
                let result = try FieldOperation.apply(merged.operations, to: remoteValue)
                if let decision = merged.decision {
                    #expect(decision.result == result)
                } else {
                    #expect(local.isEmpty || remote.isEmpty)
                }

                let remoteKept = ListScript.origins(remoteValue)
                let localKept = ListScript.origins(localValue)
                let final = ListScript.origins(result)
                let expected =
                    remoteKept.filter { $0.hasPrefix("r") } + localKept.filter { $0.hasPrefix("l") }
                    + remoteKept.filter { $0.hasPrefix("b") && localKept.contains($0) }
                #expect(final.sorted() == expected.sorted(), "remote \(remote) local \(local) → \(final)")
            }
        }
    }

    @Test func serverAndClientCallSitesReachTheSameState() async {
        let codes = Gen.int(in: 0...100_000).array(of: 0...6)
        let rules = Gen<MergeRule>.case.array(of: MergeObjectScript.fields.count)
        await propertyCheck(count: 300, input: codes, codes, rules, Gen.int(in: 0...9)) {
            remoteCodes, localCodes, fieldRules, deletes in
            recordingErrors {
                let base = MergeObjectScript.base
                let rules = MergeRules(classes: [
                    "C": Dictionary(uniqueKeysWithValues: zip(MergeObjectScript.fields, fieldRules))
                ])
                let remote = MergeObjectScript.changes(
                    from: remoteCodes, on: base, prefix: "r", deleteAtEnd: deletes == 1 || deletes == 3)
                let local = MergeObjectScript.changes(
                    from: localCodes, on: base, prefix: "l", deleteAtEnd: deletes == 2 || deletes == 3)

                // Other clients' changes, committed one by one on the server.
                var server = MergeTestServer(base: base, rules: rules)
                for change in remote { try server.commit(change) }
                var laterServer = server

                // Server call site: the push still names version 0, so the server merges.
                let serverMerge = try server.push(local, baseVersion: 0)

                // Client call site: the client pulls the remote changes, computes the remote state
                // itself, and rebases its pending changes over the pulled ones.
                let pulled = laterServer.log
                let clientMerge = try ObjectMerge.rebase(
                    local: local, over: pulled, base: base, className: "C", rules: rules)
                let remoteState = try MergeTestServer.apply(pulled, to: base)
                let clientState = try MergeTestServer.apply(clientMerge.change.map { [$0] } ?? [], to: remoteState)
                #expect(clientMerge == serverMerge)
                #expect(clientState == server.current)

                // The client then pushes its rebased change on the current version: no merge needed.
                let pending = clientMerge.change.map { [$0] } ?? []
                let noConflict = try laterServer.push(pending, baseVersion: laterServer.version)
                #expect(noConflict.decisions.isEmpty)
                #expect(laterServer.current == server.current)
            }
        }
    }

    @Test func aFailingChangeLeavesTheObjectUnchanged() async {
        let codes = Gen.int(in: 0...10_000).array(of: 0...8)
        await propertyCheck(input: Gen.int(in: 0...6), codes, Gen.int(in: 0...3)) { count, codes, beyond in
            recordingErrors {
                let base = ListScript.base(count: count)
                let valid = ListScript.operations(from: codes, on: base, prefix: "l").map { FieldUpdate("l", $0) }
                let snapshot = ObjectSnapshot(className: "C", objectId: "o", fields: ["l": .list(base), "n": 1])
                let validResult = try snapshot.applying(.update(valid))
                #expect(try snapshot.applying(.update(valid)) == validResult)

                let length = try FieldOperation.apply(valid.map(\.operation), to: .list(base))?.listValue?.count ?? 0
                var current = snapshot
                expectOperationError(.badIndex) {
                    current =
                        try current.applying(
                            .update(
                                [FieldUpdate("n", .increment(1))] + valid + [
                                    FieldUpdate("l", .listRemove(index: length + beyond))
                                ]))
                        ?? current
                }
                #expect(current == snapshot)
            }
        }
    }

    @Test func intIncrementsNeverWrap() async {
        await propertyCheck(input: Gen.int64(in: .min ... .max), Gen.int64(in: .min ... .max)) { value, amount throws in
            recordingErrors {
                let (sum, overflow) = value.addingReportingOverflow(amount)
                if overflow {
                    expectOperationError(.illegalArgument) {
                        try FieldOperation.increment(.int(amount)).apply(to: .int(value))
                    }
                } else {
                    let result = try FieldOperation.increment(.int(amount)).apply(to: .int(value))
                    #expect(result == .int(sum))
                }
            }
        }
    }
}
