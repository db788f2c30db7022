import Foundation
import Rooftop
import RooftopShared
import Testing
import RooftopTestSupport

/// docs/client.md's examples, compiled and run against the real server: every `swift` block of the
/// guide is one of this file's marked blocks (compared line by line, indentation aside), so an
/// example that stops compiling or drifts from the guide fails here.
@Suite("docs/client.md examples")
struct ClientGuideTests {
    @Test("every swift block in docs/client.md is compiled here, and the blocks run against a real server")
    func guideExamples() async throws {
        let guide = try String(
            contentsOf: ReadmeExample.repositoryRoot.appending(path: "docs/client.md"), encoding: .utf8)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let documented = GuideBlocks.swiftBlocks(in: guide).map(GuideBlocks.normalized)
        let compiled = GuideBlocks.markedBlocks(in: source).map(GuideBlocks.normalized)
        #expect(!documented.isEmpty)
        for block in documented where !compiled.contains(block) {
            Issue.record("docs/client.md has a swift block this test does not compile:\n\(block.joined(separator: "\n"))")
        }
        for block in compiled where !documented.contains(block) {
            Issue.record("a block marked for docs/client.md is not in the guide:\n\(block.joined(separator: "\n"))")
        }

        try await withServer { server in
            let serverURL = try #require(URL(string: "https://127.0.0.1:\(server.port)"))
            let caPEM = try String(contentsOfFile: server.caCertificatePath, encoding: .utf8)
            let cacheFile = TemporaryDirectory.make(prefix: "client-guide") + "/app.sqlite"
            let api = try APIClient(server: server)
            let bobId: String
            do {
                bobId = try await api.newUser("bob").id
                try await api.createRole("Admins", users: [try await api.newUser("admin")])
                // The guide's user creates a role: the admin lets signed-in users do that.
                try await api.setPermissions(ClassPermissions(create: .authenticated), of: ":Role")
                await api.shutdown()
            } catch {
                await api.shutdown()
                throw error
            }

            // docs/client.md begin
            var configuration = ClientConfiguration(serverURL: serverURL)  // e.g. https://127.0.0.1:8443
            configuration.trust = .certificateAuthority(pem: caPEM)  // or .systemRoots, .pinnedCertificate(pem:)
            configuration.storage = .file(path: cacheFile)  // or .inMemory (the default)
            let client = try await RooftopClient(configuration: configuration)
            // docs/client.md end
            do {
                try await runExamples(client, bobId: bobId)
                await client.shutdown()
            } catch {
                await client.shutdown()
                throw error
            }
        }
    }

    /// The guide's examples after the client's, in order.
    private func runExamples(_ client: RooftopClient, bobId: String) async throws {
        let alice = try await client.signUp(username: Unique.name("alice"), password: "correct horse")
        let aliceId = alice.objectId

        let points = 1337
        let playerName = "Sean Plott"
        // docs/client.md begin
        let score = client.object("GameScore")
        score["score"] = points  // an Int from a variable: Swift values convert
        score["playerName"] = playerName
        score["playedAt"] = Date()
        score["tags"] = ["ranked", "solo"]
        try score.increment("plays")  // atomic: concurrent increments all count
        try await score.saveEventually()  // durable now, sent when the server is reachable

        let plays: Int? = score["plays"]
        let playedAt = score.value("playedAt", as: Date.self)
        // docs/client.md end
        #expect(plays == 1 && playedAt != nil)
        try await client.outbox.waitUntilIdle()

        let pngData = Data([0x89, 0x50, 0x4E, 0x47])
        let ownerId = aliceId
        let reviewer = score
        let manager = score
        // docs/client.md begin
        let place = client.object("Place")
        place["location"] = try GeoPoint(latitude: 40.4168, longitude: -3.7038)
        place["opened"] = try Day("1990-05-17")  // a calendar date, no time
        place["entryFee"] = try DecimalNumber("12.50")  // exact: the digits are kept
        place["photo"] = BinaryValue(pngData, mimeType: "image/png")  // bytes with a MIME type
        place["hours"] = JSONValue.object(["mon": .string("9-17"), "sun": .null])
        place["owner"] = Pointer(className: "_User", objectId: ownerId)
        try place.set("reviewer", to: reviewer)  // an object or a model: a pointer to it
        place["manager"] = manager  // an object by subscript: a pointer to it too
        let pointed: RooftopObject? = place["reviewer"]  // the object a pointer points to
        // docs/client.md end
        #expect(pointed === reviewer, "the live instance")
        #expect(place.pointer("manager") == Pointer(className: "GameScore", objectId: score.objectId))

        // docs/client.md begin
        var acl = ACL.only(ownerId)  // the owner reads and writes
        acl.setReadAccess(true, for: .everyone)  // everyone reads
        acl.setWriteAccess(true, for: .role("Editors"))  // members of Editors write
        place.acl = acl
        // docs/client.md end
        try await place.save()
        let stored = try await client.query("Place").getObject(place.objectId)
        #expect(stored.decimal("entryFee")?.text == "12.50")
        #expect(stored.bytes("photo")?.mimeType == "image/png")
        #expect(stored.pointer("reviewer") == Pointer(className: "GameScore", objectId: score.objectId))
        #expect(stored.acl?.readAccess(for: .everyone) == true)

        let minimum = 1000
        let since = Date().addingTimeInterval(-3600)
        // docs/client.md begin
        let top = try client.query("GameScore").text("where score > ? order by score desc limit 10", [minimum])
        let result = try await top.find(policy: .remoteElseLocal)  // objects, totalCount, fromCache
        let recent = client.query("GameScore")
            .where(Field("playedAt") > since && Field("tags").contains("ranked"))
            .order(by: "playedAt", descending: true)
        // docs/client.md end
        #expect(result.objects.map(\.objectId) == [score.objectId])
        #expect(try await recent.find().objects.map(\.objectId) == [score.objectId])

        // docs/client.md begin
        try await client.roles.create("Editors", users: [aliceId])
        try await client.roles.add(users: [bobId], to: "Editors")
        try await client.roles.add(roles: ["Admins"], to: "Editors")  // admins edit too
        try await client.roles.remove(users: [bobId], from: "Editors")
        // docs/client.md end
        #expect(try await client.roles.get("Editors").roles == ["Admins"])

        var shown: [String] = []
        func show(_ message: String) { shown.append(message) }
        // docs/client.md begin
        do {
            try await score.save()
        } catch let error as RooftopError where error.code == .noConnection || error.code == .timeout {
            try await score.saveEventually()  // offline: queue it instead
        } catch let error as RooftopError {
            show(error.message)  // refused: error.code says why
        }
        // docs/client.md end
        #expect(shown.isEmpty)

        // docs/client.md begin
        let changed = try await client.sync.pull(datastore: .app) { progress in
            print(progress.processed, progress.total ?? 0)
        }
        try await client.sync.push()
        try await client.sync.startContinuous(datastores: [.app])  // live WebSocket notifications
        // Ready: the server confirmed the subscription, so changes arrive without a call.
        for await status in try await client.datastores.open(.app).status where status.subscribed { break }
        // docs/client.md end
        _ = changed
        #expect(try await client.query("GameScore").fromLocalDatastore().count() == 1)
        #expect(try await client.datastores.open(.app).currentStatus().subscribed)
        let first = await Self.firstNonEmpty(client)
        #expect(first.objects.count == 1)
        await client.sync.stop()
        #expect(try await !client.datastores.open(.app).currentStatus().subscribed)
    }

    /// The guide's `LiveQuery.updates` example (on the main actor, as a `LiveQuery` lives).
    @MainActor
    static func firstNonEmpty(_ client: RooftopClient) async -> FetchResult {
        var first = FetchResult(objects: [], totalCount: 0, fromCache: true)
        // docs/client.md begin
        let scores = LiveQuery(client.query("GameScore").fromLocalDatastore())
        for await result in scores.updates where !result.objects.isEmpty { break }  // the first non-empty
        // docs/client.md end
        for await result in scores.updates {
            first = result
            break
        }
        return first
    }
}

/// The guide's blocks and this file's marked ones.
enum GuideBlocks {
    /// Every fenced `swift` block of a Markdown text, but SwiftUI views: SwiftUI does not exist on
    /// Linux (the observable objects they hold are tested by AppUsageTests' ObservationTests).
    static func swiftBlocks(in markdown: String) -> [String] {
        markdown.components(separatedBy: "```swift\n").dropFirst().compactMap { $0.components(separatedBy: "```").first }
            .filter { !$0.hasPrefix("import SwiftUI") }
    }

    /// The texts between `// docs/client.md begin` and `// docs/client.md end` lines.
    static func markedBlocks(in source: String) -> [String] {
        var blocks: [String] = []
        var current: [Substring]?
        for line in source.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed == "// docs/client.md begin" {
                current = []
            } else if trimmed == "// docs/client.md end" {
                if let current { blocks.append(current.joined(separator: "\n")) }
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    /// The non-empty lines, without their common indentation and trailing spaces, with the
    /// spaces before a `//` comment collapsed to two (the guide aligns its comments).
    static func normalized(_ block: String) -> [String] {
        let lines = block.split(separator: "\n").map { String($0).replacing(/\s+$/, with: "") }.filter { !$0.isEmpty }
        let indent = lines.map { $0.prefix { $0 == " " }.count }.min() ?? 0
        return lines.map { String($0.dropFirst(indent)).replacing(try! Regex(#"\s+// "#), with: "  // ") }
    }
}
