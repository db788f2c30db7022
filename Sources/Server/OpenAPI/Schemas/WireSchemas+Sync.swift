import RooftopShared

extension Mutation: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        """
            One queued change to one object. `baseVersion` is the version the client last saw: changes made since \
            are merged with the class's merge rules. Absent: the object is being created, or the write applies \
            blindly over what is stored.
            """,
        examples: [
            #"""
                {"mutationId": "01jd0s8m6c7q9x2v4b5n3k1h0z", "datastore": ":app", "className": \#
                "GameScore", "objectId": "01jd0s8m6bz8r1w0q2a3c4d5e6", "baseVersion": 3, "change": \#
                {"update": [{"field": "score", "do": {"op": "increment", "amount": 1}}]}}
                """#
        ],
        properties: [
            "className": .init(reference: "Identifier"),
            "objectId": .init(reference: "Identifier"),
            "baseVersion": .init(
                "The object version the change was made on. `null` is the same as absent.",
                constraints: [.minimum(0)])
        ])
}

extension PushRequest: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        """
            The client's queued mutations, oldest first. Each is applied atomically and on its own; the limits on \
            the whole push (`maxMutationsPerPush`, `maxPushBytes`) reject the whole request.
            """,
        recorded: [
            #"""
                {"mutations": [{"mutationId": "m1", "datastore": ":app", "className": "GameScore", "objectId": \#
                "o1", "baseVersion": 3, "change": {"update": [{"field": "score", "do": {"op": "increment", \#
                "amount": 1}}]}}]}
                """#
        ],
        properties: [
            "mutations": .init("The mutations."),
            "compact": .init("""
                Leave the objects out of the answer. Applied results then carry the version and the merge \
                decisions only, for a client that reads the objects from its next pull or does not need them. \
                `null` is the same as absent.
                """, constraints: [.defaultValue(false)])
        ])
}

extension PushResponse: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        "One result per mutation, in the request's order.",
        recorded: [
            #"""
                {"results": [{"merges": [{"base": 10, "field": "score", "local": 15, "remote": 20, \#
                "resolution": "rule", "result": 25, "rule": "sum"}, {"field": "tags", "local": null, \#
                "resolution": "objectDeleted", "rule": "remote"}], "mutationId": "m1", "object": \#
                {"className": "GameScore", "objectId": "abc", "datastore": ":app", "fields": {"score": \#
                10}, "version": 1}, "status": "applied", "version": 4}, {"mutationId": "m2", "status": \#
                "applied", "version": 9}]}
                """#
        ],
        properties: [
            "results": .init("The results.")
        ])
}

extension PullRequest: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        """
            What changed in a datastore since a checkpoint? Repeat with the returned checkpoint while `hasMore`.
            """,
        examples: [
            #"{"datastore": ":app", "limit": 500, "classes": ["GameScore"]}"#
        ],
        recorded: [#"{"datastore": ":app", "since": "c:1042", "limit": 500, "classes": ["GameScore"]}"#],
        properties: [
            "since": .init("""
                The previous pull's checkpoint; absent to start from the beginning. `null` is the same as absent.
                """),
            "limit": .init("""
                The most changes in this page (absent: `defaultPullPageSize`, 500 by default; 1 to \
                `maxPullPageSize`, 1000 by default, above which the server answers 413 `sizeLimit`). `null` is the \
                same as absent.
                """, constraints: [.minimum(1), .maximum(1000)]),
            "classes": .init(
                "Only these classes (default all). `null` is the same as absent.",
                items: "Identifier")
        ])
}

extension PullResponse: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        "One page of changes, filtered by the caller's read access.",
        recorded: [
            #"""
                {"changes": [{"kind": "upsert", "object": {"className": "GameScore", "objectId": \#
                "abc", "datastore": ":app", "fields": {"score": 10}, "version": 1}}, {"kind": \#
                "upsert", "object": {"className": "GameScore", "objectId": "abc", "datastore": ":app", \#
                "fields": {"score": 10}, "version": 1}}], "checkpoint": "c:7", "hasMore": true, \#
                "remaining": 12}
                """#,
            #"{"changes": [], "checkpoint": "c:8", "hasMore": false}"#
        ],
        properties: [
            "changes": .init("The changes, in commit order."),
            "checkpoint": .init("Where the next pull starts; store it once the changes are applied."),
            "hasMore": .init("Whether more changes are waiting."),
            "remaining": .init(
                "An estimate of the changes still waiting; absent when unknown.",
                constraints: [.minimum(0)]),
            "roles": .init("""
                The caller's effective role names, sorted, on a pull from scratch and on the first page after they \
                changed since the checkpoint (absent otherwise, and for the admin and anonymous callers), so that \
                a client checking ACLs offline learns them.
                """, constraints: [.maxItems(1000)])
        ])
}

extension MutationResult: UnionSchema {
    var schemaVariant: String {
        switch self {
        case .applied: "AppliedResult"
        case .rejected: "RejectedResult"
        }
    }

    static let unionNotes = UnionNotes(
        """
            What the server did with one mutation. A mutation ID the server has already applied gets the first \
            result again (status, version, merges or error), with the object's current state.
            """,
        discriminator: "status",
        variants: [
            .init(
                "AppliedResult", "The change was applied.",
                recorded: [
                    #"""
                        {"mutationId": "m1", "status": "applied", "version": 4, "object": {"className": "GameScore", \#
                        "objectId": "abc", "datastore": ":app", "fields": {"score": 10}, "version": 4}, "merges": \#
                        [{"base": 10, "field": "score", "local": 15, "remote": 20, "resolution": "rule", "result": 25, \#
                        "rule": "sum"}]}
                        """#,
                    #"{"mutationId": "m2", "status": "applied", "version": 9}"#,
                ],
                properties: [
                    "version": .init("The object's new version.", constraints: [.minimum(0)]),
                    "object": .init("The object after the change; absent after a delete."),
                    "merges": .init("Merge decisions taken against concurrent changes; absent when none."),
                ]),
            .init(
                "RejectedResult", "The change was refused; nothing of it was applied.",
                recorded: [
                    #"{"mutationId": "m3", "status": "rejected", "error": {"code": "forbidden", "message": "no write access"}}"#
                ]),
        ])
}

extension PullChange: UnionSchema {
    var schemaVariant: String {
        switch self {
        case .upsert: "UpsertChange"
        case .tombstone: "TombstoneChange"
        case .removal: "RemovalChange"
        }
    }

    static let unionNotes = UnionNotes(
        "One entry of a pull page.",
        discriminator: "kind",
        variants: [
            .init(
                "UpsertChange", "The object as it is now: store it.",
                recorded: [
                    #"""
                        {"kind": "upsert", "object": {"className": "GameScore", "objectId": "abc", "datastore": ":app", \#
                        "fields": {"score": 10}, "version": 1}}
                        """#
                ]),
            .init(
                "TombstoneChange", "The object was deleted at `version`: delete it locally.",
                recorded: [#"{"kind": "tombstone", "className": "GameScore", "objectId": "abc", "version": 5}"#],
                properties: [
                    "className": .init(reference: "Identifier"),
                    "objectId": .init(reference: "Identifier"),
                    "version": .init("The version of the delete.", constraints: [.minimum(0)]),
                ]),
            .init(
                "RemovalChange",
                """
                    The object exists but the caller can no longer read it (its ACL, a role or the datastore role \
                    changed): purge it locally.
                    """,
                recorded: [#"{"kind": "removal", "className": "GameScore", "objectId": "abc"}"#],
                properties: [
                    "className": .init(reference: "Identifier"),
                    "objectId": .init(reference: "Identifier"),
                ]),
        ])
}
