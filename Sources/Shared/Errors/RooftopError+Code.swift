extension RooftopError {
    /// A stable error code, modelled on the Dropbox Datastore API's error list.
    ///
    /// Codes are a struct rather than an enum so that new codes can be added, and so that a client
    /// can carry a code it does not know yet (sent by a newer server) without failing to decode.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The wire form, e.g. `"notFound"`.
        public let rawValue: String

        /// Wraps a wire code. Unknown codes are kept as they are.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The wire form.
        public var description: String { rawValue }

        /// An internal error or failed assertion; a bug in Rooftop.
        public static let `internal` = Code(rawValue: "internal")
        /// Reading or writing the local cache (the client's SQLite file) failed.
        public static let cache = Code(rawValue: "cache")
        /// The client or server was used after it was shut down.
        public static let shutdown = Code(rawValue: "shutdown")
        /// A closed object (a datastore, a subscription) was used.
        public static let closed = Code(rawValue: "closed")
        /// An object deleted locally was used.
        public static let deleted = Code(rawValue: "deleted")
        /// A value has the wrong type for the operation (e.g. incrementing a string).
        public static let badType = Code(rawValue: "badType")
        /// A fixed size limit was exceeded: record, datastore, push or request size.
        public static let sizeLimit = Code(rawValue: "sizeLimit")
        /// A list index is out of range.
        public static let badIndex = Code(rawValue: "badIndex")
        /// An argument is malformed: an invalid ID, a bad value, an out-of-range number.
        public static let illegalArgument = Code(rawValue: "illegalArgument")
        /// An object is in a state where the operation is not possible.
        public static let badState = Code(rawValue: "badState")
        /// The object, datastore, user or route does not exist (or is not visible to the caller).
        public static let notFound = Code(rawValue: "notFound")
        /// The target already exists (a user name taken, an object ID reused).
        public static let exists = Code(rawValue: "exists")
        /// The datastore or resource is already open.
        public static let alreadyOpen = Code(rawValue: "alreadyOpen")
        /// The caller may not do this: ACL, role, class permission or datastore role.
        public static let disallowed = Code(rawValue: "disallowed")
        /// The operation was cancelled.
        public static let cancelled = Code(rawValue: "cancelled")
        /// A network request failed.
        public static let network = Code(rawValue: "network")
        /// A request timed out.
        public static let timeout = Code(rawValue: "timeout")
        /// No connection to the server could be made.
        public static let noConnection = Code(rawValue: "noConnection")
        /// TLS failed: the server's certificate could not be verified, or the handshake failed (a
        /// connection closed during the handshake is `network`).
        public static let tls = Code(rawValue: "tls")
        /// The server failed while handling the request.
        public static let server = Code(rawValue: "server")
        /// Authentication failed or is missing: bad credentials, expired or revoked session.
        public static let auth = Code(rawValue: "auth")
        /// A quota, as opposed to a fixed limit, was exceeded.
        public static let quota = Code(rawValue: "quota")
        /// The server found the request invalid: malformed JSON, missing or unknown fields.
        public static let request = Code(rawValue: "request")
        /// The endpoint exists but does not answer this HTTP method (the server answers 405, with
        /// the methods it does answer in `Allow`).
        public static let methodNotAllowed = Code(rawValue: "methodNotAllowed")
        /// The server's response could not be understood.
        public static let response = Code(rawValue: "response")
        /// Wait and retry: the server is throttling (e.g. too many login attempts) or busy.
        public static let retryLater = Code(rawValue: "retryLater")
        /// The operation is not allowed on this object (e.g. incrementing a list, writing a
        /// reserved field).
        public static let invalidOperation = Code(rawValue: "invalidOperation")
        /// A local-only read found nothing cached for the request.
        public static let notCached = Code(rawValue: "notCached")
        /// A query is malformed: a parse error (with ``RooftopError/position``), a missing
        /// parameter or an operator applied to the wrong kind of operand.
        public static let invalidQuery = Code(rawValue: "invalidQuery")
        /// What the request builds on is older than the history the server keeps (its history
        /// retention, 30 days by default): a pull checkpoint (pull again from scratch, without
        /// one; the Swift client does this by itself) or a change's base version (pull the object
        /// and make the change again on its current state). HTTP 410.
        public static let historyExpired = Code(rawValue: "historyExpired")
    }
}

extension RooftopError.Code: Codable {
    /// Decodes a code from its wire string.
    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    /// Encodes the code as its wire string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
