extension RoleInfo {
    /// The most names one list of a role write may hold: a creation's `users` and `roles`, each of
    /// an update's four lists. More is refused with ``RooftopError/Code/sizeLimit``.
    public static let maxNamesPerWrite = 1_000

    /// The most roles a user may hold, directly or through child roles. Each is a principal that
    /// every query, pull and live notification of the user checks; a role write that would give
    /// a user more is refused with ``RooftopError/Code/sizeLimit``.
    public static let maxRolesPerUser = 1_000

    /// Checks that a list of a role write holds at most ``maxNamesPerWrite`` names.
    /// - Throws: ``RooftopError/Code/sizeLimit`` naming the list (`field`).
    public static func validateCount(_ names: [String], field: String) throws(RooftopError) {
        guard names.count <= maxNamesPerWrite else {
            throw RooftopError(
                .sizeLimit, "\(field) lists \(names.count) names; a role write takes at most \(maxNamesPerWrite) per list",
                field: field)
        }
    }

    /// Checks a role name: an ID, not starting with `:`.
    /// - Throws: ``RooftopError/Code/illegalArgument``.
    public static func validateName(_ name: String) throws(RooftopError) {
        guard Identifier.isValid(name), !Identifier.isReserved(name) else {
            throw RooftopError(
                .illegalArgument,
                "invalid role name '\(name.prefix(80))': use 1-64 characters of A-Z a-z 0-9 . - _ + / =, not starting with ':'",
                field: "name")
        }
    }
}
