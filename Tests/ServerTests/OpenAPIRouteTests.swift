import Foundation
import Hummingbird
import HummingbirdTesting
@testable import RooftopServer
import RooftopShared
import Testing

/// The document and the router agree: same operations, same methods, same paths.
@Suite("OpenAPI routes")
struct OpenAPIRouteTests {
    /// The router's routes as `METHOD /path` in template form, from Hummingbird's route listing.
    private func routerOperations() async throws -> Set<String> {
        try await OpenAPITestServer.with { server in
            Set(server.router().routes.map { "\($0.method.rawValue) \(OpenAPITestSupport.template($0.path.description))" })
        }
    }

    @Test("every route the router registers is documented, and nothing else (the dashboard's HTML pages aside)")
    func routesMatch() async throws {
        // The dashboard's pages are HTML for people, not the API (docs/server.md, "The dashboard");
        // DashboardTests covers them.
        let registered = try await routerOperations().filter { !$0.contains(" /dashboard") }
        let documented = try OpenAPITestSupport.documentedOperations().routes
        #expect(registered.count >= 30, "the router listed only \(registered.sorted())")
        let undocumented = registered.subtracting(documented).sorted()
        let missing = documented.subtracting(registered).sorted()
        #expect(undocumented.isEmpty, "routes missing from the document: \(undocumented)")
        #expect(missing.isEmpty, "documented operations the router does not serve: \(missing)")
    }

    @Test("every documented path answers 405 with an Allow header listing its documented methods, for any other method")
    func otherMethodsAre405() async throws {
        let byPath = Dictionary(
            grouping: try OpenAPITestSupport.documentedOperations().routes.map { $0.split(separator: " ") },
            by: { String($0[1]) }
        ).mapValues { Set($0.map { String($0[0]) }) }
        #expect(byPath.count >= 20)
        let methods: [HTTPRequest.Method] = [.get, .head, .post, .put, .patch, .delete, .options, .trace, .connect]
            + [HTTPRequest.Method("PURGE")].compactMap { $0 }
        try await OpenAPITestServer.with { server in
            try await Application(router: server.router()).test(.router) { client in
                for (template, documented) in byPath.sorted(by: { $0.key < $1.key }) {
                    // A concrete path for the template: every parameter gets a valid sample.
                    let path = template.replacingOccurrences(
                        of: #"\{[^}]+\}"#, with: "x1", options: .regularExpression)
                    for method in methods where !documented.contains(method.rawValue) {
                        try await client.execute(uri: path, method: method, headers: [RooftopHeader.applicationId: OpenAPITestServer.appId]) { response in
                            #expect(response.status == .methodNotAllowed, "\(method) \(path) answered \(response.status)")
                            #expect(response.headers[.allow] == documented.sorted().joined(separator: ", "), "\(method) \(path)")
                            if method != .head {
                                let error = try JSONDecoder().decode(RooftopError.self, from: Data(response.body.readableBytesView))
                                #expect(error.code == .methodNotAllowed, "\(method) \(path)")
                            }
                        }
                    }
                }
                // An unknown path is still 404, whatever the method.
                try await client.execute(uri: "/v1/nothing-here", method: .delete) { response in
                    #expect(response.status == .notFound)
                }
                try await client.execute(uri: "/health/x", method: .get) { response in
                    #expect(response.status == .notFound)
                }
            }
        }
    }

    @Test("operations for the admin key alone refuse other callers before reading their bodies")
    func adminBeforeBody() async throws {
        let adminOnly = API.all.filter { $0.access == .admin }
        #expect(adminOnly.count >= 6)
        try await OpenAPITestServer.with { server in
            try await Application(router: server.router()).test(.router) { client in
                for operation in adminOnly {
                    let path = operation.path(operation.pathParameters.map { _ in "x1" })
                    // A body that is not JSON: read first, it would answer 400.
                    try await client.execute(
                        uri: path, method: .init(operation.method),
                        headers: [RooftopHeader.applicationId: OpenAPITestServer.appId],
                        body: ByteBuffer(string: "{not json")
                    ) { response in
                        #expect(response.status == .forbidden, "\(operation) answered \(response.status)")
                        let error = try JSONDecoder().decode(RooftopError.self, from: Data(response.body.readableBytesView))
                        #expect(error.code == .disallowed, "\(operation)")
                    }
                }
            }
        }
    }

    @Test("the only WebSocket operation is the live endpoint's upgrade")
    func webSocketMatchesLiveEndpoint() throws {
        let webSockets = try OpenAPITestSupport.documentedOperations().webSockets
        #expect(webSockets == ["GET \(LiveEndpoint.path)"])
    }

    @Test("the document's operations are the API's, with their methods, paths and IDs")
    func documentIsTheAPI() throws {
        let documented = try OpenAPITestSupport.documentedOperations().routes
        #expect(documented == Set(API.all.map { "\($0.method.rawValue) \($0.path)" }))
    }

    @Test("API templates become router paths below their group, and back")
    func routerPaths() {
        #expect(APIRoutes.routerPath("/v1/roles/{name}", under: "/v1") == "roles/:name")
        #expect(
            APIRoutes.routerPath("/v1/datastores/{datastore}/classes/{className}/objects", under: "/v1")
                == "datastores/:datastore/classes/:className/objects")
        #expect(APIRoutes.routerPath("/health", under: "") == "health")
        for operation in API.all where operation.tag != .operations {
            let routed = "/v1/" + APIRoutes.routerPath(operation.path, under: "/v1")
            #expect(OpenAPITestSupport.template(routed) == operation.path)
        }
    }

    @Test("router paths convert to templates")
    func templates() {
        #expect(OpenAPITestSupport.template("/v1/roles/:name") == "/v1/roles/{name}")
        #expect(OpenAPITestSupport.template("/v1/roles/{name}") == "/v1/roles/{name}")
        #expect(OpenAPITestSupport.template("/health") == "/health")
    }

    @Test("every path parameter of a template is declared, and every declared one is in the template")
    func pathParametersMatch() throws {
        let document = try OpenAPITestSupport.document()
        guard case .object(let paths)? = OpenAPITestSupport.member(document, "paths") else {
            Issue.record("no paths")
            return
        }
        for (path, item) in paths {
            let inTemplate = Set(
                path.split(separator: "/").filter { $0.hasPrefix("{") }.map { String($0.dropFirst().dropLast()) })
            guard case .object(let operations) = item else { continue }
            for (method, operation) in operations {
                var declared: Set<String> = []
                if case .array(let parameters)? = OpenAPITestSupport.member(operation, "parameters") {
                    for parameter in parameters {
                        guard case .string(let reference)? = OpenAPITestSupport.member(parameter, "$ref"),
                            let name = reference.split(separator: "/").last,
                            let resolved = OpenAPITestSupport.member(document, "components", "parameters", String(name))
                        else {
                            Issue.record("\(method) \(path): unresolvable parameter \(parameter)")
                            continue
                        }
                        if OpenAPITestSupport.member(resolved, "in") == .string("path"),
                            case .string(let parameterName)? = OpenAPITestSupport.member(resolved, "name")
                        {
                            declared.insert(parameterName)
                        }
                    }
                }
                #expect(declared == inTemplate, "\(method) \(path) declares \(declared.sorted())")
            }
        }
    }
}
