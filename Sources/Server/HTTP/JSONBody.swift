import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import RooftopShared

/// JSON responses.
enum JSONBody {
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// A response with `value` as its JSON body.
    static func response<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok) throws -> Response {
        let data = try encoder.encode(value)
        return Response(
            status: status,
            headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

/// Reading JSON request bodies within the limits: body size, then nesting depth (checked on the
/// raw bytes before any decoding), then the types.
enum RequestBody {
    /// Decodes the request's JSON body.
    /// - Throws: `sizeLimit` for a body over `limits.maxRequestBodyBytes`, `request` for malformed
    ///   or too deeply nested JSON and for wrong types, with the path of the offending member.
    static func decode<T: Decodable>(_ type: T.Type, from request: Request, limits: Limits) async throws -> T {
        var request = request
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: limits.maxRequestBodyBytes)
        } catch {
            throw RooftopError(
                .sizeLimit, "the request body is over \(limits.maxRequestBodyBytes) bytes", cause: error)
        }
        let bytes = Array(buffer.readableBytesView)
        guard !bytes.isEmpty else { throw RooftopError(.request, "the request needs a JSON body") }
        let depth = nestingDepth(of: bytes)
        guard depth <= limits.maxRequestNestingDepth else {
            throw RooftopError(
                .request, "the JSON body is nested \(depth) levels deep; the limit is \(limits.maxRequestNestingDepth)")
        }
        do {
            return try JSONDecoder().decode(type, from: Data(bytes))
        } catch let error as DecodingError {
            throw describe(error)
        }
    }

    /// The deepest nesting of arrays and objects, skipping strings.
    static func nestingDepth(of bytes: [UInt8]) -> Int {
        var depth = 0
        var deepest = 0
        var inString = false
        var escaped = false
        for byte in bytes {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                deepest = max(deepest, depth)
            case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
            default: break
            }
        }
        return deepest
    }

    /// A `request` error naming what was wrong and where.
    static func describe(_ error: DecodingError) -> RooftopError {
        func path(_ codingPath: [any CodingKey]) -> String {
            let text = codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return text.isEmpty ? "the body" : String(text.drop { $0 == "." })
        }
        switch error {
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty, context.underlyingError != nil {
                return RooftopError(.request, "the body is not valid JSON")
            }
            if let cause = context.underlyingError as? RooftopError {
                return RooftopError(cause.code, "\(path(context.codingPath)): \(cause.message)", field: cause.field)
            }
            return RooftopError(.request, "\(path(context.codingPath)): \(context.debugDescription)")
        case .keyNotFound(let key, let context):
            return RooftopError(.request, "\(path(context.codingPath + [key])) is required")
        case .typeMismatch(let type, let context):
            return RooftopError(.request, "\(path(context.codingPath)) has the wrong type (expected \(type))")
        case .valueNotFound(let type, let context):
            return RooftopError(.request, "\(path(context.codingPath)) must not be null (expected \(type))")
        @unknown default:
            return RooftopError(.request, "the body could not be decoded")
        }
    }
}
