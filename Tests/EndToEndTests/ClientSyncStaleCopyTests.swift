import Foundation
import Rooftop
import RooftopShared
import RooftopTestSupport
import Testing

/// Causes of the stale copies the convergence harness found (RELIABILITY.md, bug 2): a change
/// saved on an object instance that a pull has just removed (ruled out: the server refuses it and
/// no copy is left), and a push answer that arrives after a pull removed the object (fixed: the
/// answer no longer puts the object back).
@Suite("Client sync: stale copies")
struct ClientSyncStaleCopyTests {
    @Test("saving an instance a pull removed does not leave a copy the server no longer gives")
    func savingARemovedInstanceLeavesNoStaleCopy() async throws {
        try await withSyncHarness { harness in
            let server = try await harness.startServer()
            let api = try harness.api(server)
            let (owner, guest) = (try await api.newUser("owner"), try await api.newUser("guest"))
            let datastore = try await api.shareableDatastore(owner: owner, sharedWith: [guest])
            let note = try await api.create(
                "Note", in: datastore, fields: ["text": "shared"], acl: .publicReadWrite, as: owner)
            let client = try await harness.client(server, file: harness.cacheFile("guest"))
            try await client.logIn(guest)
            _ = try await client.datastores.open(datastore)
            try await client.sync.pull(datastore: datastore)
            let held = try await client.query("Note", in: datastore).fromLocalDatastore().getObject(note.objectId)

            // The owner takes the guest's read access away; the guest's pull removes its copy.
            let edit = try await api.update(note, fields: [:], acl: .only(owner.id), as: owner)
            #expect(edit.status == 200, "\(edit.text)")
            try await client.sync.pull(datastore: datastore)
            #expect(!(await client.hasLocalCopy("Note", note.objectId, in: datastore)), "the pull removed the copy")

            // The app still holds the instance and saves a change on it.
            held["text"] = "late"
            _ = try await held.saveEventually()
            try await withDeadline(.seconds(30), "the queue to drain") { try await client.outbox.waitUntilIdle() }
            try await client.sync.pull(datastore: datastore)

            let refused = try client.outbox.rejected()
            #expect(refused.count == 1, "the server refused the change: \(refused)")
            let local = try await client.localIds("Note", in: datastore, ignoringACLs: true)
            #expect(local.isEmpty, "the server no longer gives the note to the guest, but the client keeps \(local)")
        }
    }

    @Test("a push answer that arrives after a pull removed or deleted the object does not put it back")
    func lateAnswerAfterRemoval() async throws {
        try await withSyncHarness { harness in
            let server = try await harness.startServer()
            let api = try harness.api(server)
            let (owner, guest) = (try await api.newUser("owner"), try await api.newUser("guest"))
            let datastore = try await api.shareableDatastore(owner: owner, sharedWith: [guest])
            let hidden = try await api.create(
                "Note", in: datastore, fields: ["text": "shared"], acl: .publicReadWrite, as: owner)
            let deleted = try await api.create(
                "Note", in: datastore, fields: ["text": "doomed"], acl: .publicReadWrite, as: owner)
            let (client, gate) = try harness.controlledClient(server, file: harness.cacheFile("guest"))
            try await client.logIn(guest)
            _ = try await client.datastores.open(datastore)
            try await client.sync.pull(datastore: datastore)

            for (note, hide) in [(hidden, true), (deleted, false)] {
                // The guest's edit reaches the server and is applied; its answer is held back.
                gate.holdPushAnswers()
                let held = try await client.query("Note", in: datastore).fromLocalDatastore().getObject(note.objectId)
                held["text"] = "edited by the guest"
                _ = try await held.saveEventually()
                try await TestWait.until("the edit applied, its answer held") { gate.heldPushes == 1 }
                // The owner hides or deletes the note, and the guest's pull removes its copy.
                if hide {
                    let edit = try await api.update(note, fields: [:], acl: .only(owner.id), as: owner)
                    #expect(edit.status == 200, "\(edit.text)")
                } else {
                    let removal = try await api.delete(note, as: owner)
                    #expect(removal.status == 204, "\(removal.text)")
                }
                try await client.sync.pull(datastore: datastore)
                #expect(!(await client.hasLocalCopy("Note", note.objectId, in: datastore)), "the pull removed the copy")

                // Then the edit's answer arrives: acknowledged, but the copy stays gone.
                gate.releasePushes()
                try await withDeadline(.seconds(30), "the queue to drain") { try await client.outbox.waitUntilIdle() }
                let local = try await client.localIds("Note", in: datastore, ignoringACLs: true)
                #expect(!local.contains(note.objectId), "\(hide ? "hidden" : "deleted"): the late answer put the copy back")
                try await client.sync.pull(datastore: datastore)
                #expect(!(await client.hasLocalCopy("Note", note.objectId, in: datastore)))
            }
        }
    }
}
