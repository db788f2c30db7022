import Foundation
import Hummingbird
import HummingbirdTesting
@testable import RooftopServer
import RooftopShared
import Testing

/// The document is a valid OpenAPI 3.1 description, self-consistent, and served as built.
@Suite("OpenAPI document")
struct OpenAPIDocumentTests {
    @Test("passes openapi-spec-validator, as YAML and as JSON")
    func validates() async throws {
        let served = try OpenAPITestSupport.served()
        for (name, bytes) in [("openapi.yaml", served.yaml), ("openapi.json", served.json)] {
            let result = try await OpenAPITestSupport.withTemporaryDirectory { directory in
                let file = directory.appendingPathComponent(name)
                try Data(bytes).write(to: file)
                return try await OpenAPITestSupport.python(["-m", "openapi_spec_validator", file.path])
            }
            #expect(result.status == 0, "openapi-spec-validator rejected \(name):\n\(result.output)")
            #expect(result.output.contains("OK"), "unexpected validator output for \(name):\n\(result.output)")
        }
    }

    @Test("the JSON form is the YAML file, converted exactly (checked against Python's YAML reader)")
    func jsonIsTheYAML() async throws {
        let served = try OpenAPITestSupport.served()
        let result = try await OpenAPITestSupport.withTemporaryDirectory { directory in
            let yaml = directory.appendingPathComponent("openapi.yaml")
            let json = directory.appendingPathComponent("openapi.json")
            try Data(served.yaml).write(to: yaml)
            try Data(served.json).write(to: json)
            let script = """
                import json, sys, yaml
                fromYAML = yaml.safe_load(open(sys.argv[1], encoding="utf-8"))
                fromJSON = json.load(open(sys.argv[2], encoding="utf-8"))
                def diff(a, b, path):
                    if type(a) != type(b) or (not isinstance(a, (dict, list)) and a != b):
                        return ["%s: YAML %r, JSON %r" % (path or "/", a, b)]
                    if isinstance(a, dict):
                        if list(a) != list(b):
                            return ["%s: keys %s vs %s" % (path or "/", list(a), list(b))]
                        return [d for k in a for d in diff(a[k], b[k], path + "/" + k)]
                    if isinstance(a, list):
                        if len(a) != len(b):
                            return ["%s: lengths %d vs %d" % (path or "/", len(a), len(b))]
                        return [d for i in range(len(a)) for d in diff(a[i], b[i], "%s/%d" % (path, i))]
                    return []
                differences = diff(fromYAML, fromJSON, "")
                print("\\n".join(differences[:20]) or "same")
                sys.exit(1 if differences else 0)
                """
            return try await OpenAPITestSupport.python(["-c", script, yaml.path, json.path])
        }
        #expect(result.status == 0, "the JSON differs from the YAML:\n\(result.output)")
        let document = try OpenAPITestSupport.document()
        #expect(OpenAPITestSupport.member(document, "openapi") == .string("3.1.0"))
        #expect(OpenAPITestSupport.member(document, "info", "version") == .string(RooftopServerInfo.version))
    }

    @Test("the YAML conversion refuses what JSON cannot say, instead of guessing")
    func conversionRefusals() throws {
        #expect(try YAMLToJSON.convert("a: [1, 2.5, true, null, '3', x]\nb: {c: -4}") == #"{"a":[1,2.5,true,null,"3","x"],"b":{"c":-4}}"#)
        // Aliases are resolved by the parser: the JSON has the value twice.
        #expect(try YAMLToJSON.convert("a: &x [1]\nb: *x") == #"{"a":[1],"b":[1]}"#)
        for yaml in ["a: 1\na: 2", "a: .inf", "? [1]\n: 2", "", "a: [1"] {
            #expect(throws: RooftopError.self, "\(yaml) was converted") { try YAMLToJSON.convert(yaml) }
        }
    }

    @Test("every $ref names a component that exists")
    func referencesResolve() throws {
        let document = try OpenAPITestSupport.document()
        var references: Set<String> = []
        OpenAPITestSupport.collectReferences(in: document, into: &references)
        #expect(references.count > 50)
        for reference in references.sorted() {
            let parts = reference.split(separator: "/").map(String.init)
            #expect(parts.first == "#" && parts.count == 4, "malformed reference \(reference)")
            guard parts.count == 4 else { continue }
            #expect(
                OpenAPITestSupport.member(document, parts[1], parts[2], parts[3]) != nil,
                "\(reference) does not exist")
        }
    }

    @Test("every component schema is used, except the live messages the description refers to")
    func schemasAreUsed() throws {
        let document = try OpenAPITestSupport.document()
        var references: Set<String> = []
        OpenAPITestSupport.collectReferences(in: document, into: &references)
        guard case .object(let schemas)? = OpenAPITestSupport.member(document, "components", "schemas") else {
            Issue.record("no component schemas")
            return
        }
        let unused = schemas.keys.filter { !references.contains("#/components/schemas/\($0)") }
        #expect(Set(unused) == ["LiveClientMessage", "LiveServerMessage"])
    }

    /// The codes the server answers with, and the component response of each status.
    private static let serverErrorCodes: [RooftopError.Code] = [
        .request, .illegalArgument, .badType, .badIndex, .invalidQuery, .invalidOperation, .badState, .auth,
        .disallowed, .quota, .notFound, .deleted, .methodNotAllowed, .exists, .alreadyOpen, .sizeLimit, .retryLater,
        .historyExpired, .server, .internal,
    ]
    private static let responseNames: [Int: String] = [
        400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 405: "MethodNotAllowed",
        409: "Conflict", 410: "Gone", 413: "ContentTooLarge", 429: "TooManyRequests", 500: "InternalError",
    ]

    @Test("the Error schema's table and every error response give each code its real status")
    func errorResponsesListTheirCodes() throws {
        let document = try OpenAPITestSupport.document()
        guard case .string(let table)? = OpenAPITestSupport.member(document, "components", "schemas", "Error", "description")
        else {
            Issue.record("the Error schema has no description")
            return
        }
        for code in Self.serverErrorCodes {
            let status = Int(RooftopError(code, "").httpStatus.code)
            #expect(table.contains("| `\(code.rawValue)` | \(status) |"), "the Error table lacks \(code) → \(status)")
            guard let name = Self.responseNames[status] else {
                Issue.record("code \(code) is answered with \(status), which has no documented response")
                continue
            }
            let description = OpenAPITestSupport.member(document, "components", "responses", name, "description")
            guard case .string(let text)? = description else {
                Issue.record("response \(name) has no description")
                continue
            }
            #expect(text.contains("`\(code.rawValue)`"), "\(name) does not mention \(code)")
        }
    }

    @Test("GET /openapi.yaml serves the document and /openapi.json its JSON form, without credentials")
    func servedByTheRouter() async throws {
        try await OpenAPITestServer.with { server in
            let application = Application(router: server.router())
            let served = try OpenAPITestSupport.served()
            try await application.test(.router) { client in
                for (uri, type, bytes) in [
                    ("/openapi.yaml", "application/yaml", served.yaml), ("/openapi.json", "application/json", served.json),
                ] {
                    try await client.execute(uri: uri, method: .get) { response in
                        #expect(response.status == .ok)
                        #expect(response.headers[.contentType]?.hasPrefix(type) == true, "\(uri)")
                        #expect(Array(response.body.readableBytesView) == bytes, "\(uri)")
                        #expect(response.headers[RooftopHeader.requestId] != nil)
                    }
                }
            }
        }
    }
}
