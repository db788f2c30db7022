import Foundation
import RooftopShared
import RooftopTestSupport
import Testing

@testable import RooftopServer

/// The server's stored object bodies (``StoredObjectBody``): the direct reader and writer agree
/// with `Codable` on random bodies, and a pull page splices a stored body in as stored only when
/// it is an object of fields, ACL and field versions.
@Suite("Stored bodies: read, written and spliced into pull pages")
struct StoredBodyDocumentTests {
    @Test("random stored bodies decode and encode to the same values both ways")
    func randomBodies() throws {
        try DifferentialValues.forEachSnapshot(count: 400) { snapshot, _, _ in
            let body = StoredObjectBody(fields: snapshot.fields, acl: snapshot.acl, fieldVersions: snapshot.fieldVersions)
            let bodyText = try DocumentCoding.encode(body)
            let bodyReference = try DocumentCoding.decode(StoredObjectBody.self, from: bodyText)
            let bodyFast = try StoredObjectBody.decodeDocument(bodyText)
            #expect(try DocumentCoding.encode(bodyFast) == DocumentCoding.encode(bodyReference), "\(bodyText)")
            let bodyWritten = try body.encodedDocument()
            #expect(
                try DocumentCoding.encode(DocumentCoding.decode(StoredObjectBody.self, from: bodyWritten))
                    == DocumentCoding.encode(body), "\(bodyWritten)")
        }
    }

    @Test("a page of stored bodies, spliced in as stored, reads as the page of the decoded objects")
    func storedBodyPages() throws {
        var rng = SeededGenerator(seed: 12)
        for index in 0..<300 {
            var changes: [PullPage.Change] = []
            for position in 0..<rng.int(0...6) {
                switch rng.int(0...3) {
                case 0: changes.append(.notice(.tombstone(className: "T", objectId: "t\(position)", version: 3)))
                case 1: changes.append(.notice(.removal(className: "U", objectId: "r\"\(position)")))
                default:
                    let snapshot = DifferentialValues.snapshot(
                        className: "T", objectId: "u\\\(position)", datastore: .default, version: Int64(rng.int(1...9)),
                        rng: &rng)
                    var body = try StoredObjectBody(
                        fields: snapshot.fields, acl: snapshot.acl, fieldVersions: rng.chance(50) ? ["a": 2] : nil
                    ).encodedDocument()
                    // Bodies as other writers may have stored them: JSONEncoder's, or padded.
                    if rng.chance(20) {
                        body = String(
                            decoding: try JSONEncoder().encode(
                                StoredObjectBody(fields: snapshot.fields, acl: snapshot.acl, fieldVersions: nil)),
                            as: UTF8.self)
                    }
                    if rng.chance(20) { body = " \n" + body + "\t " }
                    changes.append(
                        .upsert(
                            FeedObject(
                                className: snapshot.className, objectId: snapshot.objectId,
                                datastoreId: snapshot.datastore.rawValue, body: body,
                                createdAt: rng.chance(70) ? Int64(rng.int(0...1_000_000)) : nil,
                                updatedAt: rng.chance(70) ? Int64(rng.int(0...1_000_000)) : nil,
                                version: snapshot.version, isDeleted: false, sequence: Int64(position), readers: ["*"],
                                formerReaders: [])))
                }
            }
            let page = PullPage(
                changes: changes, checkpoint: Checkpoint("c\(index)"), hasMore: rng.chance(50),
                remaining: rng.chance(50) ? rng.int(0...1000) : nil, roles: rng.chance(30) ? ["R"] : nil)
            var writer = DocumentWriter()
            try writer.pullPage(page)
            let expected = try DocumentCoding.encode(try page.response())
            let data = Data(writer.bytes)
            #expect(try DocumentCoding.encode(JSONDecoder().decode(PullResponse.self, from: data)) == expected)
            #expect(try DocumentCoding.encode(PullResponse.decodeDocument(data)) == expected)
            #expect(PullResponse.continuation(of: data) == (page.hasMore ? page.checkpoint : nil))
            // Sent as stored: each body's members are in the page byte for byte.
            let text = String(decoding: data, as: UTF8.self)
            for case .upsert(let object) in page.changes {
                let trimmed = object.body.trimmingCharacters(in: .whitespacesAndNewlines)
                #expect(text.contains(trimmed.dropFirst().dropLast()), "\(object.body)")
            }
        }
    }

    @Test("a stored body that is not an object of fields, ACL and field versions is decoded, never spliced")
    func storedBodyNotSpliced() throws {
        func page(_ body: String) -> PullPage {
            PullPage(
                changes: [
                    .upsert(
                        FeedObject(
                            className: "T", objectId: "a", datastoreId: DatastoreID.default.rawValue, body: body,
                            createdAt: nil, updatedAt: nil, version: 1, isDeleted: false, sequence: 1, readers: ["*"],
                            formerReaders: []))
                ], checkpoint: Checkpoint("c"), hasMore: false, remaining: nil, roles: nil)
        }
        // Not an object, or no fields: decoding fails, and so does the page.
        for body in ["", "{}", " { } ", "[]", "null", "{\"fields\":", "{\"acl\":{}}"] {
            var writer = DocumentWriter()
            #expect(throws: (any Error).self, "\(body)") { try writer.pullPage(page(body)) }
        }
        // Damaged or foreign text that would add members to the object or changes to the page if
        // spliced: decoded and written anew, or refused; never sent as it is.
        let injected = #"{"kind":"upsert","object":{"className":"X","objectId":"x","datastore":"d","fields":{},"version":1}}"#
        for body in [
            #"{"fields":{}}},"# + injected + #",{"fields":{}"#,
            #"{"fields":{"n":1},"className":"Y","version":9}"#,
            #"{"fields":{"n":1},"fields":{"n":2}}"#,
            #"{"fields":{"n":1}} {"fields":{}}"#,
            #"{"fields":{"n":"unterminated}}"#,
        ] {
            var writer = DocumentWriter()
            guard (try? writer.pullPage(page(body))) != nil else { continue }
            let read = try JSONDecoder().decode(PullResponse.self, from: Data(writer.bytes))
            #expect(read.changes.count == 1, "\(body)")
            #expect(read.changes.first?.className == "T" && read.changes.first?.objectId == "a", "\(body)")
            #expect(try DocumentCoding.encode(read) == DocumentCoding.encode(try page(body).response()), "\(body)")
        }
        // A body with extra members that decodes goes out as its decoded object, without them.
        var writer = DocumentWriter()
        try writer.pullPage(page(#"{"fields":{"n":1},"className":"Y","version":9}"#))
        let read = try PullResponse.decodeDocument(Data(writer.bytes))
        guard case .upsert(let object) = read.changes.first else {
            Issue.record("no upsert in \(read.changes)")
            return
        }
        #expect(object.fields == ["n": .int(1)] && object.className == "T" && object.version == 1)
    }

    @Test("a query's answer splices its stored bodies in, and reads as the answer of the decoded objects")
    func queryAnswers() throws {
        var rng = SeededGenerator(seed: 13)
        for _ in 0..<300 {
            var objects: [FeedObject] = []
            for position in 0..<rng.int(0...6) {
                let snapshot = DifferentialValues.snapshot(
                    className: "T", objectId: "q\\\(position)", datastore: .default, version: Int64(rng.int(1...9)),
                    rng: &rng)
                var body = try StoredObjectBody(
                    fields: snapshot.fields, acl: snapshot.acl, fieldVersions: rng.chance(50) ? ["a": 2] : nil
                ).encodedDocument()
                if rng.chance(20) { body = " \n" + body + "\t " }
                // Now and then a body never written so: decoded and written anew.
                if rng.chance(10) { body = #"{"fields":{"n":1},"className":"Y","version":9}"# }
                objects.append(
                    FeedObject(
                        className: snapshot.className, objectId: snapshot.objectId, datastoreId: snapshot.datastore.rawValue,
                        body: body, createdAt: rng.chance(70) ? Int64(rng.int(0...1_000_000)) : nil,
                        updatedAt: rng.chance(70) ? Int64(rng.int(0...1_000_000)) : nil, version: snapshot.version,
                        isDeleted: false, sequence: Int64(position), readers: [], formerReaders: []))
            }
            let included = (0..<rng.int(0...2)).map { index in
                DifferentialValues.snapshot(className: "I", objectId: "i\(index)", datastore: .app, version: 1, rng: &rng)
            }
            let answer = QueryAnswer(objects: objects, totalCount: rng.int(objects.count...1000), included: included)
            var writer = DocumentWriter()
            try writer.queryAnswer(answer)
            let data = Data(writer.bytes)
            let expected = try DocumentCoding.encode(try answer.response())
            #expect(try DocumentCoding.encode(JSONDecoder().decode(QueryResponse.self, from: data)) == expected)
            // Sent as stored: each body's members are in the answer byte for byte.
            let text = String(decoding: data, as: UTF8.self)
            for object in objects where !object.body.contains("className") {
                let trimmed = object.body.trimmingCharacters(in: .whitespacesAndNewlines)
                #expect(text.contains(trimmed.dropFirst().dropLast()), "\(object.body)")
            }
        }
        // A body that is not an object of fields fails the answer, as decoding it does.
        var writer = DocumentWriter()
        let broken = FeedObject(
            className: "T", objectId: "a", datastoreId: "default", body: "{}", createdAt: nil, updatedAt: nil, version: 1,
            isDeleted: false, sequence: 1, readers: [], formerReaders: [])
        #expect(throws: (any Error).self) { try writer.queryAnswer(QueryAnswer(objects: [broken], totalCount: 1, included: [])) }
    }
}
