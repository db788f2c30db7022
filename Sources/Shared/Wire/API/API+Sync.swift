extension API {
    // MARK: Sync: Push, pull and the live WebSocket.

    /// `POST /v1/push`: Push mutations.
    public static let push = APIEndpoint<PushRequest, PushResponse>(
        .post, "/v1/push",
        id: "push", tag: .sync, access: .application,
        summary: "Push mutations",
        details: """
            Applies queued mutations in order, each atomically and on its own: a rejected mutation is reported in its \
            result and does not stop the others. Idempotent per mutation ID and caller: a retried push gets the first \
            answers.
            """,
        body: "The mutations.",
        answer: "One result per mutation.",
        errors: [.badRequest, .unauthorized, .contentTooLarge] + APIOperation.ErrorAnswer.always)

    /// `POST /v1/pull`: Pull changes.
    public static let pull = APIEndpoint<PullRequest, PullResponse>(
        .post, "/v1/pull",
        id: "pull", tag: .sync, access: .application,
        summary: "Pull changes",
        details: """
            One page of the changes to a datastore since a checkpoint, in commit order, filtered by the caller's read \
            access (objects it lost access to come as `removal`).
            """,
        body: "The datastore and checkpoint.",
        answer: "The page.",
        errors: [.badRequest, .unauthorized, .forbidden, .notFound, .gone, .contentTooLarge] + APIOperation.ErrorAnswer.always)

    /// `GET /v1/live`: Live notifications (WebSocket).
    public static let live = APIEndpoint<NoBody, NoBody>(
        .get, "/v1/live",
        id: "live", tag: .sync, access: .application,
        summary: "Live notifications (WebSocket)",
        details: """
            A WebSocket (`Connection: Upgrade`, `Upgrade: websocket`) carrying JSON text messages. The upgrade needs \
            `X-Rooftop-Application-Id`; `X-Rooftop-Session-Token` (or `Authorization: Bearer`) or \
            `X-Rooftop-Admin-Key` sets the initial identity. A request that is not upgraded reaches the router: a \
            wrong application ID or credential gets `401 auth` (`429 retryLater` once wrong admin keys from the \
            client's address are throttled), anything else `400 request`.

            The client sends `LiveClientMessage`s: `{"type": "subscribe", "datastores": [...], "sessionToken"?: \
            "..."}` and `{"type": "unsubscribe", "datastores": [...]}`. The server sends `LiveServerMessage`s: \
            `{"type": "subscribed", "datastores": [...]}`, then `{"type": "changed", "datastore": "...", "sequence": \
            n}` whenever a change the caller may read is committed (pull to get it), and `{"type": "error", "error": \
            {...}, "datastore"?: "..."}` for a bad message, an unknown datastore or a bad session, without closing the \
            connection. Messages over 65536 bytes are refused.
            """,
        status: 101,
        answer: "Switching protocols: the WebSocket is open.",
        errors: [.badRequest, .unauthorized, .tooManyRequests], webSocket: true)
}
