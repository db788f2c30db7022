import Foundation
import Rooftop
import RooftopShared
import RooftopTestSupport
import Testing

/// The server keeps sync history for a bounded time (`--history-retention`); a client whose
/// checkpoint the history has moved past pulls again from scratch, by itself, and drops the
/// copies of objects deleted meanwhile (their tombstones were swept, so no pull can send them).
@Suite("Client sync: history retention")
struct ClientSyncRetentionTests {
    @Test("a checkpoint older than the server's history: the client starts over and drops what was deleted meanwhile")
    func startsOverAfterTheSweep() async throws {
        try await withSyncHarness { harness in
            let server = try await harness.startServer(
                extraArguments: ["--history-retention", "1s", "--history-sweep-interval", "0.2"])
            let api = try harness.api(server)
            let owner = try await api.newUser("owner")
            let datastore = try await api.shareableDatastore(owner: owner, sharedWith: [])
            let kept = try await api.create("Note", in: datastore, fields: ["text": "kept"], as: owner)
            let doomed = try await api.create("Note", in: datastore, fields: ["text": "doomed"], as: owner)
            let client = try await harness.client(server, file: harness.cacheFile("owner"))
            try await client.logIn(owner)
            _ = try await client.datastores.open(datastore)
            try await client.sync.pull(datastore: datastore)
            #expect(try await client.localIds("Note", in: datastore) == [kept.objectId, doomed.objectId])

            // A checkpoint as old as the client's, then the delete the client has not pulled.
            let early = try await api.pull(PullRequest(datastore: datastore), token: owner.token)
            let deletion = try await api.delete(doomed, as: owner)
            #expect(deletion.status == 204, "\(deletion.text)")
            try await TestWait.until(within: .seconds(30), "the history to move past the checkpoint", every: .milliseconds(100)) {
                let reply = try await api.send(
                    API.pull, body: PullRequest(datastore: datastore, since: early.checkpoint), token: owner.token)
                if reply.status == 410 {
                    #expect(reply.error?.code == .historyExpired, "\(reply.text)")
                    return true
                }
                #expect(reply.status == 200, "\(reply.text)")
                return false
            }
            // The delete's tombstone goes too, once it is older than the history (the sweep that
            // passed the checkpoint may have run before the delete was a second old): then only
            // starting over tells the client.
            try await TestWait.until("the delete's tombstone to be swept") {
                let fresh = try await api.pull(PullRequest(datastore: datastore), token: owner.token).changes.map(\.objectId)
                #expect(fresh == [kept.objectId] || fresh == [kept.objectId, doomed.objectId], "only the tombstone may linger")
                return fresh == [kept.objectId]
            }

            try await client.sync.pull(datastore: datastore)
            #expect(try await client.localIds("Note", in: datastore) == [kept.objectId])
            // And the checkpoint it holds now is accepted: the next pull is an ordinary one.
            let later = try await api.create("Note", in: datastore, fields: ["text": "later"], as: owner)
            try await client.sync.pull(datastore: datastore)
            #expect(try await client.localIds("Note", in: datastore) == [kept.objectId, later.objectId])
        }
    }
}
