import Foundation
import RooftopShared

/// How the dashboard shows field values: a kind label and a short text, pointers and relations as
/// links to the objects (in the same datastore), and the portable JSON form for editing.
enum DashboardValues {
    /// The longest text shown in a table cell.
    static let cellLength = 120

    /// A value's view: `kind`, `text`, and `link` / `links` for references.
    static func view(_ value: Value?, datastoreKey: Int64, limit: Int = cellLength) -> ValueView {
        guard let value else { return ValueView(present: false) }
        var view = ValueView(present: true, kind: kindName(value))
        switch value {
        case .pointer(let pointer):
            view.text = "\(pointer.className)/\(pointer.objectId)"
            view.link = DashboardPath.object(datastoreKey, pointer.className, pointer.objectId)
            view.hasLink = true
        case .relation(let relation):
            view.text = "\(relation.className) ×\(relation.objectIds.count)"
            view.links = relation.objectIds.prefix(20).map { id in
                ValueView.Member(text: id, link: DashboardPath.object(datastoreKey, relation.className, id))
            }
        default:
            view.text = truncated(text(value), to: limit)
        }
        return view
    }

    /// A short readable text of a value.
    static func text(_ value: Value) -> String {
        switch value {
        case .null: "null"
        case .bool(let bool): String(bool)
        case .int(let int): String(int)
        case .double(let double): Value.formatDouble(double)
        case .string(let string): string
        case .date(let timestamp): timestamp.description
        case .bytes(let bytes): "\(bytes.data.count) bytes" + (bytes.mimeType.map { ", \($0)" } ?? "")
        case .decimal(let decimal): decimal.text
        case .geoPoint(let point): "\(point.latitude), \(point.longitude)"
        case .day(let day): day.description
        case .json(let json): json.canonicalText
        case .list(let items): "[" + items.map(text).joined(separator: ", ") + "]"
        case .pointer(let pointer): "\(pointer.className)/\(pointer.objectId)"
        case .relation(let relation): "\(relation.className){\(relation.objectIds.joined(separator: ", "))}"
        }
    }

    /// The kind's name, e.g. `date`.
    static func kindName(_ value: Value) -> String {
        switch value {
        case .int: "int"
        case .double: "double"
        default: value.kind.description
        }
    }

    /// A value in the portable JSON form, for editing.
    /// - Throws: `EncodingError` (not for any value a stored object holds).
    static func json(_ value: Value) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// A value read from its portable JSON form.
    /// - Throws: `illegalArgument` naming the field when the text is not a value.
    static func parse(_ text: String, field: String) throws -> Value {
        do {
            return try JSONDecoder().decode(Value.self, from: Data(text.utf8))
        } catch {
            throw RooftopError(
                .illegalArgument, "the value of '\(field.prefix(80))' is not a value in the portable JSON form: \(describe(error))",
                field: field)
        }
    }

    private static func describe(_ error: any Error) -> String {
        if case DecodingError.dataCorrupted(let context) = error { return context.debugDescription }
        return "not JSON"
    }

    private static func truncated(_ text: String, to limit: Int) -> String {
        text.count > limit ? String(text.prefix(limit)) + "…" : text
    }
}
