extension RoleInfo {
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
