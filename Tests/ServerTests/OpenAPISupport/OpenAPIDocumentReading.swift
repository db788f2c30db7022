import Foundation
@testable import RooftopServer
import RooftopShared

/// Reading the served document back as plain JSON, the way a client would.
extension OpenAPITestSupport {
    /// The document the server serves (``API``'s paths with the embedded components, as JSON).
    static func served() throws -> OpenAPIDocument {
        try OpenAPIDocument.load()
    }

    /// The served document's JSON form, decoded.
    static func document() throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(try served().json))
    }

    /// The member at a path of object keys, if every step exists.
    static func member(_ json: JSONValue, _ path: String...) -> JSONValue? {
        var current = json
        for key in path {
            guard case .object(let members) = current, let next = members[key] else { return nil }
            current = next
        }
        return current
    }

    /// Every `$ref` string anywhere in `json`.
    static func collectReferences(in json: JSONValue, into references: inout Set<String>) {
        switch json {
        case .object(let members):
            for (key, value) in members {
                if key == "$ref", case .string(let reference) = value { references.insert(reference) }
                collectReferences(in: value, into: &references)
            }
        case .array(let values):
            for value in values { collectReferences(in: value, into: &references) }
        default:
            break
        }
    }

    /// The documented operations as `METHOD /path` (paths as templates): the router routes, and
    /// among them the WebSocket upgrades (`x-rooftop-websocket`), whose plain HTTP requests the
    /// router also answers.
    static func documentedOperations() throws -> (routes: Set<String>, webSockets: Set<String>) {
        guard case .object(let paths)? = member(try document(), "paths") else { return ([], []) }
        var routes: Set<String> = []
        var webSockets: Set<String> = []
        for (path, item) in paths {
            guard case .object(let operations) = item else { continue }
            for (method, operation) in operations {
                let name = "\(method.uppercased()) \(path)"
                routes.insert(name)
                if member(operation, "x-rooftop-websocket") == .bool(true) { webSockets.insert(name) }
            }
        }
        return (routes, webSockets)
    }

    /// A router path in OpenAPI template form: `:name` captures become `{name}`.
    static func template(_ routerPath: String) -> String {
        "/"
            + routerPath.split(separator: "/").map { component in
                component.hasPrefix(":") ? "{\(component.dropFirst())}" : String(component)
            }.joined(separator: "/")
    }
}
