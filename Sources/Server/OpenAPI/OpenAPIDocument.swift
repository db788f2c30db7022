import RooftopShared
import Yams

/// The OpenAPI 3.1 description of the server's HTTP API, served at `GET /openapi.yaml` and, as
/// JSON, at `GET /openapi.json`. It is put together when first asked for (once per process, so
/// that a server starts without that work) from the API's one statement and the schemas it names:
/// - `tags` and `paths`: every operation of ``API`` (``OpenAPIPaths``) — the same endpoints the
///   router registers, the client library and the admin CLI call;
/// - the schemas of object types (request and answer bodies, and the objects they hold) and of
///   unions and their variants: derived from the wire types themselves (``SchemaBuilder``, over
///   ``WireSchemas/documented`` and ``WireSchemas/unions``);
/// - everything else (the title and description, the schemas of strings of a given form, shared
///   parameters and responses): `openapi-components.yaml` beside this file, compiled into the
///   binary.
///
/// The tests keep the two true to each other and to the code: every router route is an ``API``
/// operation and every operation is routed, every schema an operation names is a component, the
/// document passes `openapi-spec-validator`, JSON encoded by the wire types validates against its
/// schemas, recorded exchanges validate against the documented answers, and schemathesis
/// (`Tests/contract/run-schemathesis.sh`) checks the running server against it.
///
/// ```swift
/// routes.on(raw: API.getOpenAPIDocumentYAML) { _, _ in
///     Response(status: .ok, headers: [.contentType: OpenAPIDocument.yamlContentType],
///              body: .init(byteBuffer: ByteBuffer(bytes: try OpenAPIDocument.shared.get().yaml)))
/// }
/// ```
struct OpenAPIDocument: Sendable {
    /// The media type of ``yaml`` (RFC 9512).
    static let yamlContentType = "application/yaml; charset=utf-8"
    /// The media type of ``json``.
    static let jsonContentType = "application/json; charset=utf-8"

    /// The document as YAML.
    let yaml: [UInt8]
    /// The same document as UTF-8 JSON, members in the YAML's order.
    let json: [UInt8]

    /// The document of ``API/all`` with the embedded components, put together once per process,
    /// when first asked for (every server of a process serves the same one). A failure is a build
    /// defect the tests catch; a server would answer it as `500 internal`.
    static let shared: Result<OpenAPIDocument, RooftopError> = Result { () throws(RooftopError) in try load() }

    /// The document of ``API/all`` with the embedded components.
    /// - Throws: ``RooftopError/Code/internal`` when the embedded components are not UTF-8 or not
    ///   a YAML mapping JSON can express: a build defect the tests catch, never input from outside.
    static func load() throws(RooftopError) -> OpenAPIDocument {
        guard let components = String(validating: PackageResources.openapi_components_yaml, as: UTF8.self) else {
            throw RooftopError(.internal, "the OpenAPI components are not UTF-8")
        }
        let root = try Self.compose(components)
        let written = Dictionary(
            (root["components"]?["schemas"]?.mapping ?? Node.Mapping([])).compactMap { key, value in
                key.string.map { ($0, value) }
            },
            uniquingKeysWith: { first, _ in first })
        let schemas: [(name: String, schema: Node)]
        do {
            schemas = try SchemaBuilder.schemas(
                WireSchemas.documented, unions: WireSchemas.unions, written: written,
                // Clients send request bodies, and live messages over the WebSocket.
                requests: Set(API.all.compactMap(\.body?.schema) + ["LiveClientMessage"]))
        } catch {
            throw RooftopError(.internal, "the OpenAPI schemas could not be derived: \(error)", cause: error)
        }
        return try OpenAPIDocument(root: root, schemas: schemas, operations: API.all)
    }

    /// The document of `operations` with `components` (YAML: every member of the document but
    /// `tags` and `paths`, which go after `info`) and the derived `schemas`, which go after the
    /// component schemas written in `components`.
    /// - Throws: ``RooftopError/Code/internal`` when `components` is not a YAML mapping, a derived
    ///   schema's name is taken, or the document holds what JSON cannot express (non-finite
    ///   numbers, duplicate keys).
    init(
        components: String, schemas: [(name: String, schema: Node)] = [], operations: [APIOperation]
    ) throws(RooftopError) {
        try self.init(root: try Self.compose(components), schemas: schemas, operations: operations)
    }

    /// `components` parsed.
    /// - Throws: ``RooftopError/Code/internal`` when it is not valid YAML.
    private static func compose(_ components: String) throws(RooftopError) -> Node {
        let root: Node?
        do {
            root = try Yams.compose(yaml: components)
        } catch {
            throw RooftopError(.internal, "the OpenAPI components are not valid YAML: \(error)", cause: error)
        }
        guard let root else { throw RooftopError(.internal, "the OpenAPI components are empty") }
        return root
    }

    /// The document of `operations` with the parsed components `root` and the derived `schemas`
    /// (as ``init(components:schemas:operations:)``).
    private init(root: Node, schemas: [(name: String, schema: Node)], operations: [APIOperation]) throws(RooftopError) {
        guard case .mapping(let members) = root else {
            throw RooftopError(.internal, "the OpenAPI components are not a YAML mapping")
        }
        var pairs = members.map { ($0.key, $0.value) }
        if !schemas.isEmpty {
            try Self.add(schemas, to: &pairs)
        }
        let after = pairs.firstIndex { $0.0.string == "info" }.map { $0 + 1 } ?? pairs.count
        pairs.insert(
            contentsOf: [
                (OpenAPIPaths.text("tags"), OpenAPIPaths.tags()),
                (OpenAPIPaths.text("paths"), OpenAPIPaths.node(operations)),
            ], at: after)
        let text: String
        do {
            text = try Yams.serialize(
                node: .mapping(Node.Mapping(pairs, members.tag, members.style)), indent: 2, width: 118, allowUnicode: true)
        } catch {
            throw RooftopError(.internal, "the OpenAPI document could not be written as YAML: \(error)", cause: error)
        }
        yaml = Array(text.utf8)
        json = Array(try YAMLToJSON.convert(text).utf8)
    }

    /// `schemas` added at the end of `components.schemas` in `pairs` (the document's members).
    private static func add(_ schemas: [(name: String, schema: Node)], to pairs: inout [(Node, Node)]) throws(RooftopError) {
        guard let index = pairs.firstIndex(where: { $0.0.string == "components" }),
            case .mapping(var components) = pairs[index].1
        else {
            throw RooftopError(.internal, "the OpenAPI components have no components mapping")
        }
        var written = components["schemas"]?.mapping ?? Node.Mapping([])
        for (name, schema) in schemas {
            guard written[name] == nil else {
                throw RooftopError(.internal, "the OpenAPI schema \(name) is both written and derived")
            }
            written[name] = schema
        }
        components["schemas"] = .mapping(written)
        pairs[index].1 = .mapping(components)
    }
}
