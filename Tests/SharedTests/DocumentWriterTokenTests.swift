import Foundation
import RooftopTestSupport
import Testing

@testable import RooftopShared

/// The direct writer's tokens: integers as their decimal text, strings as JSON text that decodes
/// to them, escapes included.
@Suite("Documents written directly: integers and strings")
struct DocumentWriterTokenTests {
    @Test("integers are written as their decimal text, the extremes and random values alike")
    func integers() {
        var rng = SeededGenerator(seed: 51)
        var values: [Int64] = [0, 1, -1, 9, 10, -10, 99, 100, Int64.max, Int64.min, Int64.max - 1, Int64.min + 1]
        for _ in 0..<2_000 {
            let bits = rng.int(0...63)
            let magnitude = Int64.random(in: 0...(bits == 63 ? Int64.max : (Int64(1) << bits)), using: &rng)
            values.append(rng.chance(50) ? magnitude : -magnitude)
        }
        for value in values {
            var writer = DocumentWriter()
            writer.raw("[")
            writer.int(value)
            writer.raw("]")
            #expect(writer.text == "[\(value)]")
        }
    }

    @Test("strings decode to themselves: plain, escaped, control characters and any scalar")
    func strings() throws {
        var rng = SeededGenerator(seed: 52)
        let pieces = ["a", "Z", "\"", "\\", "\n", "\r", "\t", "\u{8}", "\u{C}", "\u{0}", "\u{1F}", "é", "€", "😀", "\u{10FFFF}", "/", " "]
        for length in 0..<400 {
            let text = (0..<(length % 40)).map { _ in pieces[rng.int(0...(pieces.count - 1))] }.joined()
            var writer = DocumentWriter()
            writer.strings([text, "plain"])
            let decoded = try JSONDecoder().decode([String].self, from: Data(writer.bytes))
            #expect(decoded == [text, "plain"], "\(writer.text)")
        }
        // A byte to escape at every place of the words a string is looked at in (eight bytes
        // at a time, then its tail), after plain bytes and before more of them.
        var placed = 0
        for special in ["\"", "\\", "\n", "\u{0}", "\u{1F}", "\u{7F}", "é"] {
            for before in 0..<24 {
                let text = String(repeating: "a", count: before) + special + String(repeating: "b", count: before % 9)
                var writer = DocumentWriter()
                writer.strings([text])
                #expect(try JSONDecoder().decode([String].self, from: Data(writer.bytes)) == [text], "\(writer.text)")
                #expect(
                    writer.bytes.count == text.utf8.count + 4 + (["\u{7F}", "é"].contains(special) ? 0 : special == "\u{0}" || special == "\u{1F}" ? 5 : 1),
                    "escaped only where needed: \(writer.text)")
                placed += 1
            }
        }
        #expect(placed == 168)
    }
}
