import Foundation

/// Push requests written directly, as a syncing client sends them: `JSONEncoder` took three
/// quarters of the benchmark client's time in a push of 500 creations of five fields
/// (``DocumentReader/readPushRequest()`` is the server's counterpart).
extension DocumentWriter {
    /// A push in ``PushRequest``'s `Codable` form: each change's leading plain sets as `fields`,
    /// as `Codable` writes them (the form the server reads fastest).
    /// - Throws: What `JSONEncoder` throws for the kinds left to it.
    package mutating func pushRequest(_ request: PushRequest) throws {
        raw("{\"mutations\":[")
        for (index, mutation) in request.mutations.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            try self.mutation(mutation, plainFields: true)
        }
        bytes.append(UInt8(ascii: "]"))
        if request.compact { raw(",\"compact\":true") }
        bytes.append(UInt8(ascii: "}"))
    }
}

extension PushRequest {
    /// The request's JSON as a client sends it (``DocumentWriter/pushRequest(_:)``).
    /// - Throws: What `JSONEncoder` throws for the kinds left to it.
    package func encodedBody() throws -> [UInt8] {
        var writer = DocumentWriter(capacity: 256 * max(1, mutations.count))
        try writer.pushRequest(self)
        return writer.bytes
    }
}

/// The JSON body a client sends with a request: a push written directly
/// (``PushRequest/encodedBody()``), anything else by `JSONEncoder` (slashes unescaped).
package enum ClientRequestBody {
    /// `body` as JSON.
    /// - Throws: What `JSONEncoder` throws (a value that cannot be encoded).
    package static func encoded<Body: Encodable>(_ body: Body) throws -> Data {
        if let push = body as? PushRequest { return Data(try push.encodedBody()) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        return try encoder.encode(body)
    }
}
