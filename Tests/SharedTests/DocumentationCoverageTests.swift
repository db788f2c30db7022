import Foundation
import Testing

/// Every public declaration of RooftopShared carries a `///` comment (the issue's bar, kept true).
@Suite("Documentation coverage")
struct DocumentationCoverageTests {
    private static let sharedSources = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/Shared")

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

    @Test("every public symbol of RooftopShared has a /// comment")
    func everyPublicSymbolDocumented() throws {
        let files = try #require(FileManager.default.enumerator(atPath: Self.sharedSources.path))
        var missing: [String] = []
        var checked = 0
        for case let path as String in files where path.hasSuffix(".swift") {
            let text = try String(contentsOf: Self.sharedSources.appendingPathComponent(path), encoding: .utf8)
            checked += 1
            missing += Self.undocumented(in: text).map { "\(path) \($0)" }
        }
        #expect(checked > 50, "found only \(checked) source files under \(Self.sharedSources.path)")
        #expect(missing.isEmpty, "undocumented public symbols:\n\(missing.joined(separator: "\n"))")
    }
}
