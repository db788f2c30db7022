import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import RooftopShared
import Testing

/// Checks for refused requests, and the state checks that prove nothing was written.
enum Refusal {
    /// Expects a client error (4xx, or exactly `status`) with a `{code, message}` body (and
    /// `code`, when given); never a server error.
    static func expect(
        _ reply: APIClient.Reply, _ what: String, status: Int? = nil, code: RooftopError.Code? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let statusOK = status.map { reply.status == $0 } ?? (400..<500).contains(reply.status)
        #expect(statusOK, "\(what): HTTP \(reply.status) \(reply.text.prefix(300))", sourceLocation: sourceLocation)
        guard let error = reply.error else {
            Issue.record("\(what): no {code, message} body: \(reply.text.prefix(300))", sourceLocation: sourceLocation)
            return
        }
        #expect(!error.message.isEmpty, "\(what): empty message", sourceLocation: sourceLocation)
        if let code {
            #expect(error.code == code, "\(what): \(error.code) \(error.message)", sourceLocation: sourceLocation)
        }
    }

    /// Expects either a refusal (as ``expect(_:_:status:code:sourceLocation:)``) or a push that
    /// was read but whose every mutation was rejected, with `code` when given.
    static func expectPushRefused(
        _ reply: APIClient.Reply, _ what: String, code: RooftopError.Code? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard reply.status == 200 else {
            expect(reply, what, sourceLocation: sourceLocation)
            return
        }
        guard let response = try? reply.decode(PushResponse.self) else {
            Issue.record("\(what): undecodable push response \(reply.text.prefix(300))", sourceLocation: sourceLocation)
            return
        }
        for result in response.results {
            #expect(!result.isApplied, "\(what): applied \(result)", sourceLocation: sourceLocation)
            if let code, let error = result.error {
                #expect(error.code == code, "\(what): \(error.code) \(error.message)", sourceLocation: sourceLocation)
            }
        }
    }

    /// Whether a reply is acceptable under any input: below 500, and a `{code, message}` body
    /// with a client-side code when it is an error.
    static func isWellBehaved(_ reply: APIClient.Reply) -> Bool {
        guard reply.status < 500 else { return false }
        guard reply.status >= 400 else { return true }
        guard let error = reply.error, !error.message.isEmpty else { return false }
        return error.code != .internal && error.code != .server
    }
}

extension APIClient {
    /// Everything in a datastore's change feed, as `Class/objectId → version` (tombstones as
    /// negative versions): what a check that "nothing was written" compares.
    func feedState(_ datastore: DatastoreID, token: String?) async throws -> [String: Int64] {
        var state: [String: Int64] = [:]
        for page in try await pullPages(datastore, token: token) {
            for change in page.changes {
                switch change {
                case .upsert(let object): state["\(object.className)/\(object.objectId)"] = object.version
                case .tombstone(let className, let objectId, let version): state["\(className)/\(objectId)"] = -version
                case .removal(let className, let objectId): state["\(className)/\(objectId)"] = nil
                }
            }
        }
        return state
    }

    /// The IDs of the datastores a user has.
    func datastoreIDs(token: String?) async throws -> Set<String> {
        struct List: Decodable { var datastores: [DatastoreInfo] }
        let list = try await call(API.listDatastores, token: token, as: List.self)
        return Set(list.datastores.map(\.id.rawValue))
    }

    /// Sends raw bytes with a chosen content type (or none).
    func sendRaw(
        _ method: HTTPMethod, _ path: String, body: Data?, contentType: String?, token: String?
    ) async throws
        -> Reply
    {
        var request = HTTPClientRequest(url: server.baseURL + path)
        request.method = method
        request.headers.add(name: "X-Rooftop-Application-Id", value: server.appId)
        if let token { request.headers.add(name: "X-Rooftop-Session-Token", value: token) }
        if let contentType { request.headers.add(name: "Content-Type", value: contentType) }
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await http.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 64 * 1024 * 1024)
        return Reply(status: Int(response.status.code), headers: response.headers, body: Data(bytes.readableBytesView))
    }
}

/// The HTTP methods the hostile tests use, printable in messages.
enum HTTPMethodName: String, CustomStringConvertible {
    case post = "POST"
    case patch = "PATCH"
    case put = "PUT"
    case get = "GET"
    case delete = "DELETE"

    var method: HTTPMethod {
        switch self {
        case .post: .POST
        case .patch: .PATCH
        case .put: .PUT
        case .get: .GET
        case .delete: .DELETE
        }
    }

    var description: String { rawValue }
}
