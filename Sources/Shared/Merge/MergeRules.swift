/// The merge rule of every field: rules set per class and field, and a default for the rest.
///
/// Wire form: `{"default": "remote", "classes": {"Game": {"score": "sum", "best": "max"}}}`;
/// both members are optional when decoding (the default default is ``MergeRule/remote``).
///
/// ```swift
/// var rules = MergeRules()
/// rules.setRule(.max, forClass: "Game", field: "best")
/// rules.rule(forClass: "Game", field: "best")   // .max
/// rules.rule(forClass: "Game", field: "name")   // .remote
/// ```
public struct MergeRules: Hashable, Sendable {
    /// The rule for fields that have none of their own. Default ``MergeRule/remote``.
    public var defaultRule: MergeRule
    /// The rules set explicitly, by class name then field name.
    public var classes: [String: [String: MergeRule]]

    /// Creates rules.
    /// - Parameters:
    ///   - defaultRule: The rule for fields without one (default ``MergeRule/remote``).
    ///   - classes: Rules by class name then field name (default none).
    public init(default defaultRule: MergeRule = .remote, classes: [String: [String: MergeRule]] = [:]) {
        self.defaultRule = defaultRule
        self.classes = classes
    }

    /// The rule that applies to a field of a class: its own, or the default.
    /// - Parameters:
    ///   - className: The class (table) name.
    ///   - field: The field name.
    public func rule(forClass className: String, field: String) -> MergeRule {
        classes[className]?[field] ?? defaultRule
    }

    /// Sets or, with `nil`, clears the rule of a field.
    /// - Parameters:
    ///   - rule: The rule, or `nil` to fall back to the default.
    ///   - className: The class (table) name.
    ///   - field: The field name.
    public mutating func setRule(_ rule: MergeRule?, forClass className: String, field: String) {
        classes[className, default: [:]][field] = rule
        if classes[className]?.isEmpty == true { classes[className] = nil }
    }
}

extension MergeRules: Codable {
    private enum CodingKeys: String, CodingKey {
        case defaultRule = "default"
        case classes
    }

    /// Decodes `{"default": ..., "classes": {...}}`; missing members take their defaults.
    /// - Throws: `DecodingError` for an unknown rule name.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            default: try container.decodeIfPresent(MergeRule.self, forKey: .defaultRule) ?? .remote,
            classes: try container.decodeIfPresent([String: [String: MergeRule]].self, forKey: .classes) ?? [:])
    }

    /// Encodes `{"default": ..., "classes": {...}}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(defaultRule, forKey: .defaultRule)
        try container.encode(classes, forKey: .classes)
    }
}
