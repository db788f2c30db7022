import Testing

/// Runs a property body, recording a thrown error as an issue: PropertyBased 2.0.1 discards
/// errors thrown by the body (`try?` in its issue counting), which would let a failure pass.
public func recordingErrors(_ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) {
    do {
        try body()
    } catch {
        Issue.record("unexpected error: \(error)", sourceLocation: sourceLocation)
    }
}

/// Runs an asynchronous property body, recording a thrown error as an issue (see the synchronous
/// ``recordingErrors(_:sourceLocation:)-(()->Void,_)``).
public func recordingErrors(
    _ body: () async throws -> Void, sourceLocation: SourceLocation = #_sourceLocation
) async {
    do {
        try await body()
    } catch {
        Issue.record("unexpected error: \(error)", sourceLocation: sourceLocation)
    }
}
