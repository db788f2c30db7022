import RooftopShared

/// A `Codable` type stored as objects of a class: each stored property is a field.
///
/// Properties map to field values as `ValueConvertible` maps Swift values everywhere else, and
/// read back as ``RooftopObject``'s typed accessors read them: `String`, `Bool`, integers up to
/// `Int64` and `UInt32` (`int`; `UInt` and `UInt64` are refused, an `int` being 64-bit signed),
/// `Double` and `Float` (`double`), `Date` (`date`), `Data` (`bytes`), arrays (`list`), nested
/// `Codable` structs (`json`), `Decimal` and the field kinds themselves (`GeoPoint`, `Pointer`,
/// `Day`, `DecimalNumber`, `Value`, ...). An integer reads back only when exact (an `int` of 300
/// is no `Int8`, a `double` of 2.5 no `Int`); a `Float` is the nearest to its `double`. A `nil`
/// optional is an absent field: saving the model unsets it. The built-in fields `objectId`, `createdAt` and `updatedAt` may be
/// declared to read them; they are never written.
///
/// ```swift
/// struct GameScore: RooftopModel {
///     static let className = "GameScore"
///     var objectId = ObjectID.generate()
///     var score: Int
///     var playerName: String
///     var cheatMode = false
///     var updatedAt: Date?
/// }
///
/// try await client.save(GameScore(score: 1337, playerName: "Sean Plott"), eventually: true)
/// let best = try await client.query(GameScore.self).order(by: "score", descending: true).find(as: GameScore.self)
/// ```
public protocol RooftopModel: Codable, Sendable, ValueConvertible {
    /// The class the model's objects belong to.
    static var className: String { get }
    /// The object's ID: generate one for a new model (`ObjectID.generate()`).
    var objectId: String { get }
}

extension RooftopModel {
    /// A pointer to the model's object: storing a model in a field (or comparing a field with it)
    /// uses a pointer, as with a ``RooftopObject``.
    ///
    /// ```swift
    /// try comment.set("author", to: user)                     // user: a model
    /// client.query("Comment").where(Field("author") == user)
    /// ```
    public var rooftopValue: Value { .pointer(pointer) }

    /// A pointer to the model's object.
    public var pointer: Pointer { Pointer(className: Self.className, objectId: objectId) }
}

extension RooftopObject {
    /// The object as a model, read as it reads now (unsaved changes included).
    ///
    /// ```swift
    /// let score = try object.model(as: GameScore.self)
    /// ```
    /// - Throws: `badType` when a field is missing or holds another kind than the property.
    public func model<Model: RooftopModel>(as type: Model.Type) throws -> Model {
        do {
            return try FieldDecoder.decode(type, from: snapshot)
        } catch {
            throw RooftopError(
                .badType, "\(key) does not decode as \(Model.self): \(ModelCoding.describe(error))",
                field: ModelCoding.field(of: error), cause: error)
        }
    }

    /// Sets the object's fields to a model's, as unsaved changes: each field whose value differs
    /// becomes a `set`, and each `nil` optional of the model an `unset` (fields the model does
    /// not declare are left alone).
    /// - Throws: `badType` when the model does not encode as fields (see ``RooftopModel``).
    public func assign<Model: RooftopModel>(_ model: Model) throws {
        let fields: FieldEncoder.Fields
        do {
            fields = try FieldEncoder.encode(model)
        } catch {
            throw RooftopError(
                .badType, "\(Model.self) does not encode as fields: \(ModelCoding.describe(error))",
                field: ModelCoding.field(of: error), cause: error)
        }
        let current = snapshot.fields
        for (name, value) in fields.values.sorted(by: { $0.key < $1.key }) where current[name] != value {
            try apply(FieldUpdate(name, .set(value)))
        }
        for name in fields.absent.sorted() where current[name] != nil {
            try apply(FieldUpdate(name, .unset))
        }
    }
}

extension FetchResult {
    /// The result's objects as models.
    /// - Throws: `badType` for an object that does not decode.
    public func models<Model: RooftopModel>(as type: Model.Type) throws -> [Model] {
        var models: [Model] = []
        models.reserveCapacity(objects.count)
        for object in objects { models.append(try object.model(as: type)) }
        return models
    }
}

/// Messages for coding errors.
enum ModelCoding {
    static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context),
            DecodingError.keyNotFound(_, let context), DecodingError.dataCorrupted(let context):
            context.debugDescription
        case EncodingError.invalidValue(_, let context):
            context.debugDescription
        default:
            "\(error)"
        }
    }

    /// The top-level field a coding error is about.
    static func field(of error: any Error) -> String? {
        switch error {
        case DecodingError.keyNotFound(let key, let context):
            context.codingPath.first?.stringValue ?? key.stringValue
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context),
            DecodingError.dataCorrupted(let context):
            context.codingPath.first?.stringValue
        case EncodingError.invalidValue(_, let context):
            context.codingPath.first?.stringValue
        default:
            nil
        }
    }
}
