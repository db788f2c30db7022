import Foundation
import Hummingbird
import RooftopShared

/// A submitted HTML form (`application/x-www-form-urlencoded`): fields by name, in order.
struct DashboardForm: Sendable {
    /// The fields in the order they came, a name possibly repeated.
    let fields: [(name: String, value: String)]

    /// The largest form accepted.
    static let maxBytes = 1 << 20

    /// Reads a request's form body.
    /// - Throws: `sizeLimit` for a body over 1 MiB, `illegalArgument` for one that is not a form.
    static func read(_ request: Request) async throws -> DashboardForm {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: maxBytes)
        } catch {
            throw RooftopError(.sizeLimit, "the form is larger than 1 MiB")
        }
        return try parse(String(decoding: buffer.readableBytesView, as: UTF8.self))
    }

    /// Parses `a=1&b=x+y` (`+` is a space; `%XX` are bytes of UTF-8).
    /// - Throws: `illegalArgument` for bad percent escapes or invalid UTF-8.
    static func parse(_ text: String) throws -> DashboardForm {
        var fields: [(String, String)] = []
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = try decode(parts[0])
            let value = parts.count > 1 ? try decode(parts[1]) : ""
            fields.append((name, value))
        }
        return DashboardForm(fields: fields)
    }

    private static func decode(_ text: Substring) throws -> String {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        guard let decoded = spaced.removingPercentEncoding else {
            throw RooftopError(.illegalArgument, "the form is not valid URL-encoded text")
        }
        return decoded
    }

    /// A request's query string, read as a form: browsers encode a GET form's spaces as `+`,
    /// which the URI's own query parameters keep.
    static func query(_ request: Request) -> DashboardForm {
        (try? parse(request.uri.query ?? "")) ?? DashboardForm(fields: [])
    }

    /// The first value of a field.
    subscript(_ name: String) -> String? { fields.first { $0.name == name }?.value }

    /// Every value of a field.
    func all(_ name: String) -> [String] { fields.filter { $0.name == name }.map(\.value) }

    /// A required, non-empty field.
    /// - Throws: `illegalArgument` naming it.
    func required(_ name: String) throws -> String {
        guard let value = self[name]?.trimmingCharacters(in: .whitespaces), !value.isEmpty else {
            throw RooftopError(.illegalArgument, "'\(name)' is required", field: name)
        }
        return value
    }
}

/// URLs of the dashboard's pages, with user data percent-encoded in their path segments.
enum DashboardPath {
    static func segment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? ""
    }

    static func datastore(_ key: Int64) -> String { "/dashboard/datastores/\(key)" }
    static func classPage(_ key: Int64, _ className: String) -> String {
        datastore(key) + "/classes/" + segment(className)
    }
    static func object(_ key: Int64, _ className: String, _ objectId: String) -> String {
        classPage(key, className) + "/objects/" + segment(objectId)
    }
    static func user(_ id: String) -> String { "/dashboard/users/" + segment(id) }
    static func role(_ name: String) -> String { "/dashboard/roles/" + segment(name) }
    static func classSettings(_ name: String) -> String { "/dashboard/classes/" + segment(name) }
}
