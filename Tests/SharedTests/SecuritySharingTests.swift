import Foundation
import RooftopShared
import Testing

@Suite("Datastore sharing roles")
struct SecuritySharingTests {
    static let shareable = DatastoreID.generateShareable()
    static let ownerContext = AccessContext(userId: "u1")

    @Test func rolesAreOrdered() {
        #expect(SharingRole.none < .viewer && SharingRole.viewer < .editor && SharingRole.editor < .owner)
        #expect(SharingRole.allCases.sorted() == [.none, .viewer, .editor, .owner])
        #expect(!SharingRole.viewer.allows(.update) && SharingRole.viewer.allows(.find))
        #expect(SharingRole.editor.allows(.delete) && !SharingRole.none.allows(.get))
    }

    @Test func effectiveRoleIsTheHighestMatchingPrincipal() throws {
        let sharing = try DatastoreSharing(
            datastore: Self.shareable, owner: "u1",
            roles: [.everyone: .viewer, .user("u2"): .editor, .role("Team"): .editor, .user("u5"): .none])
        #expect(sharing.effectiveRole(for: Self.ownerContext) == .owner)
        #expect(sharing.effectiveRole(for: .anonymous) == .viewer)
        #expect(sharing.effectiveRole(for: AccessContext(userId: "u2")) == .editor)
        #expect(sharing.effectiveRole(for: AccessContext(userId: "u3", roles: ["Team"])) == .editor)
        #expect(sharing.effectiveRole(for: AccessContext(userId: "u4")) == .viewer)
        #expect(sharing.effectiveRole(for: .admin) == .owner)
        #expect(sharing.roles[.user("u5")] == nil)  // none entries are dropped
        // Without a public role, a stranger has none.
        let closed = try DatastoreSharing(datastore: Self.shareable, owner: "u1", roles: [.role("Team"): .viewer])
        #expect(closed.effectiveRole(for: AccessContext(userId: "u4")) == .none)
        #expect(closed.effectiveRole(for: .anonymous) == .none)
        #expect(closed.effectiveRole(for: AccessContext(userId: "u3", roles: ["Team"])) == .viewer)
    }

    @Test func privateAndAppDatastores() throws {
        let mine = try DatastoreSharing(datastore: .default, owner: "u1")
        #expect(mine.effectiveRole(for: Self.ownerContext) == .owner)
        #expect(mine.effectiveRole(for: AccessContext(userId: "u2")) == .none)
        #expect(mine.effectiveRole(for: .anonymous) == .none)
        #expect(!mine.canChangeRoles(Self.ownerContext))
        #expect(DatastoreSharing.app.effectiveRole(for: .anonymous) == .editor)
        #expect(DatastoreSharing.app.effectiveRole(for: AccessContext(userId: "u9")) == .editor)
        #expect(DatastoreSharing.app.owner == nil)
        // Invalid shapes.
        #expect(throws: RooftopError.self) { try DatastoreSharing(datastore: .default, owner: nil) }
        #expect(throws: RooftopError.self) { try DatastoreSharing(datastore: .app, owner: "u1") }
        #expect(throws: RooftopError.self) {
            try DatastoreSharing(datastore: .default, owner: "u1", roles: [.everyone: .viewer])
        }
        #expect(throws: RooftopError.self) {
            try DatastoreSharing(datastore: Self.shareable, owner: "u1", roles: [.user("u2"): .owner])
        }
        #expect(throws: RooftopError.self) {
            try DatastoreSharing(datastore: Self.shareable, owner: "u1", roles: [.user("u1"): .viewer])
        }
    }

    @Test func whoMayChangeRoles() throws {
        var sharing = try DatastoreSharing(
            datastore: Self.shareable, owner: "u1", roles: [.user("ed"): .editor, .user("vi"): .viewer])
        let editor = AccessContext(userId: "ed")
        let viewer = AccessContext(userId: "vi")
        #expect(sharing.canChangeRoles(Self.ownerContext))
        #expect(sharing.canChangeRoles(editor))
        #expect(!sharing.canChangeRoles(viewer))
        #expect(!sharing.canChangeRoles(.anonymous))
        #expect(sharing.canChangeRoles(.admin))

        try sharing.setRole(.viewer, for: .everyone, by: editor)
        #expect(sharing.role(for: .everyone) == .viewer)
        try sharing.setRole(.editor, for: .role("Team"), by: Self.ownerContext)
        #expect(sharing.effectiveRole(for: AccessContext(userId: "t", roles: ["Team"])) == .editor)

        let refused = #expect(throws: RooftopError.self) { try sharing.setRole(.editor, for: .user("vi"), by: viewer) }
        #expect(refused?.code == .disallowed)
        #expect(sharing.role(for: .user("vi")) == .viewer)

        try sharing.removeRole(for: .everyone, by: Self.ownerContext)
        #expect(sharing.role(for: .everyone) == .none)
        #expect(sharing.roles[.everyone] == nil)
    }

    @Test func ownerCannotBeAssignedOrRemoved() throws {
        var sharing = try DatastoreSharing(datastore: Self.shareable, owner: "u1", roles: [.user("ed"): .editor])
        let editor = AccessContext(userId: "ed")
        for (role, principal) in [
            (SharingRole.owner, Principal.user("ed")), (.none, .user("u1")), (.viewer, .user("u1")),
        ] {
            for context in [editor, Self.ownerContext, .admin] {
                let error = #expect(throws: RooftopError.self) {
                    try sharing.setRole(role, for: principal, by: context)
                }
                #expect(error?.code == .invalidOperation)
            }
        }
        #expect(sharing.effectiveRole(for: Self.ownerContext) == .owner)
        #expect(sharing.role(for: .user("ed")) == .editor)
        var mine = try DatastoreSharing(datastore: .default, owner: "u1")
        let error = #expect(throws: RooftopError.self) {
            try mine.setRole(.viewer, for: .everyone, by: Self.ownerContext)
        }
        #expect(error?.code == .invalidOperation)
    }

    @Test func wireForm() throws {
        let sharing = try DatastoreSharing(
            datastore: DatastoreID(".abc"), owner: "u1", roles: [.everyone: .viewer, .role("Team"): .editor])
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let text = String(decoding: try encoder.encode(sharing), as: UTF8.self)
        #expect(text == #"{"datastore":".abc","owner":"u1","roles":{"*":"viewer","role:Team":"editor"}}"#)
        #expect(try JSONDecoder().decode(DatastoreSharing.self, from: Data(text.utf8)) == sharing)
        let badOwner = #"{"datastore":".abc","owner":"u1","roles":{"u1":"viewer"}}"#
        #expect(throws: (any Error).self) { try JSONDecoder().decode(DatastoreSharing.self, from: Data(badOwner.utf8)) }
        let badRole = #"{"datastore":".abc","owner":"u1","roles":{"*":"king"}}"#
        #expect(throws: (any Error).self) { try JSONDecoder().decode(DatastoreSharing.self, from: Data(badRole.utf8)) }
    }
}
