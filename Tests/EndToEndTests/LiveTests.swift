import Foundation
import RooftopShared
import Testing

/// Live notifications over the WebSocket `/v1/live`: subscribing, being told of readable changes,
/// never of unreadable ones, being told when access is lost, and errors that keep the connection.
///
/// "No message" is never asserted by waiting: a readable change is made afterwards, and the first
/// message received must be about it. Its sequence number is known from a second subscriber
/// (the writer) who may read every change, in the same order. The suite is serialized because
/// subscribers to `:app` hear of every readable change there, including other tests' changes.
@Suite("Live notifications", .sharedServer(), .serialized)
struct LiveTests {
    @Test("subscribing with a session token answers subscribed; a readable change is notified")
    func subscribeAndNotify() async throws {
        let (server, client) = try SharedServer.require()
        let reader = try await client.newUser("reader")
        let writer = try await client.newUser("writer")
        try await withLiveClient(server) { live in
            live.send(.subscribe(datastores: [.app], sessionToken: reader.token))
            #expect(try await live.next() == .subscribed(datastores: [.app]))

            let before = try await client.pullAll(.app, as: reader)
            let object = try await client.create(
                Unique.name("Board"), fields: ["n": .int(1)], acl: .of((reader.principal, read: true, write: false), (writer.principal, read: true, write: true)),
                as: writer)
            guard case .changed(let datastore, let sequence) = try await live.next() else {
                Issue.record("expected a changed message")
                return
            }
            #expect(datastore == .app)
            #expect(sequence > 0)
            // The wire form is the documented one.
            let update = try await client.update(object, fields: ["n": .int(2)], as: writer)
            #expect(update.status == 200)
            let text = try await live.nextText()
            #expect(text.contains(#""type":"changed""#), "\(text)")
            #expect(text.contains(#""datastore":":app""#), "\(text)")
            // What the notification announces is what a pull brings.
            let pulled = try await client.pullAll(.app, since: before.checkpoint, as: reader).changes
            #expect(pulled.objectIds.contains(object.objectId))
        }
    }

    @Test(
        "the session token may also come on the upgrade request, in its header or as a bearer token",
        arguments: [false, true])
    func tokenOnUpgrade(asBearer: Bool) async throws {
        let (server, client) = try SharedServer.require()
        let reader = try await client.newUser("reader")
        try await withLiveClient(
            server, sessionToken: asBearer ? nil : reader.token, bearer: asBearer ? reader.token : nil
        ) { live in
            live.send(.subscribe(datastores: [.default], sessionToken: nil))
            #expect(try await live.next() == .subscribed(datastores: [.default]))
            _ = try await client.create(Unique.name("Note"), in: .default, fields: ["n": .int(1)], as: reader)
            guard case .changed(let datastore, _) = try await live.next() else {
                Issue.record("expected a changed message")
                return
            }
            #expect(datastore == .default)
        }
    }

    @Test("a change to an object the subscriber cannot read produces no message")
    func unreadableChangeNotNotified() async throws {
        let (server, client) = try SharedServer.require()
        let reader = try await client.newUser("reader")
        let writer = try await client.newUser("writer")
        let className = Unique.name("Board")
        try await withLiveClient(server) { live in
            try await withLiveClient(server) { oracle in
                try await live.subscribe(to: [.app], as: reader)
                try await oracle.subscribe(to: [.app], as: writer)

                let hidden = try await client.create(className, fields: ["n": .int(1)], as: writer)
                #expect(try await client.update(hidden, fields: ["n": .int(2)], as: writer).status == 200)
                #expect(try await client.delete(hidden, as: writer).status == 204)
                _ = try await client.create(className, fields: ["n": .int(3)], acl: .publicReadWrite, as: writer)

                let writerSequences = try await oracle.changedSequences(count: 4)
                let first = try await live.next()
                #expect(first == .changed(datastore: .app, sequence: writerSequences[3]), "\(writerSequences)")
            }
        }
    }

    @Test("an ACL change that takes the subscriber's access away is notified; later changes are not")
    func accessLossNotified() async throws {
        let (server, client) = try SharedServer.require()
        let reader = try await client.newUser("reader")
        let writer = try await client.newUser("writer")
        let className = Unique.name("Board")
        try await withLiveClient(server) { live in
            try await withLiveClient(server) { oracle in
                try await live.subscribe(to: [.app], as: reader)
                try await oracle.subscribe(to: [.app], as: writer)
                let before = try await client.pullAll(.app, classes: [className], as: reader)

                let object = try await client.create(className, fields: ["n": .int(1)], acl: .publicReadWrite, as: writer)
                let hide = try await client.update(object, fields: [:], acl: .only(writer.id), as: writer)
                #expect(hide.status == 200)
                #expect(try await client.update(object, fields: ["n": .int(2)], as: writer).status == 200)
                _ = try await client.create(className, fields: ["n": .int(3)], acl: .publicReadWrite, as: writer)

                let sequences = try await oracle.changedSequences(count: 4)
                #expect(try await live.next() == .changed(datastore: .app, sequence: sequences[0]))
                #expect(try await live.next() == .changed(datastore: .app, sequence: sequences[1]), "the removal")
                #expect(try await live.next() == .changed(datastore: .app, sequence: sequences[3]), "not the hidden update")
                // And the pull it triggers says what happened.
                let pulled = try await client.pullAll(.app, since: before.checkpoint, classes: [className], as: reader)
                #expect(pulled.changes.kinds(of: object.objectId) == ["removal"])
            }
        }
    }

    @Test("a change in a class whose find permission refuses the subscriber is not notified")
    func classPermissionRespected() async throws {
        let (server, client) = try SharedServer.require()
        let reader = try await client.newUser("reader")
        let writer = try await client.newUser("writer")
        let closed = Unique.name("Closed")
        try await client.setPermissions(ClassPermissions(find: PermissionRule(principals: [writer.principal])), of: closed)
        try await withLiveClient(server) { live in
            try await withLiveClient(server) { oracle in
                try await live.subscribe(to: [.app], as: reader)
                try await oracle.subscribe(to: [.app], as: writer)
                _ = try await client.create(closed, fields: ["n": .int(1)], acl: .publicReadWrite, as: writer)
                _ = try await client.create(Unique.name("Open"), fields: ["n": .int(2)], acl: .publicReadWrite, as: writer)
                let sequences = try await oracle.changedSequences(count: 2)
                #expect(try await live.next() == .changed(datastore: .app, sequence: sequences[1]), "\(sequences)")
            }
        }
    }

    @Test("joining or leaving a role while subscribed changes what is notified at once")
    func roleMembershipFollowed() async throws {
        let (server, client) = try SharedServer.require()
        let reader = try await client.newUser("reader")
        let writer = try await client.newUser("writer")
        let role = Unique.name("Crew")
        try await client.createRole(role)
        let className = Unique.name("Board")
        try await withLiveClient(server) { live in
            try await withLiveClient(server) { oracle in
                try await live.subscribe(to: [.app], as: reader)
                try await oracle.subscribe(to: [.app], as: writer)
                let acl = ACL.of((.role(role), read: true, write: false), (writer.principal, read: true, write: true))
                let object = try await client.create(className, fields: ["n": .int(1)], acl: acl, as: writer)
                try await client.updateRole(role, UpdateRoleRequest(addUsers: [reader.id]))
                #expect(try await client.update(object, fields: ["n": .int(2)], as: writer).status == 200)
                try await client.updateRole(role, UpdateRoleRequest(removeUsers: [reader.id]))
                #expect(try await client.update(object, fields: ["n": .int(3)], as: writer).status == 200)
                _ = try await client.create(className, fields: ["n": .int(4)], acl: .publicReadWrite, as: writer)

                let sequences = try await oracle.changedSequences(count: 4)
                #expect(try await live.next() == .changed(datastore: .app, sequence: sequences[1]), "as a member")
                #expect(try await live.next() == .changed(datastore: .app, sequence: sequences[3]), "no longer a member")
            }
        }
    }

    @Test("losing the role on a shareable datastore ends that subscription with a notFound error")
    func datastoreRoleLossRespected() async throws {
        let (server, client) = try SharedServer.require()
        let owner = try await client.newUser("owner")
        let viewer = try await client.newUser("viewer")
        let datastore = try await client.createShareable(by: owner).id
        #expect(try await client.setRole(.viewer, for: viewer.principal, on: datastore, by: owner).status == 200)
        try await withLiveClient(server) { live in
            try await withLiveClient(server) { oracle in
                try await live.subscribe(to: [datastore, .app], as: viewer)
                try await oracle.subscribe(to: [.app], as: owner)
                _ = try await client.create("Stop", in: datastore, fields: ["n": .int(1)], acl: .publicReadWrite, as: owner)
                guard case .changed(let first, _) = try await live.next() else {
                    Issue.record("expected a changed message")
                    return
                }
                #expect(first == datastore)

                #expect(try await client.setRole(.none, for: viewer.principal, on: datastore, by: owner).status == 200)
                _ = try await client.create("Stop", in: datastore, fields: ["n": .int(2)], acl: .publicReadWrite, as: owner)
                _ = try await client.create(Unique.name("Open"), fields: ["n": .int(3)], acl: .publicReadWrite, as: owner)
                let appSequence = try await oracle.changedSequences(count: 1)[0]
                guard case .error(let error, let about) = try await live.next() else {
                    Issue.record("expected the subscription to end with an error")
                    return
                }
                #expect(error.code == .notFound)
                #expect(about == datastore)
                #expect(try await live.next() == .changed(datastore: .app, sequence: appSequence))
                // Ended for good: a later change there is not announced even if the role comes back.
                #expect(try await client.setRole(.viewer, for: viewer.principal, on: datastore, by: owner).status == 200)
                _ = try await client.create("Stop", in: datastore, fields: ["n": .int(4)], acl: .publicReadWrite, as: owner)
                _ = try await client.create(Unique.name("Open"), fields: ["n": .int(5)], acl: .publicReadWrite, as: owner)
                let next = try await oracle.changedSequences(count: 1)[0]
                #expect(try await live.next() == .changed(datastore: .app, sequence: next))
            }
        }
    }
}
