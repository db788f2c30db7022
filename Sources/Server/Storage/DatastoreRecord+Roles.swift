import Logging
import RooftopShared

extension DatastoreRecord {
    /// The sharing roles of a datastore's stored role rows (`datastore_roles`: a principal's text
    /// and a role's name), read by both backends. A row that does not read — a principal or a
    /// role name this server does not know, written by a newer server or damaged — grants
    /// nothing, so that access fails closed, and is logged with its reason (level `error`, the
    /// datastore's key and the row) instead of vanishing: the datastore stays usable by everyone
    /// else it is shared with.
    ///
    /// ```swift
    /// let roles = DatastoreRecord.sharingRoles([("user:u1", "editor")], datastoreKey: 7)
    /// ```
    /// - Parameter logger: Where unreadable rows are reported (default: `rooftop.storage`).
    static func sharingRoles(
        _ rows: [(principal: String, role: String)], datastoreKey: Int64,
        logger: Logger = DatastoreRecord.storageLogger
    ) -> [Principal: SharingRole] {
        var roles: [Principal: SharingRole] = [:]
        for row in rows {
            let principal: Principal
            do {
                principal = try Principal(row.principal)
            } catch {
                logger.error(
                    "a datastore's sharing row names no principal this server reads; it grants nothing",
                    metadata: ["datastore": "\(datastoreKey)", "principal": "\(row.principal)", "error": "\(error)"])
                continue
            }
            guard let role = SharingRole(name: row.role) else {
                logger.error(
                    "a datastore's sharing row names no role this server knows; it grants nothing",
                    metadata: ["datastore": "\(datastoreKey)", "principal": "\(row.principal)", "role": "\(row.role)"])
                continue
            }
            roles[principal] = role
        }
        return roles
    }

    /// The logger of ``sharingRoles(_:datastoreKey:logger:)``, made once (datastores are read on
    /// every write).
    static let storageLogger = Logger(label: "rooftop.storage")
}
