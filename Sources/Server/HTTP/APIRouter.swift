import Foundation
import Hummingbird
import Logging
import Prometheus
import RooftopShared

/// Builds the router: the unauthenticated operational endpoints (`/health`, `/openapi.yaml`,
/// `/openapi.json`, `/metrics`) and the versioned API under `/v1`.
struct APIRouter {
    let services: ServerServices
    let configuration: ServerConfiguration

    func build() -> Router<RooftopRequestContext> {
        let router = Router(context: RooftopRequestContext.self)
        router.middlewares.add(RequestIDMiddleware())
        // First: every later step (throttles, logs) sees the client behind a trusted proxy.
        router.middlewares.add(ClientAddressMiddleware(proxies: services.proxies))
        // A line per request at `debug`: at the default `info` a busy server's log would be
        // nothing but requests (`--log-level debug` shows them).
        router.middlewares.add(LogRequestsMiddleware(.debug))
        router.middlewares.add(MetricsMiddleware())
        router.middlewares.add(ErrorMiddleware())
        // Inside the error middleware, which answers its `timeout` as 503.
        router.middlewares.add(RequestDeadlineMiddleware(timeout: configuration.requestTimeout))

        let operational = APIRoutes(router, at: "", limits: services.limits)
        operational.on(API.getHealth) { _, _ in HealthStatus(status: "ok", version: RooftopServerInfo.version) }
        // Put together when first asked for, once per process: a server starts without that work.
        operational.on(raw: API.getOpenAPIDocumentYAML) { _, _ in
            Response(
                status: .ok, headers: [.contentType: OpenAPIDocument.yamlContentType],
                body: .init(byteBuffer: .init(bytes: try OpenAPIDocument.shared.get().yaml)))
        }
        operational.on(raw: API.getOpenAPIDocument) { _, _ in
            Response(
                status: .ok, headers: [.contentType: OpenAPIDocument.jsonContentType],
                body: .init(byteBuffer: .init(bytes: try OpenAPIDocument.shared.get().json)))
        }
        let registry = services.metrics
        let metricsToken = configuration.metricsToken.map { SessionToken.hash($0) }
        operational.on(raw: API.getMetrics) { request, _ in
            if let metricsToken {
                // Compared as hashes: the time taken says nothing of how much of the token matched.
                let given = request.headers[.authorization].map { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : "" }
                guard let given, SessionToken.hash(given) == metricsToken else {
                    throw RooftopError(.auth, "/metrics needs its bearer token (Authorization: Bearer TOKEN)")
                }
            }
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                body: .init(byteBuffer: .init(bytes: registry.emitToBuffer())))
        }

        // The admin dashboard: HTML pages with their own sign-in (the admin key, for a session
        // cookie), outside the JSON API's authentication.
        DashboardRoutes(
            services: services,
            sessions: DashboardSessions(storage: services.storage, clock: configuration.clock),
            secureCookie: !configuration.insecureHTTP
        ).register(on: router)
        let api = APIRoutes(
            router, at: "/v1", limits: services.limits,
            middleware: AuthenticationMiddleware(appId: configuration.appId, auth: services.auth))
        let limits = services.limits
        api.on(API.getServerInfo) { _, _ in ServerInfo(version: RooftopServerInfo.version, limits: limits) }
        // The live endpoint is a WebSocket (see LiveEndpoint); a request that was not upgraded
        // lands here, after authentication: a bad session answers 401, a plain GET 400.
        api.on(raw: API.live) { _, _ -> Response in
            throw RooftopError(
                .request, "\(LiveEndpoint.path) is a WebSocket endpoint: connect with an HTTP/1.1 upgrade request")
        }
        AccountRoutes(services: services).register(on: api)
        DatastoreRoutes(services: services).register(on: api)
        ObjectRoutes(services: services).register(on: api)
        SyncRoutes(services: services).register(on: api)
        // Last: router middlewares wrap only later routes, so this one runs only where no route
        // matched, to tell a wrong method (405) from an unknown path (404).
        router.middlewares.add(MethodNotAllowedMiddleware(routes: router.routes))
        return router
    }
}
