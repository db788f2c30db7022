import Foundation
import RooftopShared
import RooftopTestSupport
import Testing

extension AdminCLITests {
    @Test("an object deleted during an export is deleted by importing it; --batch is held to the server's push limit")
    func exportTombstones() async throws {
        let directory = TemporaryDirectory.make(prefix: "admin-cli-tombstones")
        let file = directory + "/export.ndjson"
        let total = 1_400
        try await withServer { server in
            let api = try APIClient(server: server)
            do {
                // About 1.5 MB of export: the CLI writes in 1 MiB blocks, within the first page of
                // 1,000 objects, and a pipe holds far less, so the export waits on its output
                // before it pulls the second page, while the test deletes the first object it wrote.
                let filler = String(repeating: "x", count: 1_000)
                for batch in stride(from: 0, to: total, by: 350) {
                    let mutations = (batch..<batch + 350).map {
                        Mutations.create(.app, "Doc", "o\($0)", fields: ["n": .int(Int64($0)), "text": .string(filler)])
                    }
                    let _: PushResponse = try await api.call(API.push, body: PushRequest(mutations: mutations), admin: true)
                }
                let process = ChildProcess()
                process.executableURL = try ServerBinary.url()
                process.arguments = [
                    "admin", "export", "--server", server.baseURL, "--admin-key", server.adminKey, "--ca", server.caCertificatePath,
                ]
                process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("ROOFTOP_") }
                let output = Pipe()
                process.standardOutput = .pipe(output)
                process.standardError = .handle(FileHandle.nullDevice)
                try process.run()
                let reader = output.fileHandleForReading
                var exported = Data()
                let deadline = ContinuousClock.now + .seconds(60)
                while !String(decoding: exported, as: UTF8.self).contains(#""objectId":"o0""#), ContinuousClock.now < deadline {
                    let chunk = await BlockingRead.available(reader)
                    if chunk.isEmpty { break }
                    exported.append(chunk)
                }
                #expect(process.isRunning, "the export still waits on its output")
                #expect(try await api.send(.DELETE, APIClient.objectPath(.app, "Doc", "o0"), admin: true).status == 204)
                exported.append(await BlockingRead.toEnd(reader))
                try await TestWait.until(within: .seconds(60), "the export to finish") { !process.isRunning }
                #expect(process.terminationStatus == 0)
                try exported.write(to: URL(fileURLWithPath: file))
                let lines = String(decoding: exported, as: UTF8.self).split(separator: "\n")
                #expect(lines.contains(#"{"tombstone":{"className":"Doc","objectId":"o0"}}"#), "the deletion is in the export")
                await api.shutdown()
            } catch {
                await api.shutdown()
                throw error
            }
        }
        try await withServer { server in
            let api = try APIClient(server: server)
            do {
                // The export names o0 (written, then deleted): imported, it stays deleted. A
                // tombstone of an object the target never had is fine.
                _ = try await api.create("Doc", fields: ["n": -1], objectId: "o0", admin: true)
                let run = try await Self.admin(server, ["import", "--in", file, "--batch", "500"])
                #expect(run.status == 0, "\(run.output)")
                #expect(try await api.send(.GET, APIClient.objectPath(.app, "Doc", "o0"), admin: true).status == 404)
                let count = try await api.send(.POST, "/v1/datastores/:app/count", body: QueryRequest.query(Query("Doc")), admin: true)
                #expect(try count.decode(CountResponse.self).count == total - 1)
                let tooLarge = try await Self.admin(server, ["import", "--in", file, "--batch", "501"])
                #expect(tooLarge.status != 0 && tooLarge.output.contains("maxMutationsPerPush 500"), "\(tooLarge.output)")
                await api.shutdown()
            } catch {
                await api.shutdown()
                throw error
            }
        }
    }
}
