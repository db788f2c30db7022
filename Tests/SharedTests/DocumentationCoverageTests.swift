import Foundation
import Testing

/// Every public declaration of the libraries (RooftopShared, Rooftop, RooftopServer) carries a
/// `///` comment (the issue's bar, kept true).
@Suite("Documentation coverage")
struct DocumentationCoverageTests {
    private static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Public declarations in a file that no `///` comment precedes (attributes may sit between).
    static func undocumented(in text: String) -> [String] {
        let lines = text.components(separatedBy: "\n")
        var missing: [String] = []
        for (index, line) in lines.enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("public ") || trimmed.hasPrefix("open "),
                !trimmed.hasPrefix("public import")
            else { continue }
            var previous = index - 1
            while previous >= 0, lines[previous].trimmingCharacters(in: .whitespaces).hasPrefix("@") {
                previous -= 1
            }
            if previous < 0 || !lines[previous].trimmingCharacters(in: .whitespaces).hasPrefix("///") {
                missing.append("line \(index + 1): \(trimmed)")
            }
        }
        return missing
    }

    @Test("the checker itself spots a missing comment")
    func checkerWorks() {
        #expect(Self.undocumented(in: "/// Documented.\npublic let a = 1\npublic let b = 2") == ["line 3: public let b = 2"])
        #expect(Self.undocumented(in: "/// Documented.\n@inlinable\npublic func f() {}").isEmpty)
    }

    @Test(
        "every public symbol of the libraries has a /// comment",
        arguments: [("Sources/Shared", 50), ("Sources/Client", 20), ("Sources/Server", 30)])
    func everyPublicSymbolDocumented(folder: String, minimumFiles: Int) throws {
        let sources = Self.packageRoot.appendingPathComponent(folder)
        let files = try #require(FileManager.default.enumerator(atPath: sources.path))
        var missing: [String] = []
        var checked = 0
        for case let path as String in files where path.hasSuffix(".swift") {
            let text = try String(contentsOf: sources.appendingPathComponent(path), encoding: .utf8)
            checked += 1
            missing += Self.undocumented(in: text).map { "\(path) \($0)" }
        }
        #expect(checked > minimumFiles, "found only \(checked) source files under \(sources.path)")
        #expect(missing.isEmpty, "undocumented public symbols:\n\(missing.joined(separator: "\n"))")
    }
}
