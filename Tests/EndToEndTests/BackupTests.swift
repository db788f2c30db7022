import Foundation
import RooftopShared
import RooftopTestSupport
import Testing

/// `rooftop-server backup` and `restore`, run as an operator would against the real server.
@Suite("Operations: online backup and restore", TestStorage.sqliteOnly)
struct BackupTests {
    /// Runs `rooftop-server` with `arguments` to completion (bounded by `deadline`).
    static func command(_ arguments: [String], deadline: Duration = .seconds(120)) async throws
        -> (status: Int32, output: String)
    {
        let process = ChildProcess()
        process.executableURL = try ServerBinary.url()
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("ROOFTOP_") }
        let output = Pipe()
        process.standardOutput = .pipe(output)
        process.standardError = .pipe(output)
        try process.run()
        try? await TestWait.until(within: deadline, "rooftop-server \(arguments.first ?? "") to finish") {
            !process.isRunning
        }
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
            throw FixtureError("rooftop-server \(arguments.first ?? "") did not finish in time")
        }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (process.terminationStatus, text)
    }

    @Test("a backup taken while clients write is a consistent snapshot; restored, a server serves exactly it")
    func backupUnderWrites() async throws {
        let directory = TemporaryDirectory.make(prefix: "rooftop-backup")
        let backup = directory + "/backup.sqlite"
        let writers = 3
        let perWriter = 60
        // What each writer had acknowledged when the backup started, and in all.
        let (user, ackedBeforeBackup) = try await withServerAndClient { server, client in
            let user = try await client.newUser("backup")
            let progress = AckCounter(writers: writers)
            let backupResult = try await withThrowingTaskGroup(of: (Int32, String, [Int])?.self) { group in
                for writer in 0..<writers {
                    group.addTask {
                        for index in 0..<perWriter {
                            _ = try await client.create(
                                "Item", in: .default, fields: ["writer": .int(Int64(writer)), "index": .int(Int64(index))],
                                objectId: "w\(writer)-\(index)", as: user)
                            progress.acknowledge(writer: writer, index: index)
                        }
                        return nil
                    }
                }
                group.addTask {
                    // Start once the writers are well under way, while they go on.
                    try await TestWait.until(within: .seconds(60), "the writers to get going") {
                        progress.total >= writers * 10
                    }
                    let before = progress.snapshot
                    let (status, output) = try await Self.command([
                        "backup", "--data-dir", server.dataDirectory, "--out", backup,
                    ])
                    return (status, output, before)
                }
                var result: (Int32, String, [Int])?
                for try await outcome in group { if let outcome { result = outcome } }
                return result
            }
            let (status, output, before) = try #require(backupResult)
            #expect(status == 0, "backup failed: \(output)")
            #expect(output.contains("integrity ok"), "\(output)")
            #expect(progress.snapshot == Array(repeating: perWriter, count: writers), "the writers did not finish")
            return (user, before)
        }

        // Restore into a new data directory and serve it.
        let restored = directory + "/restored"
        let (status, output) = try await Self.command(["restore", "--data-dir", restored, "--from", backup])
        #expect(status == 0, "restore failed: \(output)")
        try await withServerAndClient(dataDirectory: restored) { _, client in
            let changes = try await client.pullAll(.default, as: user).changes
            var indices = Array(repeating: [Int](), count: writers)
            for case .upsert(let object) in changes {
                guard case .int(let writer)? = object.fields["writer"], case .int(let index)? = object.fields["index"] else {
                    Issue.record("an object without its fields: \(object)")
                    continue
                }
                #expect(object.objectId == "w\(writer)-\(index)")
                indices[Int(writer)].append(Int(index))
            }
            for writer in 0..<writers {
                let held = indices[writer].sorted()
                // Consistent: each writer's objects are a prefix of what it wrote (a snapshot never
                // holds a later write without the earlier ones)...
                #expect(held == Array(0..<held.count), "writer \(writer): \(held)")
                // ...and nothing acknowledged before the backup began is missing.
                #expect(held.count >= ackedBeforeBackup[writer], "writer \(writer) lost acknowledged writes")
            }
            let total = indices.map(\.count).reduce(0, +)
            #expect(total >= writers * 10 && total <= writers * perWriter)
        }
    }

    @Test("restore refuses a server's data directory in use, a damaged backup, and an existing database without --force")
    func restoreRefusals() async throws {
        let directory = TemporaryDirectory.make(prefix: "rooftop-backup")
        let backup = directory + "/backup.sqlite"
        try await withServer { server in
            #expect(try await Self.command(["backup", "--data-dir", server.dataDirectory, "--out", backup]).status == 0)
            let inUse = try await Self.command(["restore", "--data-dir", server.dataDirectory, "--from", backup, "--force"])
            #expect(inUse.status != 0)
            #expect(inUse.output.contains("another rooftop-server process is using"), "\(inUse.output)")
            // A second backup to the same file is refused rather than overwriting it.
            let again = try await Self.command(["backup", "--data-dir", server.dataDirectory, "--out", backup])
            #expect(again.status != 0 && again.output.contains("exists"), "\(again.output)")
        }
        let target = directory + "/target"
        #expect(try await Self.command(["restore", "--data-dir", target, "--from", backup]).status == 0)
        let existing = try await Self.command(["restore", "--data-dir", target, "--from", backup])
        #expect(existing.status != 0 && existing.output.contains("--force"), "\(existing.output)")

        // A damaged backup: the same bytes with a page in the middle overwritten.
        var bytes = try Data(contentsOf: URL(fileURLWithPath: backup))
        let damaged = directory + "/damaged.sqlite"
        let middle = bytes.count / 2
        bytes.replaceSubrange(middle..<min(middle + 4096, bytes.count), with: Data(repeating: 0xA5, count: 4096))
        try bytes.write(to: URL(fileURLWithPath: damaged))
        let before = try Data(contentsOf: URL(fileURLWithPath: target + "/rooftop.sqlite"))
        let refused = try await Self.command(["restore", "--data-dir", target, "--from", damaged, "--force"])
        #expect(refused.status != 0, "\(refused.output)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: target + "/rooftop.sqlite")) == before, "a refused restore changed the database")
        let notADatabase = directory + "/text.sqlite"
        try Data("hello".utf8).write(to: URL(fileURLWithPath: notADatabase))
        #expect(try await Self.command(["restore", "--data-dir", target, "--from", notADatabase, "--force"]).status != 0)
    }
}

/// How far each writer got, shared between the writers and the backup task.
private final class AckCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var acknowledged: [Int]

    init(writers: Int) { acknowledged = Array(repeating: 0, count: writers) }

    func acknowledge(writer: Int, index: Int) { lock.withLock { acknowledged[writer] = index + 1 } }
    var snapshot: [Int] { lock.withLock { acknowledged } }
    var total: Int { snapshot.reduce(0, +) }
}
