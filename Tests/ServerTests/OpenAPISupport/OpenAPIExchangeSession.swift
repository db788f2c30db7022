import Foundation
import Hummingbird
import HummingbirdTesting
@testable import RooftopServer
import RooftopShared
import Testing

/// Sends requests to the app through a test client and records every answer, so that the
/// schema checker can validate each against the response documented for its operation and status.
struct OpenAPIExchangeSession {
    let client: any TestClientProtocol
    /// The answers so far.
    private(set) var records: [(label: String, check: OpenAPISchemaChecker.Check)] = []

    init(client: any TestClientProtocol) {
        self.client = client
    }

    /// Headers with the application ID, and a session token or the admin key.
    static func headers(token: String? = nil, admin: Bool = false, appId: String? = OpenAPITestServer.appId) -> HTTPFields {
        var headers = HTTPFields()
        if let appId { headers[RooftopHeader.applicationId] = appId }
        if let token { headers[RooftopHeader.sessionToken] = token }
        if admin { headers[RooftopHeader.adminKey] = OpenAPITestServer.adminKey }
        return headers
    }

    /// Sends a request and records the answer.
    /// - Parameters:
    ///   - template: The documented path template the URI matches.
    ///   - body: A JSON body (an `Encodable` value, or raw JSON as `String`).
    ///   - status: The status the exchange is meant to produce (checked).
    ///   - mediaType: The media type of the answer's body, when it has one (checked).
    /// - Returns: The response body.
    @discardableResult
    mutating func send(
        _ method: HTTPRequest.Method, _ uri: String, template: String, headers: HTTPFields = headers(),
        body: (any Encodable)? = nil, expect status: HTTPResponse.Status, mediaType: String = "application/json",
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Data {
        var headers = headers
        var buffer: ByteBuffer?
        if let body {
            let data = try (body as? String).map { Data($0.utf8) } ?? JSONEncoder().encode(body)
            buffer = ByteBuffer(bytes: data)
            headers[.contentType] = "application/json"
        }
        let response = try await client.execute(uri: uri, method: method, headers: headers, body: buffer)
        let bytes = Data(response.body.readableBytesView)
        #expect(
            response.status == status, "\(method) \(uri): \(String(decoding: bytes, as: UTF8.self))",
            sourceLocation: sourceLocation)
        #expect(response.headers[RooftopHeader.requestId] != nil, "\(method) \(uri) has no request ID", sourceLocation: sourceLocation)
        if !bytes.isEmpty {
            #expect(
                response.headers[.contentType]?.hasPrefix(mediaType) == true,
                "\(method) \(uri) answered \(response.headers[.contentType] ?? "no content type")",
                sourceLocation: sourceLocation)
        }
        records.append(
            (
                "\(method) \(uri)",
                .response(
                    method: method.rawValue.lowercased(), path: template, status: Int(response.status.code), body: bytes,
                    mediaType: mediaType)
            ))
        return bytes
    }

    /// Sends a request and decodes the answer.
    mutating func send<T: Decodable>(
        _ type: T.Type, _ method: HTTPRequest.Method, _ uri: String, template: String, headers: HTTPFields = headers(),
        body: (any Encodable)? = nil, expect status: HTTPResponse.Status,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> T {
        let bytes = try await send(
            method, uri, template: template, headers: headers, body: body, expect: status, sourceLocation: sourceLocation)
        return try JSONDecoder().decode(T.self, from: bytes)
    }
}
