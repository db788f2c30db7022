import Foundation
@testable import Rooftop
import RooftopShared
import Testing

/// How server messages on the live socket become ``LiveEvent``s.
@Suite struct LiveEventTests {
    @Test func subscribed() throws {
        let event = LiveEvent(serverText: #"{"type": "subscribed", "datastores": [":app", "default"]}"#)
        #expect(event == .subscribed([.app, .default]))
    }

    @Test func changed() {
        let event = LiveEvent(serverText: #"{"type": "changed", "datastore": "default", "sequence": 1043}"#)
        #expect(event == .changed(.default, sequence: 1043))
    }

    @Test func errorsWithAndWithoutDatastore() throws {
        let about = LiveEvent(
            serverText: #"{"type": "error", "error": {"code": "notFound", "message": "no datastore .Xy3"}, "datastore": ".Xy3"}"#)
        #expect(about == .error(RooftopError(.notFound, "no datastore .Xy3"), try DatastoreID(".Xy3")))
        let general = LiveEvent(
            serverText: #"{"type": "error", "error": {"code": "auth", "message": "the session expired"}}"#)
        #expect(general == .error(RooftopError(.auth, "the session expired"), nil))
    }

    @Test(arguments: [
        "", "not json", #"{"type": "hello"}"#, #"{"type": "changed", "datastore": "default"}"#,
        #"{"type": "subscribed", "datastores": ["Not Valid"]}"#, "[1, 2]",
    ])
    func unreadableMessagesBecomeResponseErrors(_ text: String) {
        guard case .error(let error, let datastore) = LiveEvent(serverText: text) else {
            Issue.record("expected an error event for \(text)")
            return
        }
        #expect(error.code == .response)
        #expect(datastore == nil)
        #expect(error.cause != nil)
    }

    @Test func everyServerMessageRoundTrips() throws {
        let messages: [(LiveServerMessage, LiveEvent)] = [
            (.subscribed(datastores: [.default, .app]), .subscribed([.default, .app])),
            (.subscribed(datastores: []), .subscribed([])),
            (.changed(datastore: .app, sequence: Int64.max), .changed(.app, sequence: Int64.max)),
            (.error(RooftopError(.disallowed, "no"), datastore: .default), .error(RooftopError(.disallowed, "no"), .default)),
        ]
        for (message, expected) in messages {
            let text = String(decoding: try JSONEncoder().encode(message), as: UTF8.self)
            #expect(LiveEvent(serverText: text) == expected)
        }
    }
}
