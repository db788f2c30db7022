import RooftopShared

extension LiveClientMessage: UnionSchema {
    var schemaVariant: String {
        switch self {
        case .subscribe: "LiveSubscribe"
        case .unsubscribe: "LiveUnsubscribe"
        }
    }

    static let unionNotes = UnionNotes(
        "A text message a client sends on `/v1/live`.",
        discriminator: "type",
        variants: [
            .init(
                "LiveSubscribe",
                """
                    Start receiving `changed` notifications for these datastores, as the session's user (anonymous \
                    without a token). The server checks read access to each.
                    """,
                examples: [#"{"type": "subscribe", "datastores": [":app", ".Xy3"], "sessionToken": "r:9f8e"}"#],
                properties: [
                    "datastores": .init("The datastores."),
                    "sessionToken": .init(
                        "A session token; replaces the identity of the connection. `null` is the same as absent."),
                ]),
            .init(
                "LiveUnsubscribe", "Stop receiving notifications for these datastores.",
                recorded: [#"{"type": "unsubscribe", "datastores": [":app"]}"#],
                properties: ["datastores": .init("The datastores.")]),
        ])
}

extension LiveServerMessage: UnionSchema {
    var schemaVariant: String {
        switch self {
        case .subscribed: "LiveSubscribed"
        case .changed: "LiveChanged"
        case .error: "LiveError"
        }
    }

    static let unionNotes = UnionNotes(
        "A text message the server sends on `/v1/live`. Notifications carry no data: pull to get the change.",
        discriminator: "type",
        variants: [
            .init(
                "LiveSubscribed", "These subscriptions are active; changes committed from now on are notified.",
                recorded: [#"{"type": "subscribed", "datastores": [":app"]}"#],
                properties: ["datastores": .init("The datastores.")]),
            .init(
                "LiveChanged",
                """
                    A change the subscriber may read was committed in the datastore as its change number `sequence` \
                    (increasing within a datastore).
                    """,
                examples: [#"{"type": "changed", "datastore": ":app", "sequence": 1043}"#],
                properties: ["sequence": .init("The change number.", constraints: [.minimum(0)])]),
            .init(
                "LiveError", "A message or subscription failed; the connection stays open.",
                recorded: [
                    #"""
                        {"type": "error", "error": {"code": "forbidden", "message": "no read access"}, "datastore": \#
                        ".Xy3"}
                        """#
                ],
                properties: ["datastore": .init("The datastore concerned, when one is.")]),
        ])
}
