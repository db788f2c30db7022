import Foundation
import Logging
import RooftopShared
import Synchronization

/// Typed accessors: a field's value as a Swift type, `nil` when absent or of another kind.
extension RooftopObject {
    /// A string field.
    public func string(_ field: String) -> String? { self[field]?.stringValue }
    /// An int field.
    public func int(_ field: String) -> Int64? { self[field]?.intValue }
    /// A number field (int or double) as a `Double`.
    public func double(_ field: String) -> Double? { self[field]?.doubleValue }
    /// A bool field.
    public func bool(_ field: String) -> Bool? { self[field]?.boolValue }
    /// A date field.
    public func date(_ field: String) -> Date? { self[field]?.dateValue?.date }
    /// A day field.
    public func day(_ field: String) -> Day? { self[field]?.dayValue }
    /// A list field.
    public func list(_ field: String) -> [Value]? { self[field]?.listValue }
    /// A geo point field.
    public func geoPoint(_ field: String) -> GeoPoint? { self[field]?.geoPointValue }
    /// A JSON field.
    public func json(_ field: String) -> JSONValue? { self[field]?.jsonValue }
    /// A bytes field.
    public func bytes(_ field: String) -> BinaryValue? { self[field]?.bytesValue }
    /// A decimal field.
    public func decimal(_ field: String) -> DecimalNumber? { self[field]?.decimalValue }
    /// A pointer field, as the pointer itself (``object(_:)`` gives the object it points to).
    public func pointer(_ field: String) -> Pointer? { self[field]?.pointerValue }
    /// A relation field.
    public func relation(_ field: String) -> Relation? { self[field]?.relationValue }
    /// A field as any Swift type that reads from a value (`Int`, `Decimal`, `URL`, `[String]`, …),
    /// `nil` when it is absent or holds another kind.
    ///
    /// ```swift
    /// let price = object.value("price", as: Decimal.self)
    /// ```
    public func value<T: LosslessValueConvertible>(_ field: String, as type: T.Type = T.self) -> T? {
        self[field].flatMap(T.init(rooftopValue:))
    }
}
