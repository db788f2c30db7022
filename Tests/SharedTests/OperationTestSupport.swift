import RooftopShared
import Testing

/// Expects `body` to throw a ``RooftopError`` with `code`.
func expectOperationError<R>(
    _ code: RooftopError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> R
) {
    let error = #expect(throws: RooftopError.self, sourceLocation: sourceLocation) { try body() }
    #expect(error?.code == code, "\(String(describing: error))", sourceLocation: sourceLocation)
}
