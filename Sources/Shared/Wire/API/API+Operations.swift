extension API {
    // MARK: Operations: The operational endpoints: health, metrics, this document, the server's limits.

    /// `GET /health`: Liveness.
    public static let getHealth = APIEndpoint<NoBody, HealthStatus>(
        .get, "/health",
        id: "getHealth", tag: .operations, access: .anyone,
        summary: "Liveness",
        details: "Answers while the server is up.",
        answer: "The server is up.",
        errors: [])

    /// `GET /metrics`: Prometheus metrics.
    public static let getMetrics = APIEndpoint<NoBody, String>(
        .get, "/metrics",
        id: "getMetrics", tag: .operations, access: .anyone,
        summary: "Prometheus metrics",
        details: """
            Request counts and durations and the process metrics, in the Prometheus text format. Open to anyone who \
            reaches the port unless the server has a metrics token (`--metrics-token`), which is then required as \
            `Authorization: Bearer TOKEN`.
            """,
        answer: "The metrics.",
        content: .other(mediaType: "text/plain; version=0.0.4", type: "string", description: "The Prometheus text exposition format."),
        errors: [.unauthorized])

    /// `GET /openapi.yaml`: This document, as YAML.
    public static let getOpenAPIDocumentYAML = APIEndpoint<NoBody, String>(
        .get, "/openapi.yaml",
        id: "getOpenAPIDocumentYAML", tag: .operations, access: .anyone,
        summary: "This document, as YAML",
        details: """
            The OpenAPI 3.1 description of the API, generated when the server starts from the API's typed endpoints \
            (`RooftopShared`'s `API`, which the server's routes and its clients use) and the schemas they name.
            """,
        answer: "The document.",
        content: .other(mediaType: "application/yaml", type: "object", description: "An OpenAPI 3.1 document in YAML (a YAML mapping)."),
        errors: [])

    /// `GET /openapi.json`: This document, as JSON.
    public static let getOpenAPIDocument = APIEndpoint<NoBody, String>(
        .get, "/openapi.json",
        id: "getOpenAPIDocument", tag: .operations, access: .anyone,
        summary: "This document, as JSON",
        details: """
            The OpenAPI 3.1 description of the API, converted from `/openapi.yaml` when the server starts.
            """,
        answer: "The document.",
        content: .other(mediaType: "application/json", type: "object", description: "An OpenAPI 3.1 document."),
        errors: [])

    /// `GET /v1/info`: Server version and limits.
    public static let getServerInfo = APIEndpoint<NoBody, ServerInfo>(
        .get, "/v1/info",
        id: "getServerInfo", tag: .operations, access: .application,
        summary: "Server version and limits",
        details: """
            The server's version, the protocol version it speaks and the limits it enforces, so that clients can check \
            sizes before queueing a change.
            """,
        answer: "The server information.",
        errors: [.unauthorized] + APIOperation.ErrorAnswer.always)
}
