import Foundation
import Hummingbird
import HummingbirdTesting
@testable import RooftopServer
import RooftopShared
import Testing

/// The document is a valid OpenAPI 3.1 description, self-consistent, and served as built.
@Suite("OpenAPI document")
struct OpenAPIDocumentTests {
    @Test("passes openapi-spec-validator")
    func validates() throws {
        let result = try OpenAPITestSupport.withTemporaryDirectorySync { directory in
            let file = directory.appendingPathComponent("openapi.json")
            try Data(OpenAPIDocument.json).write(to: file)
            return try OpenAPITestSupport.python(["-m", "openapi_spec_validator", file.path])
        }
        #expect(result.status == 0, "openapi-spec-validator rejected the document:\n\(result.output)")
        #expect(result.output.contains("OK"), "unexpected validator output:\n\(result.output)")
    }

    @Test("is JSON declaring OpenAPI 3.1, serialized once and stable")
    func isStableJSON() throws {
        let document = try OpenAPITestSupport.document()
        #expect(OpenAPITestSupport.member(document, "openapi") == .string("3.1.0"))
        #expect(OpenAPITestSupport.member(document, "info", "version") == .string(RooftopServerInfo.version))
        #expect(OpenAPIDocument.json == OpenAPIDocument.document.serialized())
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

    @Test("every error response lists the codes answered with its status")
    func errorResponsesListTheirCodes() throws {
        let document = try OpenAPITestSupport.document()
        for code in OpenAPIDocument.serverErrorCodes {
            let status = RooftopError(code, "").httpStatus.code
            guard let failure = OpenAPIOperation.Failure.allCases.first(where: { $0.status == status }) else {
                Issue.record("code \(code) is answered with \(status), which has no documented response")
                continue
            }
            let description = OpenAPITestSupport.member(document, "components", "responses", failure.rawValue, "description")
            guard case .string(let text)? = description else {
                Issue.record("response \(failure.rawValue) has no description")
                continue
            }
            #expect(text.contains("`\(code.rawValue)`"), "\(failure.rawValue) does not mention \(code)")
        }
    }

    @Test("GET /openapi.json serves the document without credentials")
    func servedByTheRouter() async throws {
        try await OpenAPITestServer.with { server in
            let application = Application(router: server.router())
            try await application.test(.router) { client in
                try await client.execute(uri: "/openapi.json", method: .get) { response in
                    #expect(response.status == .ok)
                    #expect(response.headers[.contentType]?.hasPrefix("application/json") == true)
                    #expect(Array(response.body.readableBytesView) == OpenAPIDocument.json)
                    #expect(response.headers[RooftopHeader.requestId] != nil)
                }
            }
        }
    }
}
