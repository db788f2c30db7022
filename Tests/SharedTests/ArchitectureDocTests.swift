import Foundation
import Testing

/// docs/architecture.md, the map for newcomers, stays true to the folders: every folder it names
/// exists, and every folder under Sources is named in it. A folder added, moved or removed without
/// a change to the map fails here.
@Suite("Architecture map")
struct ArchitectureDocTests {
    private static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    private static let documentPath = "docs/architecture.md"

    /// The folder paths a text names: in backticks, starting with `Sources/` or `Tests/` and
    /// ending with `/`, in order of appearance.
    static func namedFolders(in text: String) throws -> [String] {
        let pattern = try Regex(#"`((?:Sources|Tests)/[^`]*/)`"#, as: (Substring, Substring).self)
        return text.matches(of: pattern).map { String($0.output.1) }
    }

    /// Every folder under `Sources/` (recursively), as `Sources/A/B/`; DocC catalogs (`.docc`) and
    /// their contents are not source folders.
    static func sourceFolders(under root: URL) throws -> [String] {
        let sources = root.appendingPathComponent("Sources")
        let entries = try #require(FileManager.default.enumerator(atPath: sources.path))
        var folders: [String] = []
        for case let path as String in entries {
            guard !path.split(separator: "/").contains(where: { $0.hasSuffix(".docc") }) else { continue }
            var isDirectory: ObjCBool = false
            let exists = FileManager.default.fileExists(
                atPath: sources.appendingPathComponent(path).path, isDirectory: &isDirectory)
            if exists, isDirectory.boolValue { folders.append("Sources/\(path)/") }
        }
        return folders.sorted()
    }

    private static func document() throws -> String {
        try String(contentsOf: packageRoot.appendingPathComponent(documentPath), encoding: .utf8)
    }

    @Test("the extraction finds backticked folder paths and nothing else")
    func extractionWorks() throws {
        let text = """
            - `Sources/Client/Store/` — the store; `Tests/SharedTests/` too.
            Not these: `Sources/Client/Store/LocalStore.swift`, Sources/Client/Outbox/, `Client/Pull/`.
            """
        #expect(try Self.namedFolders(in: text) == ["Sources/Client/Store/", "Tests/SharedTests/"])
    }

    @Test("every folder the map names exists")
    func namedFoldersExist() throws {
        let named = try Self.namedFolders(in: Self.document())
        #expect(named.count > 40, "found only \(named.count) folder paths in \(Self.documentPath)")
        for folder in named {
            var isDirectory: ObjCBool = false
            let exists = FileManager.default.fileExists(
                atPath: Self.packageRoot.appendingPathComponent(folder).path, isDirectory: &isDirectory)
            #expect(
                exists && isDirectory.boolValue,
                "\(Self.documentPath) names \(folder), which is not a folder of the package: fix or remove its bullet")
        }
    }

    @Test("every source folder is on the map")
    func sourceFoldersNamed() throws {
        let named = Set(try Self.namedFolders(in: Self.document()))
        let folders = try Self.sourceFolders(under: Self.packageRoot)
        #expect(folders.count > 20, "found only \(folders.count) folders under \(Self.packageRoot.path)/Sources")
        for folder in folders {
            #expect(
                named.contains(folder),
                "\(folder) is not named in \(Self.documentPath): add a bullet `\(folder)` saying what it owns")
        }
    }
}
