import HTTPTypes
import Hummingbird
import NIOCore
import RooftopShared

/// The admin dashboard at `/dashboard`: server-rendered pages over the same services as the REST
/// API, called as the admin (no second implementation of access rules, queries or values).
///
/// Signing in exchanges the admin key for a session cookie (``DashboardSessions``); sign-in
/// attempts are throttled per client address like log-ins. Every change is a POST form carrying
/// the session's CSRF token; pages are sent with a strict Content-Security-Policy (no scripts,
/// styles from this server only) and are never cached.
///
/// Each subject's pages are a controller of their own, on the shared ``DashboardPages``:
/// overview, datastores (with their change feed), objects, users, roles and classes; each page's
/// template reads a typed model (``DashboardPage``).
struct DashboardRoutes {
    let services: ServerServices
    let sessions: DashboardSessions
    /// Whether the cookie is `Secure` (always, unless the server runs plain HTTP for development).
    let secureCookie: Bool

    typealias Context = RooftopRequestContext

    func register(on router: Router<Context>) {
        let pages = DashboardPages(services: services, sessions: sessions, secureCookie: secureCookie)
        let dashboard = router.group("dashboard")
        dashboard.get { request, _ in
            try await pages.session(request) == nil
                ? DashboardPages.redirect("/dashboard/login") : DashboardPages.redirect("/dashboard/overview")
        }
        dashboard.get("style.css") { _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "text/css; charset=utf-8"
            headers[.cacheControl] = "max-age=300"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: DashboardTemplates.stylesheet)))
        }
        dashboard.get("login") { _, _ in
            DashboardPages.html(DashboardTemplates.render("login", EmptyPage(), layout: DashboardLayout(title: "Sign in")))
        }
        dashboard.post("login") { request, context in await pages.signIn(request, context) }
        dashboard.post("logout") { request, _ in
            guard let session = try await pages.session(request) else { return DashboardPages.redirect("/dashboard/login") }
            let form = try await DashboardForm.read(request)
            guard sessions.checkCSRF(form["csrf"], for: session) else { return DashboardPages.forbidden() }
            try await sessions.revoke(session)
            var response = DashboardPages.redirect("/dashboard/login")
            response.setCookie(pages.cookie(value: "", maxAge: 0))
            return response
        }
        DashboardOverviewController(pages: pages).register(on: dashboard)
        DashboardDatastoresController(pages: pages).register(on: dashboard)
        DashboardObjectsController(pages: pages).register(on: dashboard)
        DashboardUsersController(pages: pages).register(on: dashboard)
        DashboardRolesController(pages: pages).register(on: dashboard)
        DashboardClassesController(pages: pages).register(on: dashboard)
    }
}

/// `/dashboard/overview`: counts, live connections and this process's pushes and pulls.
struct DashboardOverviewController {
    let pages: DashboardPages

    func register(on dashboard: RouterGroup<DashboardPages.Context>) {
        let services = pages.services
        dashboard.get("overview") { request, _ in
            await pages.page(request, "Overview", "overview") { _ in
                let statistics = try await services.storage.statistics()
                let minutes = services.activity.last(10).reversed().map { minute in
                    let time = Timestamp(millisecondsSinceEpoch: minute.minute * 60_000).description
                    return OverviewPage.Minute(
                        minute: String(time.dropFirst(11).prefix(5)), pushes: minute.pushes, pulls: minute.pulls)
                }
                return OverviewPage(
                    objects: statistics.objects, datastores: statistics.datastores, users: statistics.users,
                    liveConnections: await services.live.connectionCount, activity: minutes,
                    version: RooftopServerInfo.version)
            }
        }
    }
}
