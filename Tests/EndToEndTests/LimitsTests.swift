import Foundation
import RooftopShared
import Testing

/// Size and count limits, on a server started with small ones: exactly at a limit passes, one
/// over is refused with `sizeLimit` (413 for a whole request) and nothing is written.
@Suite(
    "Limits: records, datastores, pushes, request bodies",
    .sharedServer([
        "--max-record-bytes", "1000", "--max-records-per-datastore", "5", "--max-datastore-bytes", "4000",
        "--max-push-bytes", "2000", "--max-request-body-bytes", "16000", "--default-pull-page-size", "2",
    ]))
struct LimitsTests {
    /// A string of `count` ASCII bytes.
    private func text(_ count: Int) -> Value { .string(String(repeating: "x", count: count)) }

    @Test("the server reports the limits it was started with")
    func reportedLimits() async throws {
        let (_, client) = try SharedServer.require()
        let info = try await client.call(API.getServerInfo, as: ServerInfo.self)
        #expect(info.limits.maxRecordBytes == 1000)
        #expect(info.limits.maxRecordsPerDatastore == 5)
        #expect(info.limits.maxDatastoreBytes == 4000)
        #expect(info.limits.maxPushBytes == 2000)
        #expect(info.limits.maxRequestBodyBytes == 16000)
        #expect(info.limits.defaultPullPageSize == 2)
    }

    @Test("a pull that names no page size gets the server's default; one that names one gets it")
    func defaultPullPageSize() async throws {
        let (_, client) = try SharedServer.require()
        let user = try await client.newUser()
        let datastore = try DatastoreID("paged")
        for id in ["a", "b", "c"] {
            _ = try await client.push(Mutations.create(datastore, "Rec", id, fields: [:]), token: user.token)
        }
        let first = try await client.pull(PullRequest(datastore: datastore), token: user.token)
        #expect(first.changes.count == 2 && first.hasMore)
        let rest = try await client.pull(PullRequest(datastore: datastore, since: first.checkpoint), token: user.token)
        #expect(rest.changes.count == 1 && !rest.hasMore)
        var named = PullRequest(datastore: datastore)
        named.limit = 3
        let whole = try await client.pull(named, token: user.token)
        #expect(whole.changes.count == 3 && !whole.hasMore)
    }

    @Test("a datastore tells its usage against the limits: records and bytes grow with writes and shrink with deletes")
    func datastoreUsage() async throws {
        let (_, client) = try SharedServer.require()
        let user = try await client.newUser()
        let datastore = try DatastoreID("usage")
        func usage() async throws -> DatastoreUsage? {
            try await client.call(.GET, "/v1/datastores/usage", token: user.token, as: DatastoreInfo.self).usage
        }
        _ = try await client.push(Mutations.create(datastore, "Rec", "a", fields: ["s": text(200)]), token: user.token)
        let one = try #require(try await usage())
        #expect(one.records == 1)
        #expect(one.maxRecords == 5)
        #expect(one.maxBytes == 4000)
        // The datastore's own base plus the record (100 + 100 + 200 bytes).
        #expect(one.bytes == SizeAccounting.datastoreBaseBytes + 400)
        _ = try await client.push(Mutations.create(datastore, "Rec", "b", fields: ["s": text(100)]), token: user.token)
        #expect(try await usage() == DatastoreUsage(records: 2, maxRecords: 5, bytes: one.bytes + 300, maxBytes: 4000))
        _ = try await client.push(Mutations.delete(datastore, "Rec", "a", base: 1), token: user.token)
        #expect(try await usage() == DatastoreUsage(records: 1, maxRecords: 5, bytes: one.bytes - 100, maxBytes: 4000))
        // The list of datastores tells it too.
        let list = try await client.call(API.listDatastores, token: user.token, as: DatastoreList.self)
        #expect(list.datastores.first { $0.id == datastore }?.usage?.records == 1)
    }

    @Test("a record exactly at the size limit is stored; one byte over is refused, by push and by REST")
    func recordSize() async throws {
        let (_, client) = try SharedServer.require()
        let user = try await client.newUser()
        let datastore = try DatastoreID("records")
        // A record is 100 + (100 + value size) per field: 800 bytes of text make exactly 1000.
        let atLimit = try await client.push(
            Mutations.create(datastore, "Rec", "at", fields: ["s": text(800)]), token: user.token)
        let twoFields = try await client.push(
            Mutations.create(datastore, "Rec", "two", fields: ["a": text(350), "b": text(350)]), token: user.token)
        let over = try await client.push(
            Mutations.create(datastore, "Rec", "over", fields: ["s": text(801)]), token: user.token)
        let grown = try await client.push(
            Mutations.update(datastore, "Rec", "at", base: 1, [FieldUpdate("s", .set(text(801)))]), token: user.token)
        let rest = try await client.send(
            .POST, "/v1/datastores/records/classes/Rec/objects",
            raw: Data(#"{"objectId": "rest", "fields": {"s": "\#(String(repeating: "y", count: 801))"}}"#.utf8),
            token: user.token)

        #expect(atLimit.isApplied)
        #expect(twoFields.isApplied)
        #expect(over.error?.code == .sizeLimit)
        #expect(grown.error?.code == .sizeLimit)
        #expect(rest.status == 413)
        #expect(rest.error?.code == .sizeLimit)
        let stored = try await client.allObjects(datastore, className: "Rec", token: user.token)
        #expect(Set(stored.keys) == ["at", "two"])
        #expect(stored["at"]?.version == 1)
        #expect(stored["at"]?.fields["s"] == text(800))
    }

    @Test("a datastore takes exactly its record count limit; a delete makes room again")
    func recordCount() async throws {
        let (_, client) = try SharedServer.require()
        let user = try await client.newUser()
        let datastore = try DatastoreID("counted")
        let five = try await client.push(
            (0..<5).map { Mutations.create(datastore, "Counted", "c\($0)", fields: ["i": 1]) }, token: user.token)
        let sixth = try await client.push(
            Mutations.create(datastore, "Counted", "c5", fields: ["i": 1]), token: user.token)
        let update = try await client.push(
            Mutations.update(datastore, "Counted", "c0", base: 1, [FieldUpdate("i", .increment(1))]), token: user.token)

        #expect(five.results.allSatisfy { $0.isApplied })
        #expect(sixth.error?.code == .sizeLimit)
        #expect(update.isApplied, "changing an existing record adds none")
        #expect(try await client.count(datastore, className: "Counted", token: user.token) == 5)

        _ = try await client.push(Mutations.delete(datastore, "Counted", "c4", base: 1), token: user.token)
        let again = try await client.push(
            Mutations.create(datastore, "Counted", "c5", fields: ["i": 1]), token: user.token)
        #expect(again.isApplied)
        #expect(try await client.count(datastore, className: "Counted", token: user.token) == 5)
    }

    @Test("creates racing for the last free record slot: exactly one wins")
    func recordCountRace() async throws {
        let (_, client) = try SharedServer.require()
        let user = try await client.newUser()
        let datastore = try DatastoreID("raced")
        _ = try await client.push(
            (0..<4).map { Mutations.create(datastore, "Raced", "r\($0)", fields: [:]) }, token: user.token)
        let results = try await withThrowingTaskGroup(of: MutationResult.self) { group in
            for index in 0..<12 {
                group.addTask {
                    try await client.push(
                        Mutations.create(datastore, "Raced", "new\(index)", fields: [:]), token: user.token)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.filter(\.isApplied).count == 1)
        #expect(results.filter { $0.error?.code == .sizeLimit }.count == 11)
        #expect(try await client.count(datastore, className: "Raced", token: user.token) == 5)
    }

    @Test("a datastore fills up to exactly its byte limit; growth past it is refused, shrinking is not")
    func datastoreSize() async throws {
        let (_, client) = try SharedServer.require()
        let user = try await client.newUser()
        let datastore = try DatastoreID("sized")
        // 1000 (datastore) + 3 × 900 + 300 = 4000, in pushes that each fit the push limit.
        var filled: [MutationResult] = []
        for index in 0..<3 {
            filled.append(
                try await client.push(
                    Mutations.create(datastore, "Sized", "r\(index)", fields: ["s": text(700)]), token: user.token))
        }
        filled.append(
            try await client.push(
                Mutations.create(datastore, "Sized", "r3", fields: ["s": text(100)]), token: user.token))
        #expect(filled.allSatisfy { $0.isApplied })

        let grow = try await client.push(
            Mutations.update(datastore, "Sized", "r0", base: 1, [FieldUpdate("s", .set(text(701)))]), token: user.token)
        let extra = try await client.push(Mutations.create(datastore, "Sized", "r4", fields: [:]), token: user.token)
        #expect(grow.error?.code == .sizeLimit)
        #expect(extra.error?.code == .sizeLimit)

        let shrink = try await client.push(
            Mutations.update(datastore, "Sized", "r1", base: 1, [FieldUpdate("s", .set(text(650)))]), token: user.token)
        let growIntoRoom = try await client.push(
            Mutations.update(datastore, "Sized", "r0", base: 1, [FieldUpdate("s", .set(text(750)))]), token: user.token)
        #expect(shrink.isApplied)
        #expect(growIntoRoom.isApplied)
        let stored = try await client.allObjects(datastore, className: "Sized", token: user.token)
        #expect(Set(stored.keys) == ["r0", "r1", "r2", "r3"])
        #expect(stored["r0"]?.fields["s"] == text(750))
    }

    @Test("a push exactly at the push size limit is applied; one over is refused whole with 413")
    func pushSize() async throws {
        let (_, client) = try SharedServer.require()
        let user = try await client.newUser()
        let datastore = try DatastoreID("pushes")
        // A push is 100 + Σ (100 + carried values); numbers carry 0: 19 mutations make 2000.
        func batch(_ objectId: String, _ count: Int) -> [Mutation] {
            [Mutations.create(datastore, "Pushed", objectId, fields: ["n": 0])]
                + (1..<count).map { _ in
                    Mutations.update(datastore, "Pushed", objectId, base: nil, [FieldUpdate("n", .increment(1))])
                }
        }
        let atLimit = try await client.push(batch("fits", 19), token: user.token)
        #expect(atLimit.results.count == 19 && atLimit.results.allSatisfy { $0.isApplied })

        let over = try await client.send(
            API.push, body: PushRequest(mutations: batch("over", 20)), token: user.token)
        let overByText = try await client.send(
            API.push,
            body: PushRequest(mutations: [Mutations.create(datastore, "Pushed", "text", fields: ["s": text(1801)])]),
            token: user.token)
        #expect(over.status == 413)
        #expect(over.error?.code == .sizeLimit)
        #expect(overByText.status == 413)
        #expect(overByText.error?.code == .sizeLimit)
        let stored = try await client.allObjects(datastore, className: "Pushed", token: user.token)
        #expect(Set(stored.keys) == ["fits"])
        #expect(stored["fits"]?.fields["n"] == 18)
    }

    @Test("a request body exactly at the body limit is read; one byte over is refused with 413")
    func requestBodySize() async throws {
        let (_, client) = try SharedServer.require()
        let user = try await client.newUser()
        let datastore = try DatastoreID("bodies")
        func padded(_ objectId: String, to size: Int) throws -> Data {
            var body = try JSONEncoder().encode(
                PushRequest(mutations: [Mutations.create(datastore, "Body", objectId, fields: ["x": 1])]))
            // JSON allows trailing whitespace: the same request, exactly `size` bytes long.
            body.append(Data(repeating: UInt8(ascii: " "), count: size - body.count))
            return body
        }
        let atLimit = try await client.send(API.push, raw: try padded("fits", to: 16000), token: user.token)
        let over = try await client.send(API.push, raw: try padded("over", to: 16001), token: user.token)
        let huge = try await client.send(
            API.push, raw: try padded("huge", to: 4 * 1024 * 1024), token: user.token)

        #expect(atLimit.status == 200, "\(atLimit.text)")
        #expect(over.status == 413)
        #expect(over.error?.code == .sizeLimit)
        #expect(huge.status == 413)
        #expect(huge.error?.code == .sizeLimit)
        let stored = try await client.allObjects(datastore, className: "Body", token: user.token)
        #expect(Set(stored.keys) == ["fits"])
    }
}
