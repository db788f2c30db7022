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

    /// A response with a JSON body written by a ``DocumentWriter``.
    static func response(_ writer: DocumentWriter, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status,
            headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: writer.bytes)))
    }

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
    /// - Parameter fast: A direct reader for the body's common shapes (``DocumentReader``), tried
    ///   first; `Codable` decides whatever it leaves (default none: `Codable` alone).
    static func decode<T: Decodable>(
        _ type: T.Type, from request: Request, limits: Limits,
        fast: ((inout DocumentReader) throws -> T)? = nil
    ) async throws -> T {
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
        let shape = scan(bytes)
        guard shape.depth <= limits.maxRequestNestingDepth else {
            throw RooftopError(
                .request,
                "the JSON body is nested \(shape.depth) levels deep; the limit is \(limits.maxRequestNestingDepth)")
        }
        // Foundation's decoder is lenient where JSON is not: it takes trailing commas, and it
        // skips the strings of members nobody reads without checking their encoding.
        if let offset = shape.trailingCommaOffset {
            throw RooftopError(.request, "the body is not valid JSON: trailing comma at byte \(offset)")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw RooftopError(.request, "the body is not valid UTF-8")
        }
        if let fast, let value = try? DocumentReader.read(text, fast) { return value }
        do {
            return try JSONDecoder().decode(type, from: Data(bytes))
        } catch let error as DecodingError {
            throw describe(error)
        }
    }

    /// The deepest nesting of arrays and objects, skipping strings.
    static func nestingDepth(of bytes: [UInt8]) -> Int {
        scan(bytes).depth
    }

    /// One pass over the raw bytes, outside strings: the deepest nesting of arrays and objects,
    /// and the offset of the first comma directly followed (but for white space) by `]` or `}`.
    static func scan(_ bytes: [UInt8]) -> (depth: Int, trailingCommaOffset: Int?) {
        var depth = 0
        var deepest = 0
        var inString = false
        var escaped = false
        var lastComma: Int?
        var trailingComma: Int?
        for (offset, byte) in bytes.enumerated() {
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
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                continue
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                deepest = max(deepest, depth)
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                depth -= 1
                if trailingComma == nil, let lastComma { trailingComma = lastComma }
            default: break
            }
            lastComma = byte == UInt8(ascii: ",") ? offset : nil
        }
        return (deepest, trailingComma)
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
