import RooftopShared

extension ServerInfo: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        "What the server says about itself.",
        recorded: [
            #"""
                {"limits": {"defaultPullPageSize": 500, "defaultQueryLimit": 100, "maxDatastoreBytes": \#
                10485760, "maxMutationsPerPush": 500, "maxNestingDepth": 32, "maxPullPageBytes": \#
                4194304, "maxPullPageSize": 1000, "maxPushBytes": 2097152, "maxQueryLimit": 1000, \#
                "maxRecordBytes": 102400, "maxRecordsPerDatastore": 100000, "maxRequestBodyBytes": \#
                8388608}, "protocolVersion": 1, "version": "0.1.0"}
                """#
        ],
        properties: [
            "version": .init("The server's software version."),
            "protocolVersion": .init("The wire protocol version (1 for this server).")
        ])
}

extension Limits: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        "The limits the server enforces, so that clients can check sizes before queueing a change.",
        recorded: [
            #"""
                {"defaultPullPageSize": 500, "defaultQueryLimit": 100, "maxDatastoreBytes": 10485760, \#
                "maxMutationsPerPush": 500, "maxNestingDepth": 32, "maxPullPageBytes": 4194304, \#
                "maxPullPageSize": 1000, "maxPushBytes": 2097152, "maxQueryLimit": 1000, \#
                "maxRecordBytes": 102400, "maxRecordsPerDatastore": 100000, "maxRequestBodyBytes": \#
                8388608}
                """#
        ],
        properties: [
            "maxRecordBytes": .init("The largest object, in bytes. Default 102400.", constraints: [.minimum(1)]),
            "maxRecordsPerDatastore": .init(
                "The most objects in one datastore. Default 100000.",
                constraints: [.minimum(1)]),
            "maxDatastoreBytes": .init(
                "The largest datastore, in bytes. Default 10485760.",
                constraints: [.minimum(1)]),
            "maxPushBytes": .init("The largest push, in bytes. Default 2097152.", constraints: [.minimum(1)]),
            "maxRequestBodyBytes": .init(
                "The largest request body, in bytes. Default 8388608.",
                constraints: [.minimum(1)]),
            "maxNestingDepth": .init(
                "The deepest nesting of lists and JSON in a value. Default 32.",
                constraints: [.minimum(1)]),
            "maxQueryLimit": .init("The largest query `limit`. Default 1000.", constraints: [.minimum(1)]),
            "defaultQueryLimit": .init(
                "The query `limit` when none is given. Default 100.",
                constraints: [.minimum(1)]),
            "maxMutationsPerPush": .init("The most mutations in one push. Default 500.", constraints: [.minimum(1)]),
            "maxPullPageSize": .init("The largest pull `limit`. Default 1000.", constraints: [.minimum(1)]),
            "defaultPullPageSize": .init(
                "The pull `limit` when none is given. Default 500.",
                constraints: [.minimum(1)]),
            "maxPullPageBytes": .init("The largest pull page, in bytes. Default 4194304.", constraints: [.minimum(1)])
        ])
}

extension HealthStatus: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        "The server is up.",
        recorded: [
            #"{"status": "ok", "version": "0.1.0"}"#
        ],
        properties: [
            "status": .init(
                "Always `ok` (a server that is not up does not answer).",
                schema: """
                type: string
                const: ok
                """),
            "version": .init("The server's software version.")
        ])
}

extension RooftopError: DocumentedSchema {
    static let schemaNotes = SchemaNotes(
        """
            Every error response has this body. `code` is stable and what clients switch on; new codes may appear, \
            so treat unknown ones as failures of the request. The HTTP status follows the code:
            
            | code | status |
            |---|---|
            | `request` | 400 |
            | `illegalArgument` | 400 |
            | `badType` | 400 |
            | `badIndex` | 400 |
            | `invalidQuery` | 400 |
            | `invalidOperation` | 400 |
            | `badState` | 400 |
            | `auth` | 401 |
            | `disallowed` | 403 |
            | `quota` | 403 |
            | `notFound` | 404 |
            | `deleted` | 404 |
            | `methodNotAllowed` | 405 |
            | `exists` | 409 |
            | `alreadyOpen` | 409 |
            | `sizeLimit` | 413 |
            | `retryLater` | 429 |
            | `historyExpired` | 410 |
            | `server` | 500 |
            | `internal` | 500 |
            """,
        examples: [
            #"{"code": "notFound", "message": "no GameScore object abc"}"#
        ],
        properties: [
            "code": .init(
                "The error code.",
                constraints: [
                    .examples(
                        [
                            "request", "illegalArgument", "badType", "badIndex", "invalidQuery", "invalidOperation",
                            "badState", "auth", "disallowed", "quota", "notFound", "deleted", "methodNotAllowed",
                            "exists", "alreadyOpen", "sizeLimit", "retryLater", "historyExpired", "server", "internal"
                        ].map { "\"\($0)\"" })
                ]),
            "message": .init("What went wrong, for people."),
            "field": .init("The field or member concerned, when one is."),
            "position": .init("The offset in a query text where parsing failed.")
        ])
}
