import Hummingbird
import RooftopShared

/// Push (a batch of idempotent mutations) and pull (the change feed).
struct SyncRoutes {
    let services: ServerServices

    func register(on api: APIRoutes) {
        let services = self.services
        let limits = services.limits
        api.on(raw: API.push) { request, context in
            services.activity.record(.push)
            // Pushes are the bulk of what the server reads: their common shapes are read directly.
            let body = try await RequestBody.decode(PushRequest.self, from: request, limits: limits) {
                try $0.readPushRequest()
            }
            var writer = DocumentWriter(capacity: 64 << 10)
            try writer.pushResponse(try await services.push.push(body, context: context.access))
            return JSONBody.response(writer)
        }
        api.on(raw: API.pull) { request, context in
            services.activity.record(.pull)
            let body = try await RequestBody.decode(PullRequest.self, from: request, limits: limits)
            // Pages are the bulk of what the server sends: written directly, not through Codable.
            let page = try await services.pull.pull(body, context: context.access)
            var writer = DocumentWriter(capacity: page.documentCapacity)
            try writer.pullPage(page)
            return JSONBody.response(writer)
        }
    }
}
