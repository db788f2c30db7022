import Mustache

/// The dashboard's Mustache content type: HTML escaping one Unicode scalar at a time.
///
/// swift-mustache's own `HTML` type looks each Swift `Character` (a grapheme cluster) up in a
/// table, so a `<` or `"` that forms one cluster with a neighbour — after a prepend mark such as
/// U+0600, or before a combining accent — is not found and goes out raw. HTML parsers read code
/// points, not clusters: this type escapes every `&`, `<`, `>`, `"` and `'` scalar wherever it
/// stands, whatever surrounds it.
///
/// It also makes invisible controls visible (`[U+202E]`): bidirectional overrides, isolates and
/// marks would let a user name or value display as something else (a name reading backwards, a
/// value whose end seems to be another column's), and C0/C1 controls are parse errors in HTML.
/// Every dashboard template declares it (``DashboardTemplates``), so no insertion escapes by
/// another rule.
///
/// ```swift
/// DashboardHTML.escape("\u{0600}<b>")   // "\u{0600}&lt;b&gt;"
/// ```
struct DashboardHTML: MustacheContentType {
    /// The name templates select it by: `{{% CONTENT_TYPE: ROOFTOP_HTML}}`.
    static let name = "ROOFTOP_HTML"

    /// The pragma that starts every dashboard template.
    static let pragma = "{{% CONTENT_TYPE: \(name)}}"

    /// Registers the type with swift-mustache (idempotent); done before any template is parsed.
    static let registered: Void = MustacheContentTypes.register(DashboardHTML(), named: name)

    func escapeText(_ text: String) -> String { Self.escape(text) }

    /// Escapes text for an HTML text node or a quoted attribute value.
    static func escape(_ text: String) -> String {
        var escaped = String.UnicodeScalarView()
        escaped.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": escaped.append(contentsOf: "&amp;".unicodeScalars)
            case "<": escaped.append(contentsOf: "&lt;".unicodeScalars)
            case ">": escaped.append(contentsOf: "&gt;".unicodeScalars)
            case "\"": escaped.append(contentsOf: "&quot;".unicodeScalars)
            case "'": escaped.append(contentsOf: "&#39;".unicodeScalars)
            default:
                if isHiddenControl(scalar) {
                    escaped.append(contentsOf: visible(scalar).unicodeScalars)
                } else {
                    escaped.append(scalar)
                }
            }
        }
        return String(escaped)
    }

    /// Controls shown by their code point rather than obeyed: C0 (but tab, line feed and carriage
    /// return), DEL, C1, and the bidirectional formatting characters (ALM, LRM, RLM, the
    /// embeddings and overrides U+202A–U+202E, the isolates U+2066–U+2069).
    static func isHiddenControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09, 0x0A, 0x0D: false
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    private static func visible(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "[U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "]"
    }
}
