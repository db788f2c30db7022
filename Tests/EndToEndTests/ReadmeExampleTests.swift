import Foundation
import Rooftop
import RooftopShared
import Testing
import RooftopTestSupport

// README example begin
struct Note: RooftopModel {
    static let className = "Note"
    var objectId = ObjectID.generate()
    var text: String
    var stars: Int
}

/// Signs up, writes offline-first, and reads back from the server and then from the cache.
func quickStart(serverURL: URL, caPEM: String, cacheFile: String) async throws -> (remote: [Note], cached: [Note]) {
    var configuration = ClientConfiguration(serverURL: serverURL)
    configuration.trust = .certificateAuthority(pem: caPEM)  // the development CA `serve` printed
    configuration.storage = .file(path: cacheFile)  // the local datastore survives app restarts
    let client = try await RooftopClient(configuration: configuration)

    _ = try await client.signUp(username: "alice", password: "correct horse")

    // Stored locally before it returns; sent to the server exactly once, whenever it is reachable.
    try await client.save(Note(text: "Buy milk", stars: 3), eventually: true)
    try await client.save(Note(text: "Call Bob", stars: 5), eventually: true)
    try await client.outbox.waitUntilIdle()

    // Ask the server and keep the answer for offline use; later, read it from the cache.
    let starred = try client.query(Note.self).text("where stars >= ? order by stars desc", [2])
    let remote = try await starred.find(as: Note.self, policy: .remoteAndStore)
    let cached = try await starred.find(as: Note.self, policy: .localOnly)

    await client.shutdown()
    return (remote, cached)
}
// README example end

@Suite("README client example")
struct ReadmeExampleTests {
    @Test("the example in README.md is this file's, and it runs against the real server")
    func readmeExampleRuns() async throws {
        let readme = try String(contentsOf: ReadmeExample.repositoryRoot.appending(path: "README.md"), encoding: .utf8)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let documented = try #require(ReadmeExample.swiftBlock(in: readme, containing: "func quickStart"))
        let tested = try #require(ReadmeExample.between("// README example begin", "// README example end", in: source))
        #expect(ReadmeExample.lines(documented) == ReadmeExample.lines(tested), "README.md's client example drifted from this test")

        try await withServer { server in
            let cache = TemporaryDirectory.make(prefix: "readme-example") + "/app.sqlite"
            let pem = try String(contentsOfFile: server.caCertificatePath, encoding: .utf8)
            let serverURL = try #require(URL(string: "https://127.0.0.1:\(server.port)"))
            let (remote, cached) = try await quickStart(serverURL: serverURL, caPEM: pem, cacheFile: cache)
            #expect(remote.map(\.text) == ["Call Bob", "Buy milk"])
            #expect(cached.map(\.text) == remote.map(\.text))
            #expect(cached.map(\.objectId) == remote.map(\.objectId))
        }
    }
}

/// Finds the README's client example and compares it with the compiled one.
enum ReadmeExample {
    /// The repository's root (this file lives in Tests/EndToEndTests).
    static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// The first fenced `swift` block of `markdown` that contains `marker`.
    static func swiftBlock(in markdown: String, containing marker: String) -> String? {
        let blocks = markdown.components(separatedBy: "```swift\n").dropFirst()
        return blocks.compactMap { $0.components(separatedBy: "```").first }.first { $0.contains(marker) }
    }

    /// The text strictly between two marker lines.
    static func between(_ begin: String, _ end: String, in text: String) -> String? {
        guard let start = text.range(of: begin + "\n"), let stop = text.range(of: end, range: start.upperBound..<text.endIndex)
        else { return nil }
        return String(text[start.upperBound..<stop.lowerBound])
    }

    /// Non-empty lines without trailing spaces, for a comparison that ignores blank lines and
    /// the README's `import` lines.
    static func lines(_ text: String) -> [String] {
        text.split(separator: "\n").map { String($0).replacing(/\s+$/, with: "") }
            .filter { !$0.isEmpty && !$0.hasPrefix("import ") }
    }
}
