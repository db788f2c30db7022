import RooftopShared
import Synchronization
import Testing

@testable import RooftopServer

/// The permission caches (``RoleDirectory``, ``ClassDirectory``) never put back what a change
/// replaced, and the class cache stays bounded whatever names are asked about.
///
/// A load is held back at a ``LoadGate`` while the test changes the "database" and invalidates
/// the cache, then let go: the order is forced, no timing is involved.
@Suite("Permission caches: versioned and bounded")
struct PermissionCacheTests {
    /// A value shared with `@Sendable` closures: the test's "database".
    final class Shared<Value: Sendable>: Sendable {
        private let mutex: Mutex<Value>
        init(_ value: Value) { mutex = Mutex(value) }
        var value: Value { mutex.withLock { $0 } }
        func set(_ value: Value) { mutex.withLock { $0 = value } }
        func update(_ body: @Sendable (inout Value) -> Void) { mutex.withLock { body(&$0) } }
    }

    /// Holds back the first load that passes it until ``open()``; later loads pass freely.
    actor LoadGate {
        private var arrived = false
        private var opened = false
        private var held: CheckedContinuation<Void, Never>?
        private var arrivalWaiters: [CheckedContinuation<Void, Never>] = []

        /// Called by a load: the first one waits until the gate opens.
        func pass() async {
            if arrived || opened { return }
            arrived = true
            for waiter in arrivalWaiters { waiter.resume() }
            arrivalWaiters = []
            await withCheckedContinuation { held = $0 }
        }

        /// Returns once the first load is held at the gate.
        func waitForArrival() async {
            if arrived { return }
            await withCheckedContinuation { arrivalWaiters.append($0) }
        }

        /// Lets the held load go on.
        func open() {
            opened = true
            held?.resume()
            held = nil
        }
    }

    @Test("roles: a graph loaded before a revocation is not cached after it")
    func roleGraphAfterRevocation() async throws {
        let stored = Shared(RoleGraph(users: ["Admins": ["u1"]]))
        let gate = LoadGate()
        let directory = RoleDirectory {
            let graph = stored.value  // read before the revocation...
            await gate.pass()  // ...and stored after it, without the fix
            return graph
        }
        let early = Task { try await directory.graph() }
        await gate.waitForArrival()
        // The revocation commits and invalidates while the load is under way.
        stored.set(RoleGraph(users: ["Admins": []]))
        directory.invalidate()
        await gate.open()
        _ = try await early.value
        #expect(try await directory.effectiveRoles(ofUser: "u1").isEmpty, "the revoked membership is not back")
        #expect(try await directory.graph() == RoleGraph(users: ["Admins": []]))
    }

    @Test("classes: settings loaded before a change are not cached after it")
    func classSettingsAfterChange() async throws {
        let open = ClassSettings(className: "Doc")
        let closed = {
            var settings = open
            settings.permissions.get = .nobody
            return settings
        }()
        let stored = Shared<[String: ClassSettings]>(["Doc": open])
        let gate = LoadGate()
        let directory = Self.gatedDirectory(stored, gate)
        let early = Task { try await directory.settings(of: "Doc") }
        await gate.waitForArrival()
        // Another server process closes `get` and tells this one (ClusterLink): forget.
        stored.update { $0["Doc"] = closed }
        await directory.forget("Doc")
        await gate.open()
        #expect(try await early.value == open, "the early caller gets what it read")
        #expect(try await directory.permissions(of: "Doc").get == .nobody, "the revoked permission stays revoked")
    }

    /// A class directory over `stored` whose loads wait at `gate` after reading.
    static func gatedDirectory(_ stored: Shared<[String: ClassSettings]>, _ gate: LoadGate) -> ClassDirectory {
        ClassDirectory(
            capacity: 16,
            load: { name in
                let settings = stored.value[name]
                await gate.pass()
                return settings
            },
            save: { settings in stored.update { $0[settings.className] = settings } })
    }

    @Test("classes: a save is not undone by a load that began before it")
    func classSaveDuringLoad() async throws {
        var closed = ClassSettings(className: "Doc")
        closed.permissions.create = .nobody
        let stored = Shared<[String: ClassSettings]>([:])
        let gate = LoadGate()
        let directory = Self.gatedDirectory(stored, gate)
        let early = Task { try await directory.settings(of: "Doc") }
        await gate.waitForArrival()
        try await directory.save(closed)
        await gate.open()
        _ = try await early.value
        #expect(try await directory.permissions(of: "Doc").create == .nobody)
    }

    @Test("classes: asking about ten times the capacity of invented names keeps the cache at capacity, answers right")
    func boundedByCapacity() async throws {
        let capacity = 32
        let saved = {
            var settings = ClassSettings(className: "Saved")
            settings.permissions.find = .authenticated
            settings.mergeRules = ["score": .sum]
            return settings
        }()
        let loads = Shared(0)
        let directory = ClassDirectory(
            capacity: capacity,
            load: { name in
                loads.update { $0 += 1 }
                return name == "Saved" ? saved : nil
            },
            save: { _ in })
        #expect(try await directory.settings(of: "Saved") == saved)
        for index in 0..<(capacity * 10) {
            let name = "Invented\(index)"
            #expect(try await directory.settings(of: name) == ClassSettings(className: name))
            #expect(directory.cachedCount <= capacity)
            if index % 7 == 0 {
                // A real class is answered right whether it was evicted meanwhile or not.
                #expect(try await directory.settings(of: "Saved") == saved)
            }
        }
        #expect(directory.cachedCount == capacity)
        #expect(try await directory.settings(of: RoleService.permissionClass).permissions.create == .nobody)
        // Hits stay hits: the class just asked about is answered from the cache.
        let before = loads.value
        _ = try await directory.settings(of: RoleService.permissionClass)
        #expect(loads.value == before)
    }

    @Test("classes: one request's memo asks the directory once per class, and keeps what it read even when the class changes")
    func requestMemo() async throws {
        var closed = ClassSettings(className: "Doc")
        closed.permissions.find = .nobody
        let stored = Shared<[String: ClassSettings]>([:])
        let asked = Shared<[String]>([])
        // A directory that caches one class, so that every ask of another one is a load.
        let directory = ClassDirectory(
            capacity: 1,
            load: { name in
                asked.update { $0.append(name) }
                return stored.value[name]
            },
            save: { settings in stored.update { $0[settings.className] = settings } })
        var memo = ClassSettingsMemo(directory)
        for name in ["Doc", "Note", "Doc", "Note", "Doc"] {
            #expect(try await memo.permissions(of: name).find == .everyone)
        }
        #expect(asked.value == ["Doc", "Note"])
        // A change after the request read the class is the next request's to see.
        try await directory.save(closed)
        #expect(try await memo.permissions(of: "Doc").find == .everyone)
        var next = ClassSettingsMemo(directory)
        #expect(try await next.permissions(of: "Doc").find == .nobody)
    }
}
