import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import RooftopShared

/// What every dashboard page and form shares: the signed-in session, the page frame, CSRF checks,
/// failures shown with their status, and the security headers of every answer. The controllers
/// (``DashboardRoutes``) are built on it.
struct DashboardPages: Sendable {
    let services: ServerServices
    let sessions: DashboardSessions
    /// Whether the cookie is `Secure` (always, unless the server runs plain HTTP for development).
    let secureCookie: Bool

    typealias Context = RooftopRequestContext
    typealias Session = DashboardSessions.Session

    /// The rows of a listing page.
    static let pageSize = 50

    /// The signed-in session of a request, if any.
    /// - Throws: Storage errors.
    func session(_ request: Request) async throws -> Session? {
        try await sessions.session(token: request.cookies[DashboardSessions.cookieName]?.value)
    }

    /// The signed-in session of a request, or the response to send instead: to the sign-in page
    /// without one, a failure page when it cannot be read.
    private func signedIn(_ request: Request, title: String) async -> SignedIn {
        do {
            guard let session = try await session(request) else { return .no(Self.redirect("/dashboard/login")) }
            return .yes(session)
        } catch {
            return .no(Self.failure(error, layout: DashboardLayout(title: title), back: "/dashboard/login"))
        }
    }

    /// A request's session, or what to answer without one.
    private enum SignedIn {
        case yes(Session)
        case no(Response)
    }

    /// The datastore a page names by key.
    /// - Throws: `notFound`.
    func datastore(_ context: Context) async throws -> DatastoreRecord {
        let text = try context.parameter("key")
        guard let key = Int64(text), let record = try await services.storage.datastore(key: key) else {
            throw RooftopError(.notFound, "no datastore \(text.prefix(40))")
        }
        return record
    }

    /// The admin, as the owner of a private datastore (whose ID only names it with its owner).
    static func admin(for record: DatastoreRecord) -> AccessContext {
        record.id.kind == .private ? AccessContext(userId: record.ownerId, isAdmin: true) : .admin
    }

    /// A page for a signed-in admin, rendered with `template`; errors are shown on it, with their
    /// status.
    func page<Page: DashboardPage>(
        _ request: Request, _ title: String, _ template: String, _ build: (Session) async throws -> Page
    ) async -> Response {
        let session: Session
        switch await signedIn(request, title: title) {
        case .yes(let found): session = found
        case .no(let response): return response
        }
        var layout = DashboardLayout(title: title, signedIn: true, csrf: sessions.csrfToken(for: session))
        if let done = DashboardForm.query(request)["done"], let notice = Self.notices[String(done)] {
            layout.notice = notice
        }
        do {
            var model = try await build(session)
            model.csrf = sessions.csrfToken(for: session)
            if let pageTitle = model.title { layout.title = pageTitle }
            return Self.html(DashboardTemplates.render(template, model, layout: layout))
        } catch {
            return Self.failure(error, layout: layout, back: "/dashboard/overview")
        }
    }

    /// A POST form for a signed-in admin with the session's CSRF token; `body` returns where to
    /// go next (303). A refusal is shown with its status.
    func action(_ request: Request, _ body: (Session, DashboardForm) async throws -> String) async -> Response {
        let session: Session
        switch await signedIn(request, title: "Not done") {
        case .yes(let found): session = found
        case .no(let response): return response
        }
        let layout = DashboardLayout(title: "Not done", signedIn: true, csrf: sessions.csrfToken(for: session))
        do {
            let form = try await DashboardForm.read(request)
            guard sessions.checkCSRF(form["csrf"], for: session) else { return Self.forbidden() }
            return Self.redirect(try await body(session, form))
        } catch {
            let back = request.uri.path.hasSuffix("/delete") ? String(request.uri.path.dropLast(7)) : request.uri.path
            return Self.failure(error, layout: layout, back: back)
        }
    }

    /// A page showing why a page or form failed, with its status.
    static func failure(_ error: any Error, layout: DashboardLayout, back: String) -> Response {
        let failure = RooftopError.translating(error)
        var layout = layout
        layout.error = "\(failure.code): \(failure.message)"
        return html(DashboardTemplates.render("message", MessagePage(back: back), layout: layout), status: failure.httpStatus)
    }

    /// Signs in with the admin key of the form (throttled per client address): a session cookie
    /// and the overview, or the sign-in page again with why not.
    func signIn(_ request: Request, _ context: Context) async -> Response {
        do {
            let form = try await DashboardForm.read(request)
            try await services.auth.checkAdminKey(form["key"] ?? "", clientAddress: context.clientAddress)
            let (token, _) = try await sessions.start()
            var response = Self.redirect("/dashboard/overview")
            response.setCookie(cookie(value: token, maxAge: Int(DashboardSessions.lifetime / 1000)))
            return response
        } catch {
            let failure = RooftopError.translating(error)
            var response = Self.html(
                DashboardTemplates.render(
                    "login", EmptyPage(), layout: DashboardLayout(title: "Sign in", error: "\(failure.code): \(failure.message)")),
                status: failure.httpStatus)
            if failure.code == .retryLater {
                response.headers[.retryAfter] = String((error as? RetryLaterError)?.retryAfterSeconds ?? 60)
            }
            return response
        }
    }

    /// The session cookie (`value` empty and `maxAge` 0 to clear it).
    func cookie(value: String, maxAge: Int) -> Cookie {
        Cookie(
            name: DashboardSessions.cookieName, value: value, maxAge: maxAge, path: "/dashboard", secure: secureCookie,
            httpOnly: true, sameSite: .strict)
    }

    static let notices: [String: String] = [
        "saved": "Saved.", "unchanged": "Nothing changed.", "deleted": "Deleted.", "created": "Created.",
        "shared": "The sharing role was set.", "revoked": "The sessions were ended.",
        "password": "The password was set; the user's sessions were ended.",
    ]

    static func percent(_ value: Int, of limit: Int) -> Int {
        limit > 0 ? min(100 * value / limit, 999) : 0
    }

    static func redirect(_ location: String) -> Response {
        Response(status: .seeOther, headers: [.location: location, .cacheControl: "no-store"])
    }

    static func forbidden() -> Response {
        html(
            DashboardTemplates.render(
                "message", MessagePage(back: "/dashboard/overview"),
                layout: DashboardLayout(
                    title: "Refused", error: "The form is stale or was not sent from the dashboard; reload the page.")),
            status: .forbidden)
    }

    /// An HTML page with the dashboard's security headers.
    static func html(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-store"
        headers[Self.contentSecurityPolicy] =
            "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        headers[Self.frameOptions] = "DENY"
        headers[Self.contentTypeOptions] = "nosniff"
        headers[Self.referrerPolicy] = "no-referrer"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    static let contentSecurityPolicy = HTTPField.Name("Content-Security-Policy")!
    static let frameOptions = HTTPField.Name("X-Frame-Options")!
    static let contentTypeOptions = HTTPField.Name("X-Content-Type-Options")!
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
}
