/// How SQL names a set of texts (a caller's principals) for `IN (…)`: one `?` per text up to
/// ``inlineLimit``, and beyond it one argument holding them all as a JSON array, so that no set
/// runs into a backend's limit on bound variables (SQLite's 32,766, PostgreSQL's 65,535) however
/// many roles a user holds.
package enum SQLTextSet {
    /// The most texts bound one by one.
    package static let inlineLimit = 64

    /// The SQL inside `IN (…)` for `texts` and its arguments, in order. (Empty `texts` give
    /// `IN ()`, which SQLite reads as holding for nothing and PostgreSQL refuses: only SQLite's
    /// callers pass a set that may be empty.)
    package static func list(_ texts: Set<String>, dialect: SQLDialect) -> (sql: String, arguments: [String]) {
        let sorted = texts.sorted()
        guard sorted.count > inlineLimit else {
            return (Array(repeating: "?", count: sorted.count).joined(separator: ", "), sorted)
        }
        return (dialect.textsOfJSONArray("?"), [jsonArray(sorted)])
    }

    /// `texts` as a JSON array of strings: `"` and `\` escaped with a backslash, characters
    /// below U+0020 as `\u00xx` (lowercase), every other character as it is (this text names reader sets in
    /// both backends' tables and the client's, so it never changes form).
    ///
    /// Written byte by byte: a write names its object's reader set by this text, and building it
    /// one Unicode scalar at a time was a tenth of a PostgreSQL push's server time
    /// (docs/benchmarks.md). A byte below 0x20 is always a whole control character in UTF-8
    /// (every byte of a longer sequence is 0x80 or above), so the text is the same.
    package static func jsonArray(_ texts: [String]) -> String {
        var json: [UInt8] = []
        json.reserveCapacity(texts.reduce(2) { $0 + $1.utf8.count + 3 })
        json.append(UInt8(ascii: "["))
        for (index, text) in texts.enumerated() {
            if index > 0 { json.append(UInt8(ascii: ",")) }
            json.append(UInt8(ascii: "\""))
            for byte in text.utf8 {
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                    json.append(UInt8(ascii: "\\"))
                    json.append(byte)
                case 0..<0x20:
                    json.append(contentsOf: Array("\\u00".utf8))
                    json.append(hexDigits[Int(byte >> 4)])
                    json.append(hexDigits[Int(byte & 0x0F)])
                default:
                    json.append(byte)
                }
            }
            json.append(UInt8(ascii: "\""))
        }
        json.append(UInt8(ascii: "]"))
        return String(decoding: json, as: UTF8.self)
    }

    /// The lowercase hexadecimal digits.
    private static let hexDigits = Array("0123456789abcdef".utf8)
}
