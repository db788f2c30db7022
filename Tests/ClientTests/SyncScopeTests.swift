@testable import Rooftop
import RooftopShared
import Testing
import RooftopTestSupport

@Suite("Sync scope: classes and queries, narrowing and widening", .timeLimit(.minutes(5)))
struct SyncScopeTests {
    private static let open = QueryPredicate.comparison(field: "done", op: .equal, value: false)

    /// Four tasks (every other one done) and two projects, written as another device of the
    /// client's user.
    private func seed(_ server: RealSyncServer, as client: RooftopClient) async throws
        -> (tasks: [ObjectKey], projects: [ObjectKey])
    {
        let tasks = try await server.seed(4, className: "Task", as: client) { ["done": .bool($0 % 2 == 0)] }
        let projects = try await server.seed(2, className: "Project", as: client)
        return (tasks, projects)
    }

    @Test("a class scope pulls only those classes; widening pulls only the added class from the beginning")
    func classes() async throws {
        try await withRealServer { server in
            let client = try server.client()
            let ann = try await client.signUpForTest("ann")
            let (tasks, projects) = try await seed(server, as: client)
            try await client.sync.pull(datastore: .default, scope: .classes("Task"))
            #expect(server.pulls.last?.classes == ["Task"])
            #expect(try client.storedKeys() == Set(tasks))
            let checkpoint = try client.core.store.checkpoint(scope: ann.objectId, datastore: .default)

            let before = server.pulls.count
            try await client.sync.pull(datastore: .default, scope: SyncScope(classes: ["Task", "Project"]))
            let requests = Array(server.pulls.dropFirst(before))
            #expect(requests.first == PullRequest(datastore: .default, since: nil, classes: ["Project"]), "catch up on the added class")
            #expect(requests.last?.since == checkpoint && requests.last?.classes == ["Project", "Task"])
            #expect(try client.storedKeys() == Set(tasks + projects))

            // The scope is remembered: a pull without one keeps it.
            try await client.sync.pull(datastore: .default)
            #expect(server.pulls.last?.classes == ["Project", "Task"])
        }
    }

    @Test("narrowing drops the local copies that left the scope, except those pinned or with queued changes")
    func narrowing() async throws {
        try await withRealServer { server in
            let client = try server.client()
            _ = try await client.signUpForTest("ann")
            let (tasks, projects) = try await seed(server, as: client)
            try await client.sync.pull(datastore: .default)
            let pinned = client.object("Task", id: tasks[0].objectId, in: .default)
            try await pinned.pin(label: "today")
            try await client.sync.pull(datastore: .default, scope: .classes("Project"))
            #expect(try client.storedKeys() == Set(projects + [tasks[0]]))
            #expect(try pinned.pinLabels() == ["today"])
        }
    }

    @Test("a query scope keeps only matching objects; changing the predicate re-pulls that class")
    func query() async throws {
        try await withRealServer { server in
            let client = try server.client()
            _ = try await client.signUpForTest("ann")
            let (tasks, projects) = try await seed(server, as: client)
            let openTasks = SyncScope(filters: ["Task": Self.open])
            try await client.sync.pull(datastore: .default, scope: openTasks)
            #expect(try client.storedKeys() == Set([tasks[1], tasks[3]] + projects))

            // A task done remotely leaves the scope.
            try await server.update(tasks[1], as: client, [FieldUpdate("done", .set(true))])
            try await client.sync.pull(datastore: .default)
            #expect(try client.storedKeys(className: "Task") == [tasks[3]])

            // Widening (no predicate): the class is pulled again from the beginning.
            let before = server.pulls.count
            try await client.sync.pull(datastore: .default, scope: .everything)
            #expect(server.pulls.dropFirst(before).first == PullRequest(datastore: .default, since: nil, classes: ["Task"]))
            #expect(try client.storedKeys(className: "Task") == Set(tasks))
        }
    }

    @Test("SyncScope.query and transitions")
    func transitions() {
        let scope = SyncScope.query(Query("Task").where(Self.open))
        #expect(scope.classes == ["Task"] && scope.filters["Task"] == Self.open)
        let all = SyncScope.everything
        #expect(scope.transition(from: all) == .init(narrows: true, catchUp: .nothing))
        #expect(all.transition(from: scope) == .init(narrows: false, catchUp: .everything))
        #expect(SyncScope.classes("A", "B").transition(from: .classes("A")) == .init(narrows: false, catchUp: .classes(["B"])))
        #expect(SyncScope.classes("A").transition(from: .classes("A", "B")) == .init(narrows: true, catchUp: .nothing))
        #expect(all.transition(from: all) == .init(narrows: false, catchUp: .nothing))
    }
}
