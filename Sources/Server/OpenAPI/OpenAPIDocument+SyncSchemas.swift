import RooftopShared

/// Component schemas of sync: push (mutations and their results), pull (the change feed) and
/// the messages of the live WebSocket.
extension OpenAPIDocument {
    static var syncSchemas: [(String, OpenAPIJSON)] {
        typealias S = OpenAPISchema
        return [
            ("Mutation", mutationSchema),
            (
                "PushRequest",
                S.object(
                    "The client's queued mutations, oldest first. Each is applied atomically and on its own; the limits on the whole push (`maxMutationsPerPush`, `maxPushBytes`) reject the whole request.",
                    required: ["mutations"], properties: ["mutations": S.array(S.ref("Mutation"), "The mutations.")])
            ),
            (
                "PushResponse",
                S.object(
                    "One result per mutation, in the request's order.", required: ["results"],
                    properties: ["results": S.array(S.ref("MutationResult"), "The results.")])
            ),
            (
                "MutationResult",
                S.oneOf(
                    "What the server did with one mutation. A mutation ID the server has already applied gets the first result again.",
                    [S.ref("AppliedResult"), S.ref("RejectedResult")], discriminator: "status",
                    mapping: ["applied": "AppliedResult", "rejected": "RejectedResult"])
            ),
            (
                "AppliedResult",
                S.object(
                    "The change was applied.", required: ["mutationId", "status", "version"],
                    properties: [
                        "mutationId": S.ref("MutationID"),
                        "status": S.constant("applied"),
                        "version": S.integer("The object's new version.", minimum: 0),
                        "object": S.ref("ObjectSnapshot", "The object after the change; absent after a delete."),
                        "merges": S.array(S.ref("MergeDecision"), "Merge decisions taken against concurrent changes; absent when none."),
                    ])
            ),
            (
                "RejectedResult",
                S.object(
                    "The change was refused; nothing of it was applied.", required: ["mutationId", "status", "error"],
                    properties: [
                        "mutationId": S.ref("MutationID"), "status": S.constant("rejected"), "error": S.ref("Error"),
                    ])
            ),
            (
                "PullRequest",
                S.object(
                    "What changed in a datastore since a checkpoint? Repeat with the returned checkpoint while `hasMore`.",
                    required: ["datastore"],
                    properties: [
                        "datastore": S.ref("DatastoreID"),
                        "since": S.ref("Checkpoint", "The previous pull's checkpoint; absent to start from the beginning."),
                        "limit": S.integer(
                            "The most changes in this page (absent: `defaultPullPageSize`; 1 to `maxPullPageSize`).", minimum: 1),
                        "classes": S.array(S.ref("Identifier"), "Only these classes (default all)."),
                    ],
                    examples: [["datastore": ":app", "since": "c:1042", "limit": 500, "classes": ["GameScore"]]])
            ),
            (
                "PullResponse",
                S.object(
                    "One page of changes, filtered by the caller's read access.",
                    required: ["changes", "checkpoint", "hasMore"],
                    properties: [
                        "changes": S.array(S.ref("PullChange"), "The changes, in commit order."),
                        "checkpoint": S.ref("Checkpoint", "Where the next pull starts; store it once the changes are applied."),
                        "hasMore": S.boolean("Whether more changes are waiting."),
                        "remaining": S.integer("An estimate of the changes still waiting; absent when unknown.", minimum: 0),
                    ])
            ),
            (
                "PullChange",
                S.oneOf(
                    "One entry of a pull page.", [S.ref("UpsertChange"), S.ref("TombstoneChange"), S.ref("RemovalChange")],
                    discriminator: "kind",
                    mapping: ["upsert": "UpsertChange", "tombstone": "TombstoneChange", "removal": "RemovalChange"])
            ),
            (
                "UpsertChange",
                S.object(
                    "The object as it is now: store it.", required: ["kind", "object"],
                    properties: ["kind": S.constant("upsert"), "object": S.ref("ObjectSnapshot")])
            ),
            (
                "TombstoneChange",
                S.object(
                    "The object was deleted at `version`: delete it locally.",
                    required: ["kind", "className", "objectId", "version"],
                    properties: [
                        "kind": S.constant("tombstone"), "className": S.ref("Identifier"), "objectId": S.ref("Identifier"),
                        "version": S.integer("The version of the delete.", minimum: 0),
                    ])
            ),
            (
                "RemovalChange",
                S.object(
                    "The object exists but the caller can no longer read it (its ACL, a role or the datastore role changed): purge it locally.",
                    required: ["kind", "className", "objectId"],
                    properties: [
                        "kind": S.constant("removal"), "className": S.ref("Identifier"), "objectId": S.ref("Identifier"),
                    ])
            ),
        ] + liveSchemas
    }

    private static var mutationSchema: OpenAPIJSON {
        typealias S = OpenAPISchema
        return S.object(
            "One queued change to one object. `baseVersion` is the version the client last saw: changes made since are merged with the class's merge rules. Absent: the object is being created, or the write applies blindly over what is stored.",
            required: ["mutationId", "datastore", "className", "objectId", "change"],
            properties: [
                "mutationId": S.ref("MutationID"),
                "datastore": S.ref("DatastoreID"),
                "className": S.ref("Identifier"),
                "objectId": S.ref("Identifier"),
                "baseVersion": S.integer("The object version the change was made on.", minimum: 0),
                "change": S.ref("ObjectChange"),
            ],
            examples: [
                [
                    "mutationId": "01jd0s8m6c7q9x2v4b5n3k1h0z", "datastore": ":app", "className": "GameScore",
                    "objectId": "01jd0s8m6bz8r1w0q2a3c4d5e6", "baseVersion": 3,
                    "change": ["update": [["field": "score", "do": ["op": "increment", "amount": 1]]]],
                ]
            ])
    }

    private static var liveSchemas: [(String, OpenAPIJSON)] {
        typealias S = OpenAPISchema
        let datastores = S.array(S.ref("DatastoreID"), "The datastores.")
        return [
            (
                "LiveClientMessage",
                S.oneOf(
                    "A text message a client sends on `/v1/live`.", [S.ref("LiveSubscribe"), S.ref("LiveUnsubscribe")],
                    discriminator: "type", mapping: ["subscribe": "LiveSubscribe", "unsubscribe": "LiveUnsubscribe"])
            ),
            (
                "LiveSubscribe",
                S.object(
                    "Start receiving `changed` notifications for these datastores, as the session's user (anonymous without a token). The server checks read access to each.",
                    required: ["type", "datastores"],
                    properties: [
                        "type": S.constant("subscribe"), "datastores": datastores,
                        "sessionToken": S.string("A session token; replaces the identity of the connection."),
                    ],
                    examples: [["type": "subscribe", "datastores": [":app", ".Xy3"], "sessionToken": "r:9f8e"]])
            ),
            (
                "LiveUnsubscribe",
                S.object(
                    "Stop receiving notifications for these datastores.", required: ["type", "datastores"],
                    properties: ["type": S.constant("unsubscribe"), "datastores": datastores])
            ),
            (
                "LiveServerMessage",
                S.oneOf(
                    "A text message the server sends on `/v1/live`. Notifications carry no data: pull to get the change.",
                    [S.ref("LiveSubscribed"), S.ref("LiveChanged"), S.ref("LiveError")], discriminator: "type",
                    mapping: ["subscribed": "LiveSubscribed", "changed": "LiveChanged", "error": "LiveError"])
            ),
            (
                "LiveSubscribed",
                S.object(
                    "These subscriptions are active; changes committed from now on are notified.",
                    required: ["type", "datastores"], properties: ["type": S.constant("subscribed"), "datastores": datastores])
            ),
            (
                "LiveChanged",
                S.object(
                    "A change the subscriber may read was committed in the datastore as its change number `sequence` (increasing within a datastore).",
                    required: ["type", "datastore", "sequence"],
                    properties: [
                        "type": S.constant("changed"), "datastore": S.ref("DatastoreID"),
                        "sequence": S.integer("The change number.", minimum: 0),
                    ],
                    examples: [["type": "changed", "datastore": ":app", "sequence": 1043]])
            ),
            (
                "LiveError",
                S.object(
                    "A message or subscription failed; the connection stays open.", required: ["type", "error"],
                    properties: [
                        "type": S.constant("error"), "error": S.ref("Error"),
                        "datastore": S.ref("DatastoreID", "The datastore concerned, when one is."),
                    ])
            ),
        ]
    }
}
