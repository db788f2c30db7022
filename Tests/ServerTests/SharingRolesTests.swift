import RooftopShared
import RooftopTestSupport
import Testing

@testable import RooftopServer

@Suite("Storage: a datastore's sharing rows")
struct SharingRolesTests {
    @Test("rows that read grant their roles; a row naming an unknown principal or role grants nothing and is logged with why")
    func unreadableRowsAreLogged() throws {
        let logs = CapturedLogs()
        let roles = DatastoreRecord.sharingRoles(
            [
                (principal: "u1", role: "editor"), (principal: "role:Team", role: "viewer"),
                (principal: "role:", role: "viewer"), (principal: "u2", role: "admin"),
            ],
            datastoreKey: 7, logger: logs.logger)
        #expect(roles == [try Principal("u1"): .editor, try Principal("role:Team"): .viewer])
        #expect(logs.records.count == 2)
        #expect(logs.records.allSatisfy { $0.level == .error && $0.metadata["datastore"] == "7" })
        #expect(logs.records.map { $0.metadata["principal"] } == ["role:", "u2"])
        #expect(logs.records[0].metadata["error"] != nil, "the principal's own error is said")
        #expect(logs.records[1].metadata["role"] == "admin")
    }
}
