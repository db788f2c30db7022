import Foundation
import RooftopShared
import Synchronization
import RooftopTestSupport
import Testing

/// `rooftop-server admin`, run as its own process against real servers.
@Suite("Admin CLI", .timeLimit(.minutes(5)))
struct AdminCLITests {
    /// `rooftop-server admin ARGS --server … --admin-key … --ca …` against `server`.
    static func admin(_ server: ServerProcess, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await BackupTests.command(
            ["admin"] + arguments + [
                "--server", server.baseURL, "--admin-key", server.adminKey, "--ca", server.caCertificatePath,
            ])
    }

    /// The objects of an export file, by ID (the header checked).
    static func exported(_ path: String, datastore: DatastoreID) throws -> [String: ObjectSnapshot] {
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        let header = try JSONDecoder().decode(ExportHeaderProbe.self, from: Data(try #require(lines.first).utf8))
        #expect(header.rooftopExport == 1 && header.datastore == datastore.rawValue)
        var objects: [String: ObjectSnapshot] = [:]
        for line in lines.dropFirst() where !line.hasPrefix(#"{"tombstone""#) {
            let object = try JSONDecoder().decode(ObjectSnapshot.self, from: Data(line.utf8))
            objects[object.objectId] = object
        }
        return objects
    }

    struct TailProbe: Decodable {
        var change: String
        var className: String
        var objectId: String
    }

    /// A flag set once, read from another task.
    final class Flag: Sendable {
        private let value = Mutex(false)
        func set() { value.withLock { $0 = true } }
        var isSet: Bool { value.withLock { $0 } }
    }

    struct ExportHeaderProbe: Decodable {
        var rooftopExport: Int
        var datastore: String
    }

    /// Fields of every kind, with the doubles JSON cannot carry plainly.
    static func typedFields(_ index: Int) throws -> [String: Value] {
        [
            "n": .int(Int64(index) - 3), "big": .int(.max), "d": .double(Double(index) / 3),
            "negativeZero": .double(-0.0), "tiny": .double(.leastNonzeroMagnitude), "nan": .double(.nan),
            "infinity": .double(-.infinity), "text": .string("line \(index)\n\"quoted\" ✓"),
            "when": .date(Timestamp(millisecondsSinceEpoch: 1_763_779_346_123 + Int64(index))),
            "photo": .bytes(BinaryValue(Data([0, 1, 255, UInt8(index % 256)]), mimeType: "image/png")),
            "price": .decimal(try DecimalNumber("19.990")), "place": .geoPoint(try GeoPoint(latitude: 40.4, longitude: -3.7)),
            "day": .day(try Day("2026-11-24")), "doc": .json(.object(["a": .array([.int(1), .null])])),
            "tags": .list(["a", .int(2), .list([])]), "author": .pointer(Pointer(className: "_User", objectId: "u1")),
            "members": .relation(Relation(className: "_User", objectIds: ["u2", "u1"])), "none": .null,
        ]
    }

    @Test("export → import into a fresh server → export again: the same objects, typed values bit-exact, ACLs kept")
    func exportImportRoundTrip() async throws {
        let directory = TemporaryDirectory.make(prefix: "admin-cli")
        let first = directory + "/first.ndjson"
        let second = directory + "/second.ndjson"
        let count = 450  // more than two import batches of 200
        var acl = ACL.only("u1")
        acl.setReadAccess(true, for: .role("Readers"))
        try await withServer { source in
            let api = try APIClient(server: source)
            do {
                for index in 0..<count {
                    _ = try await api.create(
                        index % 2 == 0 ? "Thing" : "Other", fields: try Self.typedFields(index),
                        acl: index % 3 == 0 ? acl : nil, objectId: "obj\(index)", admin: true)
                }
                await api.shutdown()
            } catch {
                await api.shutdown()
                throw error
            }
            let export = try await Self.admin(source, ["export", "--out", first])
            #expect(export.status == 0, "\(export.output)")
            #expect(export.output.contains("exported \(count) objects from :app"), "\(export.output)")
        }
        let original = try Self.exported(first, datastore: .app)
        #expect(original.count == count)

        try await withServer { target in
            let imported = try await Self.admin(target, ["import", "--in", first])
            #expect(imported.status == 0, "\(imported.output)")
            #expect(imported.output.contains("imported \(count) objects into :app"), "\(imported.output)")
            let again = try await Self.admin(target, ["export", "--out", second])
            #expect(again.status == 0, "\(again.output)")
        }
        let copied = try Self.exported(second, datastore: .app)
        #expect(copied.count == count)
        for (id, object) in original {
            let copy = try #require(copied[id], "\(id) was not imported")
            #expect(copy.className == object.className)
            #expect(copy.fields == object.fields, "\(id)")
            #expect(copy.acl == object.acl, "\(id)")
            // Value's == lets every NaN equal every NaN: the other doubles are checked bit for bit.
            for name in ["d", "negativeZero", "tiny", "infinity"] {
                #expect(copy.fields[name]?.doubleValue?.bitPattern == object.fields[name]?.doubleValue?.bitPattern)
            }
        }
        #expect(copied["obj0"]?.fields["negativeZero"]?.doubleValue?.sign == .minus)
    }

    @Test("import refuses a file that is no export and names a refused object; empty IDs and misspelled settings are refused")
    func importRefusals() async throws {
        let directory = TemporaryDirectory.make(prefix: "admin-cli")
        let notExport = directory + "/not.ndjson"
        try Data("{\"hello\": 1}\n".utf8).write(to: URL(fileURLWithPath: notExport))
        let badObject = directory + "/bad.ndjson"
        try Data(
            ("{\"rooftopExport\":1,\"datastore\":\":app\",\"exportedAt\":0}\n"
                + "{\"className\":\"Thing\",\"objectId\":\"ok1\",\"datastore\":\":app\",\"fields\":{\"a\":1},\"version\":1}\n"
                + "{\"className\":\"Thing\",\"objectId\":\"bad\",\"datastore\":\":app\",\"fields\":{\"not a name\":1},\"version\":1}\n").utf8
        ).write(to: URL(fileURLWithPath: badObject))
        try await withServer { server in
            let notExportRun = try await Self.admin(server, ["import", "--in", notExport])
            #expect(notExportRun.status != 0)
            #expect(notExportRun.output.contains("not a Rooftop export header"), "\(notExportRun.output)")
            let badRun = try await Self.admin(server, ["import", "--in", badObject])
            #expect(badRun.status != 0)
            #expect(badRun.output.contains("Thing/bad was refused"), "\(badRun.output)")
            let noKey = try await BackupTests.command(["admin", "export", "--server", server.baseURL])
            #expect(noKey.status != 0 && noKey.output.contains("an admin key is needed"), "\(noKey.output)")
            // An empty ID would make an empty path segment, which the router skips (`/v1/users//sessions`
            // read as user "sessions"): refused before anything is sent.
            let empty = try await Self.admin(server, ["users", "sessions", ""])
            #expect(empty.status != 0 && empty.output.contains("needs a non-empty name or ID"), "\(empty.output)")
            // Class settings are read as the server reads them: an unknown member is refused here.
            let settings = directory + "/settings.json"
            try Data(#"{"mergeRule": {"score": "max"}}"#.utf8).write(to: URL(fileURLWithPath: settings))
            let misspelled = try await Self.admin(server, ["classes", "set", "Game", "--file", settings])
            #expect(misspelled.status != 0 && misspelled.output.contains("mergeRule"), "\(misspelled.output)")
        }
    }

    @Test("roles, class settings and datastores through the CLI; tail prints changes as they commit")
    func managementAndTail() async throws {
        try await withServer { server in
            let api = try APIClient(server: server)
            do {
                let user = try await api.newUser("cli")
                let created = try await Self.admin(server, ["roles", "create", "Staff", "--user", user.id])
                #expect(created.status == 0, "\(created.output)")
                let role = try JSONDecoder().decode(RoleInfo.self, from: Data(created.output.utf8))
                #expect(role.name == "Staff" && role.users == [user.id])
                let added = try await Self.admin(server, ["roles", "add", "Staff", "--role", "Admins"])
                #expect(try JSONDecoder().decode(RoleInfo.self, from: Data(added.output.utf8)).roles == ["Admins"])
                #expect(try await Self.admin(server, ["roles", "delete", "Staff"]).status == 0)
                let gone = try await Self.admin(server, ["roles", "get", "Staff"])
                #expect(gone.status != 0 && gone.output.contains("notFound"), "\(gone.output)")

                // Members left out keep their values, as with the REST call.
                let settingsFile = TemporaryDirectory.make(prefix: "admin-cli") + "/settings.json"
                try Data(#"{"mergeRules": {"score": "sum"}}"#.utf8).write(to: URL(fileURLWithPath: settingsFile))
                let set = try await Self.admin(server, ["classes", "set", "Game", "--file", settingsFile])
                #expect(set.status == 0, "\(set.output)")
                let read = try await Self.admin(server, ["classes", "get", "Game"])
                #expect(read.output.contains("\"sum\""), "\(read.output)")

                // Users: created (its sign-up session ended), listed, their sessions listed and
                // ended, their password set.
                let made = try await Self.admin(server, ["users", "create", "--username", "carol", "--password", "first password"])
                #expect(made.status == 0, "\(made.output)")
                let carol = try JSONDecoder().decode(UserInfo.self, from: Data(made.output.utf8))
                let listed = try await Self.admin(server, ["users", "list"])
                let names = try JSONDecoder().decode([UserInfo].self, from: Data(listed.output.utf8)).map(\.username)
                #expect(names.contains("carol") && names.contains(user.username), "\(listed.output)")
                #expect(try await Self.admin(server, ["users", "get", carol.objectId]).output.contains("\"carol\""))
                let none = try await Self.admin(server, ["users", "sessions", carol.objectId])
                #expect(try JSONDecoder().decode(SessionList.self, from: Data(none.output.utf8)).sessions.isEmpty, "\(none.output)")
                let carolSession: Session = try await api.call(
                    API.logIn, body: LogInRequest(username: "carol", password: "first password"))
                let one = try await Self.admin(server, ["users", "sessions", carol.objectId])
                #expect(try JSONDecoder().decode(SessionList.self, from: Data(one.output.utf8)).sessions.count == 1)
                let revoked = try await Self.admin(server, ["users", "revoke", carol.objectId])
                #expect(try JSONDecoder().decode(RevokedSessions.self, from: Data(revoked.output.utf8)).revoked == 1)
                let refused = try await api.send(API.getCurrentUser, token: carolSession.sessionToken)
                #expect(refused.status == 401, "the revoked session is refused")
                let reset = try await Self.admin(server, ["users", "set-password", carol.objectId, "--password", "second password"])
                #expect(reset.status == 0, "\(reset.output)")
                let _: Session = try await api.call(
                    API.logIn, body: LogInRequest(username: "carol", password: "second password"))

                let app = try await Self.admin(server, ["datastores", "get", ":app"])
                #expect(app.status == 0 && app.output.contains("\"usage\""), "\(app.output)")

                // tail --from-start prints the whole feed, in commit order.
                _ = try await api.create("Before", fields: ["n": 0], objectId: "before", admin: true)
                for index in 1...3 {
                    _ = try await api.create("After", fields: ["n": .int(Int64(index))], objectId: "after\(index)", admin: true)
                }
                let whole = try await Self.admin(server, ["tail", "--from-start", "--count", "4", "--interval", "0.1"])
                #expect(whole.status == 0, "\(whole.output)")
                let ids = whole.output.split(separator: "\n").filter { $0.hasPrefix("{") }.map {
                    (try? JSONDecoder().decode(TailProbe.self, from: Data($0.utf8)))?.objectId
                }
                #expect(ids == ["before", "after1", "after2", "after3"], "\(whole.output)")
                #expect(whole.output.contains("following :app from the start"), "\(whole.output)")

                // Without it, only what commits after the tail started: objects are written until
                // the tail has printed one (it skips the existing feed first, at its own pace).
                let finished = Flag()
                let tail = Task {
                    defer { finished.set() }
                    return try await Self.admin(server, ["tail", "--count", "1", "--interval", "0.1"])
                }
                var written = 0
                try await TestWait.until(within: .seconds(60), "the tail to print a change", every: .milliseconds(100)) {
                    guard !finished.isSet else { return true }
                    written += 1
                    _ = try await api.create("Later", fields: ["n": .int(Int64(written))], objectId: "later\(written)", admin: true)
                    return false
                }
                let tailed = try await tail.value
                #expect(tailed.status == 0, "\(tailed.output)")
                let printed = tailed.output.split(separator: "\n").filter { $0.hasPrefix("{") }
                #expect(printed.count == 1, "\(tailed.output)")
                let line = try JSONDecoder().decode(TailProbe.self, from: Data(try #require(printed.first).utf8))
                #expect(line.change == "upsert" && line.className == "Later", "\(tailed.output)")
                #expect(tailed.output.contains("following :app from now on (skipped "), "the skip is said: \(tailed.output)")
                await api.shutdown()
            } catch {
                await api.shutdown()
                throw error
            }
        }
    }
}
