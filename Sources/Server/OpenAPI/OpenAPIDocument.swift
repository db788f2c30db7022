import RooftopShared

/// The OpenAPI 3.1 description of the server's HTTP API: `openapi.yaml` beside this file, the one
/// source of truth, compiled into the binary and served as it is at `GET /openapi.yaml`, and as
/// JSON (converted once, when the server starts) at `GET /openapi.json`.
///
/// The tests keep the file true to the code: every route the router registers is documented and
/// every documented operation is routed, the document passes `openapi-spec-validator`, JSON
/// encoded by the wire types validates against its schemas, recorded exchanges validate against
/// the documented responses, and schemathesis (`Tests/contract/run-schemathesis.sh`) checks the
/// running server against it.
///
/// ```swift
/// let document = try OpenAPIDocument.load()
/// router.get("openapi.yaml") { _, _ in
///     Response(status: .ok, headers: [.contentType: OpenAPIDocument.yamlContentType],
///              body: .init(byteBuffer: ByteBuffer(bytes: document.yaml)))
/// }
/// ```
struct OpenAPIDocument: Sendable {
    /// The media type of ``yaml`` (RFC 9512).
    static let yamlContentType = "application/yaml; charset=utf-8"
    /// The media type of ``json``.
    static let jsonContentType = "application/json; charset=utf-8"

    /// The document as written in `openapi.yaml`, byte for byte.
    let yaml: [UInt8]
    /// The same document as UTF-8 JSON, members in the file's order.
    let json: [UInt8]

    /// The embedded `openapi.yaml`, parsed and converted to JSON.
    /// - Throws: ``RooftopError/Code/internal`` when the embedded file is not UTF-8 or not a YAML
    ///   document JSON can express: a build defect the tests catch, never input from outside.
    static func load() throws(RooftopError) -> OpenAPIDocument {
        try OpenAPIDocument(yaml: PackageResources.openapi_yaml)
    }

    /// A document from YAML text.
    /// - Throws: ``RooftopError/Code/internal`` when `yaml` is not UTF-8, not YAML, or holds what
    ///   JSON cannot express (non-finite numbers, duplicate keys).
    init(yaml: [UInt8]) throws(RooftopError) {
        guard let text = String(validating: yaml, as: UTF8.self) else {
            throw RooftopError(.internal, "the OpenAPI document is not UTF-8")
        }
        self.yaml = yaml
        self.json = Array(try YAMLToJSON.convert(text).utf8)
    }
}
