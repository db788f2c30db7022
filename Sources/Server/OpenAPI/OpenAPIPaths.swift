import RooftopShared
import Yams

/// The `tags` and `paths` of the OpenAPI document, generated from the API's one statement
/// (``API``): each operation's method and path, who may call it, its parameters, request body,
/// successful answer and error answers. The schemas, shared parameters and shared responses they
/// name are the document's components (derived by ``SchemaBuilder`` or written in
/// `openapi-components.yaml`).
enum OpenAPIPaths {
    /// The `tags` sequence: every group operations are listed under, with its description.
    static func tags() -> Node {
        .sequence(.init(APIOperation.Tag.allCases.map { tag in
            mapping([(text("name"), text(tag.rawValue)), (text("description"), text(tag.summary))])
        }))
    }

    /// The `paths` mapping of `operations`: paths in the order they first appear, each path's
    /// methods in their order.
    static func node(_ operations: [APIOperation]) -> Node {
        var order: [String] = []
        var byPath: [String: [(Node, Node)]] = [:]
        for operation in operations {
            if byPath[operation.path] == nil { order.append(operation.path) }
            byPath[operation.path, default: []].append((text(operation.method.rawValue.lowercased()), node(operation)))
        }
        return mapping(order.map { (text($0), .mapping(.init(byPath[$0] ?? []))) })
    }

    /// One operation object.
    static func node(_ operation: APIOperation) -> Node {
        var members: [(String, Node)] = [
            ("operationId", text(operation.id)),
            ("tags", .sequence(.init([text(operation.tag.rawValue)]))),
            ("summary", text(operation.summary)),
            ("description", text(operation.details)),
            ("security", security(operation.access)),
        ]
        if !operation.parameters.isEmpty {
            members.append(("parameters", .sequence(.init(operation.parameters.map { reference("parameters", $0) }))))
        }
        if let body = operation.body {
            members.append((
                "requestBody",
                mapping([
                    (text("required"), Node("true")),
                    (text("description"), text(body.description)),
                    (text("content"), mapping([(text("application/json"), schema(body.schema))])),
                ])
            ))
        }
        var responses: [(Node, Node)] = [(text(String(operation.status)), success(operation))]
        for error in operation.errors {
            responses.append((text(String(error.rawValue)), reference("responses", error.component)))
        }
        members.append(("responses", mapping(responses)))
        if operation.webSocket { members.append(("x-rooftop-websocket", Node("true"))) }
        return mapping(members.map { (text($0.0), $0.1) })
    }

    /// The successful answer: its description, the request ID header (not on a WebSocket's
    /// `101`), its content.
    private static func success(_ operation: APIOperation) -> Node {
        var members: [(Node, Node)] = [(text("description"), text(operation.answer))]
        if operation.status != 101 {
            members.append((
                text("headers"), mapping([(text("X-Request-Id"), reference("headers", "RequestId"))])
            ))
        }
        switch operation.content {
        case .none:
            break
        case .json(let name):
            members.append((text("content"), mapping([(text("application/json"), schema(name))])))
        case .other(let mediaType, let type, let description):
            let inline = mapping([(text("type"), text(type)), (text("description"), text(description))])
            members.append((text("content"), mapping([(text(mediaType), mapping([(text("schema"), inline)]))])))
        }
        return mapping(members)
    }

    /// OpenAPI security requirements: one mapping per alternative, each scheme with no scopes.
    private static func security(_ access: APIOperation.Access) -> Node {
        .sequence(.init(access.alternatives.map { credentials in
            mapping(credentials.map { (text($0.rawValue), .sequence(.init([]))) })
        }))
    }

    /// `{schema: {$ref: '#/components/schemas/NAME'}}`.
    private static func schema(_ name: String) -> Node {
        mapping([(text("schema"), reference("schemas", name))])
    }

    /// `{$ref: '#/components/KIND/NAME'}`.
    private static func reference(_ kind: String, _ name: String) -> Node {
        mapping([(text("$ref"), text("#/components/\(kind)/\(name)"))])
    }

    private static func mapping(_ pairs: [(Node, Node)]) -> Node {
        .mapping(.init(pairs))
    }

    /// A string scalar, quoted where YAML would otherwise read it as something else (`'200'`,
    /// `'true'`).
    static func text(_ string: String) -> Node {
        let readsAsText = Node(string).tag.rawValue == Tag.Name.str.rawValue
        return .scalar(.init(string, Tag(.str), readsAsText ? .any : .singleQuoted))
    }
}
