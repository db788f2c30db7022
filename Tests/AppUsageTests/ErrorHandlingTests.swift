import Foundation
import Rooftop
import RooftopShared
import Testing

// The error-handling shapes docs/client.md ("Errors") recommends, written as an app writes them.
// This target compiles with warnings as errors: a shape that warns or fails to type-check breaks
// the build. The client's API throws untyped (every error it throws is a `RooftopError`), so
// these are Swift's ordinary shapes, the same in functions and in closures.

/// An app's model of a screen: it keeps the last error to show.
@MainActor
final class NoteEditor {
    var lastError: RooftopError?
    var otherError: (any Error)?
    var offline = false
    let note: RooftopObject

    init(note: RooftopObject) { self.note = note }

    /// The usual shape: cast to `RooftopError`, then a catch-all.
    func save() async {
        do {
            try note.set("text", to: "hello")
            try await note.save()
        } catch let error as RooftopError {
            offline = error.code == .noConnection
            lastError = error
        } catch {
            otherError = error
        }
    }

    /// Mixed with calls that throw other errors: the same shape.
    func saveAndExport(to url: URL) async {
        do {
            try await note.save()
            try Data("exported".utf8).write(to: url)
        } catch let error as RooftopError {
            lastError = error
        } catch {
            otherError = error
        }
    }

    /// In a closure (`Task {}`, SwiftUI's `.task {}`): the same shape.
    func saveInBackground() -> Task<Void, Never> {
        Task {
            do {
                try await note.save()
            } catch let error as RooftopError {
                lastError = error
            } catch {
                otherError = error
            }
        }
    }

    /// A guard on the code, letting other errors through (with typed throws this very shape
    /// crashed Swift 6.3.1's compiler).
    func saveOrQueue() async throws {
        do {
            try await note.save()
        } catch let error as RooftopError where error.code == .noConnection || error.code == .timeout {
            try await note.saveEventually()
        }
    }

    /// A switch over the code.
    func describe(_ error: any Error) -> String {
        switch (error as? RooftopError)?.code {
        case .noConnection?, .timeout?: "offline: saved on this device"
        case .disallowed?: "you may not change this note"
        case let code?: "refused (\(code))"
        case nil: "unexpected: \(error)"
        }
    }
}

/// Rethrowing from a function: callers see `any Error`, as everywhere else in Swift.
func saveAll(_ objects: [RooftopObject]) async throws {
    for object in objects { try await object.saveEventually() }
}

@Suite("The client as an app uses it: error handling")
struct ErrorHandlingTests {
    /// A client whose server is a closed port: every network call fails with `noConnection`.
    static func unreachableClient() async throws -> RooftopClient {
        var configuration = ClientConfiguration(serverURL: try #require(URL(string: "https://127.0.0.1:1")))
        configuration.storage = .inMemory
        return try await RooftopClient(configuration: configuration)
    }

    @Test("each documented shape catches the same RooftopError")
    @MainActor
    func shapes() async throws {
        let client = try await Self.unreachableClient()
        let editor = NoteEditor(note: client.object("Note"))

        await editor.save()
        #expect(editor.offline && editor.lastError?.code == .noConnection)

        editor.lastError = nil
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("rooftop-export-\(UUID())")
        defer { try? FileManager.default.removeItem(at: file) }
        await editor.saveAndExport(to: file)
        #expect(editor.lastError?.code == .noConnection)

        editor.lastError = nil
        await editor.saveInBackground().value
        #expect(editor.lastError?.code == .noConnection)
        #expect(editor.otherError == nil)

        try await editor.saveOrQueue()
        #expect(try client.outbox.hasPendingWrites, "queued instead")
        try await saveAll([client.object("Note")])

        do {
            try editor.note.set("bad name", to: 1)
            Issue.record("an invalid name was accepted")
        } catch {
            #expect(editor.describe(error) == "refused (illegalArgument)")
        }
        #expect(editor.describe(CancellationError()).hasPrefix("unexpected"))
        await client.shutdown()
    }
}
