import Foundation
import RooftopShared
import Testing

/// The API's one statement (``API``): well formed, and paths built from it as a server routes them.
@Suite("API endpoints")
struct WireAPIEndpointTests {
    @Test("every operation has a unique ID and a unique method and path, under /v1 but for the operational ones")
    func unique() {
        let ids = API.all.map(\.id)
        #expect(Set(ids).count == ids.count, "duplicate IDs: \(ids)")
        let routes = API.all.map { "\($0.method.rawValue) \($0.path)" }
        #expect(Set(routes).count == routes.count, "duplicate routes: \(routes)")
        for operation in API.all {
            #expect(operation.path.hasPrefix("/v1/") || operation.tag == .operations, "\(operation.id): \(operation.path)")
            #expect(operation.path.hasPrefix("/") && !operation.path.hasSuffix("/"), "\(operation.id)")
            #expect(!operation.summary.isEmpty && !operation.details.isEmpty && !operation.answer.isEmpty, "\(operation.id)")
        }
        #expect(API.all.count >= 38)
    }

    @Test("the body and answer schemas are named after the wire types; none for NoBody")
    func schemas() {
        #expect(API.signUp.operation.body?.schema == "SignUpRequest")
        #expect(API.signUp.operation.content == .json(schema: "Session"))
        #expect(API.signUp.operation.status == 201)
        #expect(API.queryObjects.operation.content == .json(schema: "QueryResponse"))
        #expect(API.deleteObject.operation.body == nil)
        #expect(API.deleteObject.operation.content == .none)
        #expect(API.deleteObject.operation.status == 204)
        #expect(API.live.operation.webSocket && API.live.operation.status == 101)
        // Errors listed in status order, whatever order they were given in.
        for operation in API.all {
            #expect(operation.errors.map(\.rawValue) == operation.errors.map(\.rawValue).sorted(), "\(operation.id)")
        }
    }

    @Test("paths fill the template's parameters in order, each escaped as one segment")
    func paths() {
        #expect(API.getRole.operation.pathParameters == ["name"])
        #expect(API.getObject.operation.pathParameters == ["datastore", "className", "objectId"])
        #expect(API.push.operation.pathParameters.isEmpty)
        #expect(API.getRole.path("editors") == "/v1/roles/editors")
        #expect(API.push.path() == "/v1/push")
        #expect(
            API.getObject.path(":app", "Game+Score", "a/b=c d")
                == "/v1/datastores/:app/classes/Game%2BScore/objects/a%2Fb%3Dc%20d")
        #expect(API.getRole.path("é?#") == "/v1/roles/%C3%A9%3F%23")
        // A segment of dots alone is encoded whole: nothing on the way may read it as `.` or `..`.
        #expect(APIOperation.escape(".") == "%2E")
        #expect(API.getObject.path(":app", "..", "...") == "/v1/datastores/:app/classes/%2E%2E/objects/%2E%2E%2E")
        #expect(APIOperation.escape("a.b") == "a.b" && APIOperation.escape(".a") == ".a")
        // Every character outside the unreserved set is encoded; those inside are not.
        for scalar in (0x20...0x7E).compactMap(Unicode.Scalar.init) where scalar != "." {
            let escaped = APIOperation.escape(String(scalar))
            let unreserved = CharacterSet(charactersIn: "-._~:").union(.init(charactersIn: "a"..."z"))
                .union(.init(charactersIn: "A"..."Z")).union(.init(charactersIn: "0"..."9"))
            #expect(unreserved.contains(scalar) == (escaped == String(scalar)), "\(scalar): \(escaped)")
            #expect(escaped.removingPercentEncoding == String(scalar))
        }
    }
}
