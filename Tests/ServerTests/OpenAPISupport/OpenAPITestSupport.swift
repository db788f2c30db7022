import Foundation
import Testing
import RooftopTestSupport

/// Helpers for the OpenAPI tests: error recording in property bodies, temporary files and
/// running Python (the validators are Python tools).
enum OpenAPITestSupport {
    /// Runs a property body, recording a thrown error as an issue: PropertyBased 2.0.1 discards
    /// errors thrown by the body, which would let a failure pass.
    static func recordingErrors(_ body: () async throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) async {
        do {
            try await body()
        } catch {
            Issue.record("unexpected error: \(error)", sourceLocation: sourceLocation)
        }
    }

    static func recordingErrors(_ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            try body()
        } catch {
            Issue.record("unexpected error: \(error)", sourceLocation: sourceLocation)
        }
    }

    /// A new empty directory under the system's temporary directory.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("rooftop-openapi-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Runs `body` with a fresh temporary directory, removed afterwards whatever happens.
    static func withTemporaryDirectory<T>(_ body: (URL) async throws -> T) async throws -> T {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        return try await body(directory)
    }

    /// The outcome of a process: its exit status and its standard output and error, merged.
    struct ProcessResult: Sendable {
        var status: Int32
        var output: String
    }

    /// Runs `python3` (found on `PATH`) with `arguments` and waits for it, reading its output on
    /// a thread of its own (``BlockingRead``), not on one of the cooperative pool's.
    static func python(_ arguments: [String]) async throws -> ProcessResult {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        let pipe = Pipe()
        process.standardOutput = .pipe(pipe)
        process.standardError = .pipe(pipe)
        try process.run()
        // Read before waiting: a child blocked on a full pipe would never exit.
        let data = await BlockingRead.toEnd(pipe.fileHandleForReading)
        process.waitUntilExit()
        return ProcessResult(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }

    /// The JSON text of a string, for assembling JSON by hand around raw encoder output.
    static func jsonString(_ text: String) -> String {
        guard let data = try? JSONEncoder().encode(text) else { return "\"\"" }
        return String(decoding: data, as: UTF8.self)
    }

    /// A JSON encoder configured like the server's responses.
    static var serverEncoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
