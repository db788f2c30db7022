import Foundation
import RooftopTestSupport
import RooftopShared
import Testing

/// A small tmpfs file system, for running a server's data directory out of space or read-only.
/// Needs root (CI runs as root); ``isAvailable`` tries a mount once.
struct TmpfsMount {
    let path: String

    /// Whether this process may mount a tmpfs.
    static let isAvailable: Bool = {
        guard let probe = try? TmpfsMount(megabytes: 1) else { return false }
        probe.unmount()
        return true
    }()

    /// Mounts a tmpfs of `megabytes` on a new directory.
    /// - Throws: When `mount` fails (not root, no permission).
    init(megabytes: Int) throws {
        path = TemporaryDirectory.make(prefix: "rooftop-tmpfs")
        try Self.run(["mount", "-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", path])
    }

    /// Changes the mount: `size=Nm`, `ro` or `rw`.
    func remount(_ options: String) throws {
        try Self.run(["mount", "-o", "remount,\(options)", path])
    }

    /// Unmounts (lazily, so that an open file cannot keep it) and removes the directory.
    func unmount() {
        try? Self.run(["umount", "-l", path])
        try? FileManager.default.removeItem(atPath: path)
    }

    private static func run(_ arguments: [String]) throws {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.standardOutput = .handle(.nullDevice)
        process.standardError = .handle(.nullDevice)
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw FixtureError("\(arguments.joined(separator: " ")) failed") }
    }
}

/// A full disk or a read-only data directory: writes are refused with 503 `retryLater` (never a
/// 500, never an exit), reads go on, nothing acknowledged is lost, the database stays sound, and
/// everything works again once there is room.
@Suite(
    "Operations: full disk and read-only data directory", .serialized, TestStorage.sqliteOnly,
    .enabled(if: TmpfsMount.isAvailable, "needs root to mount a small tmpfs (CI runs as root)"))
struct StorageFaultTests {
    /// An object of about 60 KB.
    static func bulky(_ index: Int) -> [String: Value] {
        ["index": .int(Int64(index)), "text": .string(String(repeating: "x", count: 60_000))]
    }

    @Test("a full disk refuses writes with 503 retryLater; after room is made, nothing acknowledged is missing")
    func fullDisk() async throws {
        let mount = try TmpfsMount(megabytes: 4)
        defer { mount.unmount() }
        let data = mount.path + "/data"
        var acknowledged: [String] = []
        let user = try await withServerAndClient(dataDirectory: data) { server, client in
            let user = try await client.newUser("disk")
            var refusal: APIClient.Reply?
            for index in 0..<400 {
                let reply = try await client.send(
                    .POST, APIClient.objectPath(.default, "Bulk"),
                    body: ObjectWriteBody(objectId: "b\(index)", fields: Self.bulky(index), acl: nil), token: user.token)
                if reply.status == 201 || reply.status == 200 {
                    acknowledged.append("b\(index)")
                } else {
                    refusal = reply
                    break
                }
            }
            let refused = try #require(refusal, "the 4 MB disk never filled")
            #expect(refused.status == 503, "\(refused.status) \(refused.text)")
            #expect(refused.error?.code == .retryLater, "\(refused.text)")
            #expect(refused.headers.first(name: "Retry-After") != nil)
            #expect(server.isRunning)
            #expect(try await client.send(.GET, "/health", appId: .some(nil)).status == 200)
            // Reads go on.
            let first = try await client.send(.GET, APIClient.objectPath(.default, "Bulk", "b0"), token: user.token)
            #expect(first.status == 200)
            // Room again: the refused write succeeds when retried, and more follow.
            try mount.remount("size=64m")
            let failedIndex = acknowledged.count
            for index in failedIndex..<(failedIndex + 3) {
                _ = try await client.create("Bulk", in: .default, fields: Self.bulky(index), objectId: "b\(index)", as: user)
                acknowledged.append("b\(index)")
            }
            #expect(!server.log.contains("request failed"), "an internal error was logged:\n\(server.log)")
            return user
        }
        // Restarted on the same files: every acknowledged object is there, and the database is sound.
        try await withServerAndClient(dataDirectory: data) { _, client in
            let changes = try await client.pullAll(.default, as: user).changes
            let stored = Set(changes.compactMap { if case .upsert(let object) = $0 { object.objectId } else { nil } })
            #expect(stored == Set(acknowledged), "missing: \(Set(acknowledged).subtracting(stored).sorted())")
        }
        let check = try await BackupTests.command(["backup", "--data-dir", data, "--out", mount.path + "/check.sqlite"])
        #expect(check.status == 0 && check.output.contains("integrity ok"), "\(check.output)")
    }

    @Test("a server on a read-only data directory stops with a clear error; on the same files made writable again it serves them whole")
    func readOnly() async throws {
        let mount = try TmpfsMount(megabytes: 32)
        defer { mount.unmount() }
        let data = mount.path + "/data"
        let user = try await withServerAndClient(dataDirectory: data) { _, client in
            let user = try await client.newUser("readonly")
            _ = try await client.create("Note", in: .default, fields: ["n": 1], objectId: "n1", as: user)
            return user
        }
        // A file system cannot be made read-only while the server writes to it (the remount is
        // refused as busy): the server is stopped first.
        try mount.remount("ro")
        try await expectStartRefused(dataDirectory: data, saying: "Read-only file system")
        try mount.remount("rw")
        try await withServerAndClient(dataDirectory: data) { _, client in
            _ = try await client.create("Note", in: .default, fields: ["n": 2], objectId: "n2", as: user)
            #expect(try await client.pullAll(.default, as: user).changes.count == 2)
        }
    }
}
