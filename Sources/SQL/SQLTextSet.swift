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

    /// `texts` as a JSON array of strings.
    package static func jsonArray(_ texts: [String]) -> String {
        var json = "["
        for (index, text) in texts.enumerated() {
            if index > 0 { json += "," }
            json += "\""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": json += "\\\""
                case "\\": json += "\\\\"
                case _ where scalar.value < 0x20:
                    let hex = String(scalar.value, radix: 16)
                    json += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                default: json.unicodeScalars.append(scalar)
                }
            }
            json += "\""
        }
        return json + "]"
    }
}
