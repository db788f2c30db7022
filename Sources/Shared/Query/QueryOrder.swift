/// One sort key of a ``Query``: a field, ascending or descending.
///
/// Values sort by ``Value/compare(_:_:)``. A missing field sorts before every value ascending (so
/// after every value descending). Wire form: `{"field": "score", "descending": true}`
/// (`descending` optional on decoding, default `false`).
public struct QueryOrder: Hashable, Sendable {
    /// The field sorted on (built-in fields included).
    public var field: String
    /// Whether larger values come first (default `false`).
    public var descending: Bool

    /// Creates a sort key.
    /// - Parameters:
    ///   - field: The field sorted on.
    ///   - descending: Whether larger values come first (default `false`).
    public init(_ field: String, descending: Bool = false) {
        self.field = field
        self.descending = descending
    }
}
