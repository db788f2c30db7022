import Foundation
import RooftopChaos

/// `rooftop-chaos-client SETTINGS-JSON`: one replica of the randomized convergence harness in its
/// own process. It opens a ``ChaosReplica`` with the settings given as its argument, prints
/// `{"ready":true}`, then reads one ``ChaosCommand`` per line on standard input and prints one
/// ``ChaosReply`` per command, with the offline queue's events (``ChaosEvent``) in between, one
/// JSON object per line. It exits after `stop`, or when standard input closes; the harness also
/// kills it with SIGKILL, and reopens its cache file in a new process.
@main
struct ChaosClientCommand {
    static func main() async {
        let output = LineWriter()
        guard CommandLine.arguments.count == 2,
            let settings = try? JSONDecoder().decode(ChaosReplicaSettings.self, from: Data(CommandLine.arguments[1].utf8))
        else {
            output.write(ChaosLine(fatal: "usage: rooftop-chaos-client SETTINGS-JSON"))
            exit(2)
        }
        let replica: ChaosReplica
        do {
            replica = try await ChaosReplica.open(settings) { event in output.write(ChaosLine(event: event)) }
        } catch {
            output.write(ChaosLine(fatal: "could not open the replica: \(error)"))
            exit(1)
        }
        output.write(ChaosLine(ready: true))
        while let line = readLine() {
            guard let command = try? JSONDecoder().decode(ChaosCommand.self, from: Data(line.utf8)) else {
                var reply = ChaosReply()
                reply.error = "undecodable command: \(line.prefix(200))"
                output.write(ChaosLine(reply: reply))
                continue
            }
            if command.kind == .stop { break }
            output.write(ChaosLine(reply: await replica.perform(command)))
        }
        await replica.close()
        output.write(ChaosLine(reply: ChaosReply()))
    }
}

/// Prints JSON lines on standard output, one at a time, flushed at once.
final class LineWriter: Sendable {
    private let lock = NSLock()

    func write(_ line: ChaosLine) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        guard let data = try? encoder.encode(line) else { return }
        lock.lock()
        defer { lock.unlock() }
        FileHandle.standardOutput.write(data + Data("\n".utf8))
    }
}
