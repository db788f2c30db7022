import Foundation
import RooftopShared
import Testing

@Suite("Size accounting")
struct LimitsSizeAccountingTests {
    @Test func valueSizes() throws {
        #expect(SizeAccounting.size(of: "hello") == 5)
        #expect(SizeAccounting.size(of: "é") == 2)  // UTF-8 bytes, not characters
        #expect(SizeAccounting.size(of: .bytes(BinaryValue(Data(count: 10), mimeType: "image/png"))) == 10)
        #expect(SizeAccounting.size(of: ["ab", 1]) == (20 + 2) + (20 + 0))
        #expect(SizeAccounting.size(of: [["a"]]) == 20 + (20 + 1))
        #expect(SizeAccounting.size(of: []) == 0)
        #expect(SizeAccounting.size(of: .decimal(try DecimalNumber("1.50"))) == 4)
        // Canonical text {"a":[true],"b":1} is 18 bytes.
        #expect(SizeAccounting.size(of: .json(.object(["b": .int(1), "a": .array([.bool(true)])]))) == 18)
        #expect(SizeAccounting.size(of: .pointer(Pointer(className: "GameScore", objectId: "abc"))) == 12)
        #expect(SizeAccounting.size(of: .relation(Relation(className: "User", objectIds: ["a", "bb"]))) == 4 + 21 + 22)
        for zero: Value in [
            .null, true, 42, 1.5, .date(Timestamp(millisecondsSinceEpoch: 0)),
            .day(try Day("2026-01-02")), .geoPoint(try GeoPoint(latitude: 1, longitude: 2)),
        ] {
            #expect(SizeAccounting.size(of: zero) == 0)
        }
    }

    @Test func recordAndDatastoreSizes() {
        #expect(SizeAccounting.recordSize(fields: [:]) == 100)
        #expect(SizeAccounting.recordSize(fields: ["name": "hello", "score": 1]) == 100 + 105 + 100)
        let object = ObjectSnapshot(
            className: "GameScore", objectId: "abc", fields: ["tags": ["x", "yz"]], acl: .only("someone-with-a-long-id")
        )
        // The ACL, class and ID are not counted.
        #expect(SizeAccounting.recordSize(object) == 100 + 100 + 21 + 22)
        #expect(SizeAccounting.datastoreSize(recordSizes: []) == 1000)
        #expect(SizeAccounting.datastoreSize(recordSizes: [305, 100]) == 1405)
    }

    @Test func changeAndPushSizes() {
        let update = ObjectChange.update([
            FieldUpdate("a", .set("hello")),  // 5
            FieldUpdate("b", .increment(1)),  // 0
            FieldUpdate("c", .listAppend(["a", "bc"])),  // 3
            FieldUpdate("d", .listInsert(index: 0, value: "xyz")),  // 3
            FieldUpdate("e", .listReplace(index: 1, value: "q")),  // 1
            FieldUpdate("f", .relationAdd(className: "User", objectIds: ["a"])),  // 4 + 21
            FieldUpdate("g", .relationRemove(className: "User", objectIds: ["bb"])),  // 4 + 22
            FieldUpdate("h", .unset), FieldUpdate("i", .listRemove(index: 0)),
            FieldUpdate("j", .listMove(from: 0, to: 1)),
        ])
        #expect(SizeAccounting.changeSize(update) == 100 + 5 + 0 + 3 + 3 + 1 + 25 + 26)
        #expect(SizeAccounting.changeSize(.delete) == 100)
        let mutations = [
            Mutation(datastore: .app, className: "T", objectId: "o1", change: update),
            Mutation(datastore: .app, className: "T", objectId: "o2", change: .delete),
        ]
        #expect(SizeAccounting.pushSize(mutations) == 100 + 163 + 100)
        #expect(SizeAccounting.pushSize([]) == 100)
    }
}

@Suite("Limits")
struct LimitsTests {
    static func record(stringBytes: Int) -> ObjectSnapshot {
        ObjectSnapshot(
            className: "GameScore", objectId: "abc",
            fields: ["blob": .string(String(repeating: "x", count: stringBytes))])
    }

    @Test func defaults() throws {
        let limits = Limits()
        #expect(limits.maxRecordBytes == 102_400)
        #expect(limits.maxRecordsPerDatastore == 100_000)
        #expect(limits.maxDatastoreBytes == 10_485_760)
        #expect(limits.maxPushBytes == 2_097_152)
        #expect(limits.maxRequestBodyBytes > limits.maxPushBytes)
        try limits.validate()
    }

    @Test func recordLimitBoundary() throws {
        let limits = Limits()
        // 100 + (100 + n) == 102400 exactly at n = 102200.
        try limits.checkRecord(Self.record(stringBytes: 102_200))
        let error = #expect(throws: RooftopError.self) { try limits.checkRecord(Self.record(stringBytes: 102_201)) }
        #expect(error?.code == .sizeLimit)
        #expect(error?.message == "record GameScore/abc is 102401 bytes; the limit is 102400 bytes (100 KiB)")
        let big = #expect(throws: RooftopError.self) { try limits.checkRecord(Self.record(stringBytes: 122_680)) }
        #expect(big?.message == "record GameScore/abc is 120.0 KiB; the limit is 100 KiB")
    }

    @Test func datastoreLimitsBoundary() throws {
        let limits = Limits()
        let id = DatastoreID.default
        try limits.checkDatastoreSize(10_485_760, datastore: id)
        let error = #expect(throws: RooftopError.self) { try limits.checkDatastoreSize(10_485_761, datastore: id) }
        #expect(error?.code == .sizeLimit)
        #expect(error?.message == "datastore default would be 10485761 bytes; the limit is 10485760 bytes (10 MiB)")
        let big = #expect(throws: RooftopError.self) { try limits.checkDatastoreSize(11_010_048, datastore: id) }
        #expect(big?.message == "datastore default would be 10.5 MiB; the limit is 10 MiB")
        try limits.checkRecordCount(100_000, datastore: id)
        let count = #expect(throws: RooftopError.self) { try limits.checkRecordCount(100_001, datastore: id) }
        #expect(count?.code == .sizeLimit)
        #expect(count?.message == "datastore default would hold 100001 records; the limit is 100000")
    }

    @Test func pushLimitsBoundary() throws {
        let limits = Limits()
        func push(_ stringBytes: Int) -> [Mutation] {
            [
                Mutation(
                    datastore: .app, className: "T", objectId: "o",
                    change: .update([FieldUpdate("f", .set(.string(String(repeating: "x", count: stringBytes))))]))
            ]
        }
        // 100 + (100 + n) == 2 MiB exactly at n = 2096952.
        try limits.checkPush(push(2_096_952))
        let error = #expect(throws: RooftopError.self) { try limits.checkPush(push(2_096_953)) }
        #expect(error?.code == .sizeLimit)
        #expect(error?.message.hasPrefix("push is 2097153 bytes") == true)
        let tiny = Mutation(datastore: .app, className: "T", objectId: "o", change: .delete)
        try limits.checkPush(Array(repeating: tiny, count: 500))
        let many = #expect(throws: RooftopError.self) { try limits.checkPush(Array(repeating: tiny, count: 501)) }
        #expect(many?.message == "push has 501 mutations; the limit is 500")
        try limits.checkRequestBody(limits.maxRequestBodyBytes)
        #expect(throws: RooftopError.self) { try limits.checkRequestBody(limits.maxRequestBodyBytes + 1) }
    }

    @Test func queryAndPullLimits() throws {
        let limits = Limits()
        #expect(try limits.queryLimit(requested: nil) == 100)
        #expect(try limits.queryLimit(requested: 1000) == 1000)
        #expect(try limits.queryLimit(requested: 0) == 0)
        #expect((#expect(throws: RooftopError.self) { try limits.queryLimit(requested: 1001) })?.code == .sizeLimit)
        #expect((#expect(throws: RooftopError.self) { try limits.queryLimit(requested: -1) })?.code == .illegalArgument)
        #expect(try limits.pullPageSize(requested: nil) == 500)
        #expect(try limits.pullPageSize(requested: 1000) == 1000)
        #expect(throws: RooftopError.self) { try limits.pullPageSize(requested: 1001) }
        #expect(throws: RooftopError.self) { try limits.pullPageSize(requested: 0) }
    }

    @Test func configuredLimitsAndWireForm() throws {
        var limits = Limits()
        limits.maxRecordBytes = 1000
        let small = #expect(throws: RooftopError.self) { try limits.checkRecord(Self.record(stringBytes: 801)) }
        #expect(small?.message == "record GameScore/abc is 1001 bytes; the limit is 1000 bytes")
        let again = try JSONDecoder().decode(Limits.self, from: try JSONEncoder().encode(limits))
        #expect(again == limits)
        // Missing members keep their defaults; unknown ones are ignored.
        let partial = try JSONDecoder().decode(Limits.self, from: Data(#"{"maxRecordBytes": 5, "future": 1}"#.utf8))
        var expected = Limits()
        expected.maxRecordBytes = 5
        #expect(partial == expected)
        #expect(try JSONDecoder().decode(Limits.self, from: Data("{}".utf8)) == Limits())
        var broken = Limits()
        broken.maxPushBytes = 0
        #expect((#expect(throws: RooftopError.self) { try broken.validate() })?.field == "maxPushBytes")
        var inverted = Limits()
        inverted.defaultQueryLimit = 5000
        #expect(throws: RooftopError.self) { try inverted.validate() }
        // Limits so large that arithmetic on them could overflow are refused.
        var huge = Limits()
        huge.maxPullPageSize = .max
        #expect((#expect(throws: RooftopError.self) { try huge.validate() })?.field == "maxPullPageSize")
        var deep = Limits()
        deep.maxNestingDepth = .max
        #expect((#expect(throws: RooftopError.self) { try deep.validate() })?.field == "maxNestingDepth")
    }
}
