/// The one error type of Rooftop: a stable ``Code`` that programs switch on, a human-readable
/// message, optional details, and the underlying cause when there is one.
///
/// The code's raw value is what travels on the wire (`{"code": "notFound", "message": "..."}`), so
/// the same codes reach client code whether an error was raised locally or by the server.
///
/// ```swift
/// do {
///     try await query.find()
/// } catch let error as RooftopError where error.code == .noConnection {
///     showOfflineBanner()
/// }
/// ```
public struct RooftopError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is. Stable across releases; new codes may be added.
    public var code: Code
    /// A message for developers, naming what was wrong. Not localized.
    public var message: String
    /// The field, parameter or path the error is about, when there is one.
    public var field: String?
    /// The character offset in a query text where parsing failed, when this is a parse error.
    public var position: Int?
    /// The lower-level error that caused this one, if any. Never sent on the wire.
    public var cause: (any Error)?

    /// Creates an error.
    /// - Parameters:
    ///   - code: The stable code.
    ///   - message: A developer-facing message.
    ///   - field: The field or parameter concerned (default `nil`).
    ///   - position: The offset in a query text (default `nil`).
    ///   - cause: The underlying error (default `nil`).
    public init(
        _ code: Code,
        _ message: String,
        field: String? = nil,
        position: Int? = nil,
        cause: (any Error)? = nil
    ) {
        self.code = code
        self.message = message
        self.field = field
        self.position = position
        self.cause = cause
    }

    /// `code: message`, with the field and position when present.
    public var description: String {
        var text = "\(code.rawValue): \(message)"
        if let field { text += " (field \(field))" }
        if let position { text += " (at offset \(position))" }
        if let cause { text += " [cause: \(cause)]" }
        return text
    }
}

extension RooftopError: Equatable {
    /// Two errors are equal when code, message, field and position are equal; the cause is ignored.
    public static func == (lhs: RooftopError, rhs: RooftopError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message && lhs.field == rhs.field
            && lhs.position == rhs.position
    }
}

extension RooftopError: Codable {
    private enum CodingKeys: String, CodingKey {
        case code, message, field, position
    }

    /// Decodes the wire form `{"code", "message", "field"?, "position"?}`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.code = Code(rawValue: try container.decode(String.self, forKey: .code))
        self.message = try container.decode(String.self, forKey: .message)
        self.field = try container.decodeIfPresent(String.self, forKey: .field)
        self.position = try container.decodeIfPresent(Int.self, forKey: .position)
        self.cause = nil
    }

    /// Encodes the wire form `{"code", "message", "field"?, "position"?}`; the cause is not sent.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(code.rawValue, forKey: .code)
        try container.encode(message, forKey: .message)
        try container.encodeIfPresent(field, forKey: .field)
        try container.encodeIfPresent(position, forKey: .position)
    }
}
