import Foundation
import RooftopShared
import Testing

/// The object ACL matrix over REST: for every caller (anonymous, owner, unrelated user, role
/// member, child-role member, granted user, admin) and every kind of ACL, reads show exactly the
/// readable objects and writes succeed exactly on the writable ones. Nothing unreadable leaks: a
/// get answers 404 (not 403), and queries, counts and includes leave such objects out.
@Suite("Access: object ACLs for every caller", .sharedServer())
struct AccessObjectTests {
    @Test("get: readable objects answer 200; unreadable ones 404, exactly like a missing object")
    func get() async throws {
        let (_, client) = try SharedServer.require()
        let matrix = try await AccessMatrix.make(client)
        let className = Unique.name("Doc")
        let objects = try await matrix.createObjects(in: className)
        var missing = try #require(objects[.publicRead])
        missing.objectId = ObjectID.generate()
        for caller in Caller.allCases {
            let absent = try await matrix.get(missing, as: caller)
            #expect(absent.status == 404)
            for (kind, object) in objects {
                let reply = try await matrix.get(object, as: caller)
                if kind.readers.contains(caller) {
                    #expect(reply.status == 200, "\(caller) reading \(kind): \(reply.text)")
                    #expect(try reply.decode(ObjectWithIncludes.self).object.fields["kind"] == .string(kind.rawValue))
                } else {
                    #expect(reply.status == 404, "\(caller) reading \(kind): \(reply.text)")
                    #expect(reply.error?.code == .notFound)
                    // Same answer as for an object that does not exist, apart from the ID.
                    #expect(
                        reply.error?.message.replacingOccurrences(of: object.objectId, with: "ID")
                            == absent.error?.message.replacingOccurrences(of: missing.objectId, with: "ID"))
                }
            }
        }
    }

    @Test("query and count: results, totalCount and count hold exactly the readable objects")
    func queryAndCount() async throws {
        let (_, client) = try SharedServer.require()
        let matrix = try await AccessMatrix.make(client)
        let className = Unique.name("Doc")
        let objects = try await matrix.createObjects(in: className)
        for caller in Caller.allCases {
            let expected = Set(objects.filter { $0.key.readers.contains(caller) }.map(\.value.objectId))
            let all = try await matrix.find(Query(className), as: caller)
            #expect(all.ids == expected, "\(caller)")
            #expect(all.totalCount == expected.count, "\(caller)")
            // A page smaller than the result still counts only readable objects.
            let page = try await matrix.find(Query(className).order(by: "kind").limit(1), as: caller)
            #expect(page.objects.count == min(1, expected.count))
            #expect(page.totalCount == expected.count, "\(caller)")
            #expect(try await matrix.count(Query(className), as: caller) == expected.count, "\(caller)")
            // A query aimed at one unreadable object finds nothing, and counts nothing.
            for (kind, object) in objects where !kind.readers.contains(caller) {
                let aimed = Query(className).where(.comparison(field: "objectId", op: .equal, value: .string(object.objectId)))
                #expect(try await matrix.find(aimed, as: caller).objects.isEmpty)
                #expect(try await matrix.count(aimed, as: caller) == 0)
            }
        }
    }

    @Test("includes: a pointer target the caller cannot read is left out, on queries and on gets")
    func includes() async throws {
        let (_, client) = try SharedServer.require()
        let matrix = try await AccessMatrix.make(client)
        let targets = try await matrix.createObjects(in: Unique.name("Target"))
        let holderClass = Unique.name("Holder")
        // One public holder per kind, pointing at that kind's target.
        var holders: [ObjectKind: ObjectSnapshot] = [:]
        for (kind, target) in targets {
            holders[kind] = try await client.create(
                holderClass, fields: ["ref": .pointer(target.pointer), "kind": .string(kind.rawValue)],
                acl: .of((.everyone, read: true, write: false)), as: matrix.owner)
        }
        for caller in Caller.allCases {
            let expected = Set(targets.filter { $0.key.readers.contains(caller) }.map(\.value.objectId))
            let result = try await matrix.find(Query(holderClass).including("ref"), as: caller)
            #expect(result.objects.count == ObjectKind.allCases.count, "\(caller) sees every public holder")
            #expect(Set(result.included.map(\.objectId)) == expected, "\(caller)")
            for (kind, holder) in holders {
                let reply = try await matrix.get(holder, include: "ref", as: caller)
                #expect(reply.status == 200)
                let included = try reply.decode(ObjectWithIncludes.self).included.map(\.objectId)
                #expect(included == (kind.readers.contains(caller) ? [targets[kind]?.objectId] : []), "\(caller) \(kind)")
            }
        }
    }

    @Test("update: writable objects accept it; readable but not writable ones 403; unreadable ones 404, as missing ones")
    func update() async throws {
        let (_, client) = try SharedServer.require()
        let matrix = try await AccessMatrix.make(client)
        let className = Unique.name("Doc")
        let objects = try await matrix.createObjects(in: className)
        var missing = try #require(objects[.publicRead])
        missing.objectId = ObjectID.generate()
        for caller in Caller.allCases {
            let absent = try await matrix.update(missing, fields: ["by": .string(caller.rawValue)], as: caller)
            #expect(absent.status == 404, "\(caller) updating a missing object: \(absent.text)")
            for (kind, object) in objects {
                let reply = try await matrix.update(object, fields: ["by": .string(caller.rawValue)], as: caller)
                if kind.writers.contains(caller) {
                    #expect(reply.status == 200, "\(caller) updating \(kind): \(reply.text)")
                } else if kind.readers.contains(caller) {
                    #expect(reply.status == 403, "\(caller) updating \(kind): \(reply.text)")
                    #expect(reply.error?.code == .disallowed)
                } else {
                    #expect(reply.status == 404, "\(caller) updating \(kind): \(reply.text)")
                    #expect(reply.error?.code == .notFound)
                }
            }
        }
        // The refused updates changed nothing: one version per accepted update.
        for (kind, object) in objects {
            let stored = try await matrix.get(object, as: .admin).decode(ObjectWithIncludes.self).object
            #expect(stored.version == object.version + Int64(kind.writers.count), "\(kind)")
        }
    }

    @Test("push: each mutation gets the decision a REST write gets (applied, disallowed, or notFound)")
    func push() async throws {
        let (_, client) = try SharedServer.require()
        let matrix = try await AccessMatrix.make(client)
        let className = Unique.name("Doc")
        let objects = try await matrix.createObjects(in: className)
        for caller in Caller.allCases {
            let kinds = ObjectKind.allCases
            let mutations = kinds.compactMap { kind in
                objects[kind].map { object in
                    Mutation(
                        datastore: .app, className: className, objectId: object.objectId,
                        change: .update([FieldUpdate("by", .set(.string(caller.rawValue)))]))
                }
            }
            let response: PushResponse = try await client.call(
                API.push, body: PushRequest(mutations: mutations), token: matrix.user(caller)?.token,
                admin: caller == .admin)
            #expect(response.results.count == kinds.count)
            for (kind, result) in zip(kinds, response.results) {
                if kind.writers.contains(caller) {
                    #expect(result.isApplied, "\(caller) pushing to \(kind): \(result)")
                } else {
                    let expected: RooftopError.Code = kind.readers.contains(caller) ? .disallowed : .notFound
                    #expect(result.error?.code == expected, "\(caller) pushing to \(kind): \(result)")
                }
            }
        }
    }

    @Test("an include path stops at an object the caller cannot read, even when what lies behind it is public")
    func includeThroughUnreadable() async throws {
        let (_, client) = try SharedServer.require()
        let matrix = try await AccessMatrix.make(client)
        let publicACL = ACL.of((.everyone, read: true, write: false))
        let leaf = try await client.create(Unique.name("Leaf"), fields: ["n": .int(1)], acl: publicACL, as: matrix.owner)
        let middle = try await client.create(
            Unique.name("Middle"), fields: ["next": .pointer(leaf.pointer)], acl: .only(matrix.owner.id), as: matrix.owner)
        let root = try await client.create(
            Unique.name("Root"), fields: ["next": .pointer(middle.pointer)], acl: publicACL, as: matrix.owner)
        let query = Query(root.className).including("next", "next")
        let asOther = try await matrix.find(query, as: .other)
        #expect(asOther.ids == [root.objectId])
        #expect(asOther.included.isEmpty, "\(asOther.included.map(\.className))")
        let asOwner = try await matrix.find(query, as: .owner)
        #expect(Set(asOwner.included.map(\.objectId)) == [middle.objectId, leaf.objectId])
    }

    @Test("an update cannot change the ACL without write access, and an ACL change takes effect at once")
    func aclChange() async throws {
        let (_, client) = try SharedServer.require()
        let matrix = try await AccessMatrix.make(client)
        let object = try await client.create(
            Unique.name("Doc"), fields: ["n": .int(1)], acl: matrix.acl(.publicRead), as: matrix.owner)
        let grab = try await matrix.update(object, fields: [:], acl: .publicReadWrite, as: .other)
        #expect(grab.status == 403)
        #expect(try await matrix.get(object, as: .other).status == 200)
        let hide = try await matrix.update(object, fields: [:], acl: .only(matrix.owner.id), as: .owner)
        #expect(hide.status == 200, "\(hide.text)")
        #expect(try await matrix.get(object, as: .other).status == 404)
        #expect(try await matrix.get(object, as: .anonymous).status == 404)
        #expect(try await matrix.get(object, as: .owner).status == 200)
    }

    @Test("delete: writable objects are deleted; readable but not writable ones 403; unreadable ones 404, as missing ones")
    func delete() async throws {
        let (_, client) = try SharedServer.require()
        let matrix = try await AccessMatrix.make(client)
        for caller in Caller.allCases {
            let objects = try await matrix.createObjects(in: Unique.name("Doc"))
            var missing = try #require(objects[.publicRead])
            missing.objectId = ObjectID.generate()
            let absent = try await matrix.delete(missing, as: caller)
            #expect(absent.status == 404, "\(caller) deleting a missing object: \(absent.text)")
            for (kind, object) in objects {
                let reply = try await matrix.delete(object, as: caller)
                let after = try await matrix.get(object, as: .admin)
                if kind.writers.contains(caller) {
                    #expect(reply.status == 204, "\(caller) deleting \(kind): \(reply.text)")
                    #expect(after.status == 404)
                } else {
                    if kind.readers.contains(caller) {
                        #expect(reply.status == 403, "\(caller) deleting \(kind): \(reply.text)")
                        #expect(reply.error?.code == .disallowed)
                    } else {
                        #expect(reply.status == 404, "\(caller) deleting \(kind): \(reply.text)")
                        #expect(reply.error?.code == .notFound)
                    }
                    #expect(after.status == 200, "\(caller) must not have deleted \(kind)")
                }
            }
        }
    }

    @Test("remove by query removes only the objects the caller may write")
    func removeByQuery() async throws {
        let (_, client) = try SharedServer.require()
        let matrix = try await AccessMatrix.make(client)
        for caller in Caller.allCases where caller != .admin && caller != .anonymous {
            let className = Unique.name("Doc")
            let objects = try await matrix.createObjects(in: className)
            let user = try #require(matrix.user(caller))
            let removed = try await client.remove(Query(className), as: user)
            let writable = objects.filter { $0.key.writers.contains(caller) }
            #expect(removed == writable.count, "\(caller)")
            let left = try await matrix.find(Query(className), as: .admin).ids
            #expect(left == Set(objects.filter { !$0.key.writers.contains(caller) }.map(\.value.objectId)), "\(caller)")
        }
        // Anonymous callers can write nothing of the matrix; the admin key removes everything.
        let className = Unique.name("Doc")
        let objects = try await matrix.createObjects(in: className)
        let anonymous: RemoveResponse = try await client.call(
            .POST, "/v1/datastores/:app/remove", body: RemoveRequest(query: .query(Query(className))))
        #expect(anonymous.removed == 0)
        let admin: RemoveResponse = try await client.call(
            .POST, "/v1/datastores/:app/remove", body: RemoveRequest(query: .query(Query(className))), admin: true)
        #expect(admin.removed == objects.count)
    }

    @Test("create with a taken ID: exists only for callers who may read the object; others refused as for any create")
    func createWithTakenID() async throws {
        let (_, client) = try SharedServer.require()
        let matrix = try await AccessMatrix.make(client)
        let className = Unique.name("Doc")
        let objects = try await matrix.createObjects(in: className)
        for caller in Caller.allCases {
            for (kind, object) in objects {
                let reply = try await client.send(
                    .POST, APIClient.objectPath(.app, className),
                    body: ObjectWriteBody(objectId: object.objectId, fields: ["kind": "taken"], acl: nil),
                    token: matrix.user(caller)?.token, admin: caller == .admin)
                if kind.readers.contains(caller) {
                    #expect(reply.status == 409, "\(caller) creating over \(kind): \(reply.text)")
                    #expect(reply.error?.code == .exists)
                } else {
                    #expect(reply.status == 403, "\(caller) creating over \(kind): \(reply.text)")
                    #expect(reply.error?.code == .disallowed)
                    #expect(reply.error?.code != .exists)
                    #expect(reply.error?.message.contains("ACL") == false, "\(reply.text)")
                }
            }
        }
        // Nothing was overwritten.
        for (kind, object) in objects {
            let reply = try await matrix.get(object, as: .owner)
            #expect(try reply.decode(ObjectWithIncludes.self).object.fields["kind"] == .string(kind.rawValue))
            #expect(try reply.decode(ObjectWithIncludes.self).object.version == object.version)
        }
    }
}

extension AccessObjectTests {
    @Test("an anonymous write may only set an ACL the public may read; a signed-in one may set any")
    func anonymousHiddenObjects() async throws {
        let (_, client) = try SharedServer.require()
        let className = Unique.name("Litter")
        let hidden = ACL()
        let writeOnly = ACL([.everyone: ACL.Access(write: true)])
        let nobodysName = ACL([.user("zz-nobody"): ACL.Access(read: true, write: true)])
        for acl in [hidden, writeOnly, nobodysName] {
            let create = try await client.send(
                .POST, APIClient.objectPath(.app, className), body: ObjectWriteBody(fields: ["n": 1], acl: acl))
            #expect(create.status == 403 && create.error?.code == .disallowed, "\(create.text.prefix(200))")
            let pushed = try await client.push(Mutations.create(.app, className, fields: ["n": 1], acl: acl), token: nil)
            #expect(pushed.error?.code == .disallowed)
        }
        #expect(try await client.sendCount(Query(className), admin: true).decode(CountResponse.self).count == 0, "nothing written")
        let readable = try await client.send(
            .POST, APIClient.objectPath(.app, className), body: ObjectWriteBody(fields: ["n": 1], acl: .publicReadWrite))
        #expect(readable.status == 201, "\(readable.text.prefix(200))")
        let user = try await client.newUser("reporter")
        let own = try await client.create(className, fields: ["n": 2], acl: hidden, as: user)
        #expect(own.acl == hidden, "a signed-in user may make an object only the admin reads")
    }
}
