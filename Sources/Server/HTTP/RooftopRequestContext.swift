import Hummingbird
import NIOCore
import RooftopShared

/// The per-request context: Hummingbird's core storage plus who the caller is.
public struct RooftopRequestContext: RequestContext {
    /// Hummingbird's storage (logger with request ID, route parameters).
    public var coreContext: CoreRequestContextStorage
    /// The caller, set by ``AuthenticationMiddleware``; anonymous until then.
    public var access: AccessContext = .anonymous
    /// The session token the caller sent, if any.
    public var sessionToken: String?
    /// The client's IP address, for throttling: the TCP peer's, or behind a trusted proxy the one
    /// server reads from `X-Forwarded-For` (see `ServerConfiguration.trustedProxies`).
    public var clientAddress: String?

    /// Creates the context for a request arriving on a channel.
    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.clientAddress = source.channel.remoteAddress?.ipAddress
    }

    /// Bodies are size-checked by ``RequestBody`` against the configured limit instead.
    public var maxUploadSize: Int { .max }
}
