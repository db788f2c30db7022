import NIOCore
import PostgresNIO

/// A `bytea[]` whose elements may be `NULL`, in the binary format (postgres-nio's own array
/// encoding has no `NULL` elements): for sending rows as arrays to `unnest`.
struct PostgresByteaArray: PostgresNonThrowingEncodable {
    static var psqlType: PostgresDataType { .byteaArray }
    static var psqlFormat: PostgresFormat { .binary }

    let elements: [[UInt8]?]

    init(_ elements: [[UInt8]?]) { self.elements = elements }

    func encode<JSONEncoder: PostgresJSONEncoder>(into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        writeNullableArray(elements, of: .bytea, into: &buffer) { $1.writeBytes($0) }
    }
}

/// A `float8[]` whose elements may be `NULL` (see ``PostgresByteaArray``).
struct PostgresDoubleArray: PostgresNonThrowingEncodable {
    static var psqlType: PostgresDataType { .float8Array }
    static var psqlFormat: PostgresFormat { .binary }

    let elements: [Double?]

    init(_ elements: [Double?]) { self.elements = elements }

    func encode<JSONEncoder: PostgresJSONEncoder>(into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        writeNullableArray(elements, of: .float8, into: &buffer) { $1.writeInteger($0.bitPattern) }
    }
}

/// A `bigint[]` whose elements may be `NULL` (see ``PostgresByteaArray``).
struct PostgresInt8Array: PostgresNonThrowingEncodable {
    static var psqlType: PostgresDataType { .int8Array }
    static var psqlFormat: PostgresFormat { .binary }

    let elements: [Int64?]

    init(_ elements: [Int64?]) { self.elements = elements }

    func encode<JSONEncoder: PostgresJSONEncoder>(into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        writeNullableArray(elements, of: .int8, into: &buffer) { $1.writeInteger($0) }
    }
}

/// A `text[]` whose elements may be `NULL` (see ``PostgresByteaArray``).
struct PostgresTextArray: PostgresNonThrowingEncodable {
    static var psqlType: PostgresDataType { .textArray }
    static var psqlFormat: PostgresFormat { .binary }

    let elements: [String?]

    init(_ elements: [String?]) { self.elements = elements }

    func encode<JSONEncoder: PostgresJSONEncoder>(into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        writeNullableArray(elements, of: .text, into: &buffer) { $1.writeString($0) }
    }
}

/// Writes a one-dimensional array in PostgreSQL's binary format: dimensions, whether it has
/// `NULL`s, the element type, then the length and lower bound, then each element as its length
/// (-1 for `NULL`) and bytes.
private func writeNullableArray<Element>(
    _ elements: [Element?], of type: PostgresDataType, into buffer: inout ByteBuffer,
    _ write: (Element, inout ByteBuffer) -> Void
) {
    buffer.writeInteger(elements.isEmpty ? 0 : 1, as: Int32.self)
    buffer.writeInteger(elements.contains { $0 == nil } ? 1 : 0, as: Int32.self)
    buffer.writeInteger(type.rawValue)
    guard !elements.isEmpty else { return }
    buffer.writeInteger(Int32(truncatingIfNeeded: elements.count))
    buffer.writeInteger(1, as: Int32.self)
    for element in elements {
        guard let element else {
            buffer.writeInteger(-1, as: Int32.self)
            continue
        }
        let lengthIndex = buffer.writerIndex
        buffer.writeInteger(0, as: Int32.self)
        let start = buffer.writerIndex
        write(element, &buffer)
        buffer.setInteger(Int32(truncatingIfNeeded: buffer.writerIndex - start), at: lengthIndex)
    }
}
