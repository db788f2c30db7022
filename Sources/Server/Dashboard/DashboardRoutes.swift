import Foundation
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
struct DashboardRoutes {
    let services: ServerServices
    let sessions: DashboardSessions
    /// Whether the cookie is `Secure` (always, unless the server runs plain HTTP for development).
    let secureCookie: Bool

    typealias Context = RooftopRequestContext
    typealias Session = DashboardSessions.Session

    /// The rows of a listing page.
    static let pageSize = 50

    func register(on router: Router<Context>) {
        let dashboard = router.group("dashboard")
        dashboard.get { request, _ in
            try await session(request) == nil ? Self.redirect("/dashboard/login") : Self.redirect("/dashboard/overview")
        }
        dashboard.get("style.css") { _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "text/css; charset=utf-8"
            headers[.cacheControl] = "max-age=300"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: DashboardTemplates.stylesheet)))
        }
        dashboard.get("login") { _, _ in
            Self.html(DashboardTemplates.render("login", [:], layout: ["title": "Sign in"]))
        }
        dashboard.post("login") { request, context in await signIn(request, context) }
        dashboard.post("logout") { request, _ in
            guard let session = try await session(request) else { return Self.redirect("/dashboard/login") }
            let form = try await DashboardForm.read(request)
            guard sessions.checkCSRF(form["csrf"], for: session) else { return Self.forbidden() }
            try await sessions.revoke(session)
            var response = Self.redirect("/dashboard/login")
            response.setCookie(cookie(value: "", maxAge: 0))
            return response
        }
        registerOverview(dashboard)
        registerDatastores(dashboard)
        registerObjects(dashboard)
        registerAccounts(dashboard)
    }

    // MARK: Pages

    private func registerOverview(_ dashboard: RouterGroup<Context>) {
        dashboard.get("overview") { request, _ in
            await page(request, "Overview", "overview") { _ in
                let statistics = try await services.storage.statistics()
                let minutes = services.activity.last(10).reversed().map { minute -> [String: Any] in
                    let time = Timestamp(millisecondsSinceEpoch: minute.minute * 60_000).description
                    return ["minute": String(time.dropFirst(11).prefix(5)), "pushes": minute.pushes, "pulls": minute.pulls]
                }
                return [
                    "objects": statistics.objects, "datastores": statistics.datastores, "users": statistics.users,
                    "liveConnections": await services.live.connectionCount, "activity": minutes,
                    "version": RooftopServerInfo.version,
                ]
            }
        }
    }

    private func registerDatastores(_ dashboard: RouterGroup<Context>) {
        let limits = services.limits
        dashboard.get("datastores") { request, _ in
            await page(request, "Datastores", "datastores") { _ in
                let after = Int64(DashboardForm.query(request)["after"] ?? "") ?? 0
                let records = try await services.storage.allDatastores(afterKey: after, limit: Self.pageSize + 1)
                let rows = records.prefix(Self.pageSize).map { record -> [String: Any] in
                    [
                        "link": DashboardPath.datastore(record.key), "id": record.id.rawValue, "owner": record.ownerId ?? "",
                        "title": record.title ?? "", "records": record.recordCount, "maxRecords": limits.maxRecordsPerDatastore,
                        "bytes": record.sizeBytes, "maxBytes": limits.maxDatastoreBytes,
                    ]
                }
                var model: [String: Any] = ["datastores": rows]
                if records.count > Self.pageSize, let last = records.prefix(Self.pageSize).last {
                    model["next"] = "/dashboard/datastores?after=\(last.key)"
                }
                return model
            }
        }
        dashboard.get("datastores/:key") { request, context in
            await page(request, "Datastore", "datastore") { session in
                let record = try await datastore(context)
                let classes = try await services.storage.classNames(datastoreKey: record.key)
                return [
                    "title": "Datastore \(record.id.rawValue)", "kind": "\(record.id.kind)", "owner": record.ownerId ?? "—",
                    "records": record.recordCount, "maxRecords": limits.maxRecordsPerDatastore,
                    "recordsPercent": Self.percent(record.recordCount, of: limits.maxRecordsPerDatastore),
                    "bytes": record.sizeBytes, "maxBytes": limits.maxDatastoreBytes,
                    "bytesPercent": Self.percent(record.sizeBytes, of: limits.maxDatastoreBytes),
                    "sequence": record.sequence, "feedLink": DashboardPath.datastore(record.key) + "/feed",
                    "classes": classes.map { ["name": $0, "link": DashboardPath.classPage(record.key, $0)] },
                    "browseAction": DashboardPath.datastore(record.key) + "/browse",
                    "shareable": record.id.kind == .shareable,
                    "roles": record.roles.sorted { $0.key < $1.key }.map { ["principal": $0.key.description, "role": $0.value.name] },
                    "shareAction": DashboardPath.datastore(record.key) + "/share",
                ]
            }
        }
        dashboard.get("datastores/:key/browse") { request, context in
            guard try await session(request) != nil else { return Self.redirect("/dashboard/login") }
            let key = try context.parameters.require("key", as: Int64.self)
            let className = DashboardForm.query(request)["class"] ?? ""
            return Self.redirect(DashboardPath.classPage(key, className))
        }
        dashboard.post("datastores/:key/share") { request, context in
            await action(request) { _, form in
                let record = try await datastore(context)
                let principal = try Principal(try form.required("principal"))
                let roleName = try form.required("role")
                guard let role = SharingRole.allCases.first(where: { $0.name == roleName }), role != .owner else {
                    throw RooftopError(.illegalArgument, "'\(roleName.prefix(40))' is not editor, viewer or none", field: "role")
                }
                _ = try await services.datastores.setRole(role, for: principal, on: record.id, by: Self.admin(for: record))
                return DashboardPath.datastore(record.key) + "?done=shared"
            }
        }
        dashboard.get("datastores/:key/feed") { request, context in
            await page(request, "Change feed", "feed") { _ in
                let record = try await datastore(context)
                let count = 50
                let (after, _) = record.sequence.subtractingReportingOverflow(Int64(count))
                let changed = try await services.storage.changes(
                    datastoreKey: record.key, after: max(0, after), limit: count, classes: nil)
                return [
                    "datastore": record.id.rawValue, "datastoreLink": DashboardPath.datastore(record.key), "count": count,
                    "changes": changed.sorted { $0.sequence > $1.sequence }.map { object -> [String: Any] in
                        [
                            "sequence": object.sequence, "change": object.isDeleted ? "delete" : "upsert",
                            "className": object.className, "objectId": object.objectId, "version": object.version,
                            "hasLink": !object.isDeleted,
                            "link": DashboardPath.object(record.key, object.className, object.objectId),
                        ]
                    },
                ]
            }
        }
    }

    private func registerObjects(_ dashboard: RouterGroup<Context>) {
        dashboard.get("datastores/:key/classes/:className") { request, context in
            await page(request, "Objects", "browse") { _ in
                let record = try await datastore(context)
                let className = try context.parameter("className")
                try Identifier.validate(className, as: .className)
                let text = DashboardForm.query(request)["q"] ?? ""
                let effective = text.trimmingCharacters(in: .whitespaces).isEmpty ? "limit \(Self.pageSize)" : text
                let response = try await services.queries.find(
                    .text(className: className, text: effective, parameters: []), in: record.id,
                    context: Self.admin(for: record))
                let columns = Array(Set(response.objects.flatMap(\.fields.keys))).sorted().prefix(12)
                return [
                    "title": className, "datastore": record.id.rawValue, "datastoreLink": DashboardPath.datastore(record.key),
                    "settingsLink": DashboardPath.classSettings(className),
                    "action": DashboardPath.classPage(record.key, className), "query": text,
                    "shown": response.objects.count, "total": response.totalCount, "columns": Array(columns),
                    "rows": response.objects.map { object -> [String: Any] in
                        [
                            "objectId": object.objectId, "version": object.version,
                            "updatedAt": object.updatedAt?.description ?? "",
                            "link": DashboardPath.object(record.key, className, object.objectId),
                            "cells": columns.map { DashboardValues.view(object.fields[$0], datastoreKey: record.key) },
                        ]
                    },
                ]
            }
        }
        let objectPath = "datastores/:key/classes/:className/objects/:objectId"
        dashboard.get(RouterPath(objectPath)) { request, context in
            await page(request, "Object", "object") { _ in
                let record = try await datastore(context)
                let (className, objectId) = (try context.parameter("className"), try context.parameter("objectId"))
                let object = try await services.objects.get(
                    datastore: record.id, className: className, objectId: objectId, includes: [],
                    context: Self.admin(for: record)
                ).object
                var fields: [[String: Any]] = []
                for (name, value) in object.fields.sorted(by: { $0.key < $1.key }) {
                    var view = DashboardValues.view(value, datastoreKey: record.key, limit: 2_000)
                    view["name"] = name
                    view["json"] = try DashboardValues.json(value)
                    fields.append(view)
                }
                let path = DashboardPath.object(record.key, className, objectId)
                return [
                    "title": "\(className)/\(objectId)", "className": className,
                    "classLink": DashboardPath.classPage(record.key, className), "datastore": record.id.rawValue,
                    "datastoreLink": DashboardPath.datastore(record.key), "version": object.version,
                    "createdAt": object.createdAt?.description ?? "", "updatedAt": object.updatedAt?.description ?? "",
                    "fields": fields, "acl": try object.acl.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) } ?? "none",
                    "saveAction": path, "deleteAction": path + "/delete",
                ]
            }
        }
        dashboard.post(RouterPath(objectPath)) { request, context in
            await action(request) { _, form in
                let record = try await datastore(context)
                let (className, objectId) = (try context.parameter("className"), try context.parameter("objectId"))
                let updates = try Self.updates(from: form)
                let path = DashboardPath.object(record.key, className, objectId)
                guard !updates.isEmpty else { return path + "?done=unchanged" }
                let mutation = Mutation(
                    datastore: record.id, className: className, objectId: objectId,
                    baseVersion: Int64(form["baseVersion"] ?? ""), change: .update(updates, acl: nil))
                let result = try await services.objects.write(
                    mutation, context: Self.admin(for: record), idempotent: false, mustExist: true)
                if let error = result.error { throw error }
                return path + "?done=saved"
            }
        }
        dashboard.post(RouterPath(objectPath + "/delete")) { request, context in
            await action(request) { _, form in
                guard form["confirm"] == "yes" else { throw RooftopError(.illegalArgument, "confirm the deletion") }
                let record = try await datastore(context)
                let className = try context.parameter("className")
                let mutation = Mutation(
                    datastore: record.id, className: className, objectId: try context.parameter("objectId"),
                    change: .delete)
                let result = try await services.objects.write(
                    mutation, context: Self.admin(for: record), idempotent: false, mustExist: true)
                if let error = result.error { throw error }
                return DashboardPath.classPage(record.key, className) + "?done=deleted"
            }
        }
    }

    private func registerAccounts(_ dashboard: RouterGroup<Context>) {
        dashboard.get("users") { request, _ in
            await page(request, "Users", "users") { _ in
                let page = try await services.auth.users(after: DashboardForm.query(request)["after"], limit: Self.pageSize)
                var model: [String: Any] = [
                    "users": page.users.map { user -> [String: Any] in
                        [
                            "link": DashboardPath.user(user.objectId), "username": user.username, "id": user.objectId,
                            "email": user.email ?? "", "roles": user.roles.joined(separator: ", "),
                            "createdAt": user.createdAt?.description ?? "",
                        ]
                    }
                ]
                if let next = page.next { model["next"] = "/dashboard/users?after=" + DashboardPath.segment(next) }
                return model
            }
        }
        dashboard.post("users") { request, _ in
            await action(request) { _, form in
                let signUp = SignUpRequest(
                    username: try form.required("username"), password: form["password"] ?? "",
                    email: (form["email"] ?? "").isEmpty ? nil : form["email"])
                let session = try await services.auth.signUp(signUp)
                // An account made here signs in nowhere: its sign-up session ends at once.
                try await services.auth.logOut(token: session.sessionToken)
                return DashboardPath.user(session.user.objectId) + "?done=created"
            }
        }
        dashboard.get("users/:userId") { request, context in
            await page(request, "User", "user") { _ in
                let userId = try context.parameter("userId")
                let record = try await services.auth.existingUser(id: userId)
                let info = try await services.auth.userInfo(record)
                let sessions = try await services.auth.sessions(ofUser: userId)
                return [
                    "title": "User \(record.username)", "id": record.id, "email": record.email ?? "",
                    "roles": info.roles.joined(separator: ", "), "createdAt": record.createdAt.description,
                    "sessions": sessions.map {
                        ["id": String($0.id.prefix(16)) + "…", "createdAt": $0.createdAt.description, "expiresAt": $0.expiresAt.description]
                    },
                    "revokeAction": DashboardPath.user(userId) + "/revoke",
                    "passwordAction": DashboardPath.user(userId) + "/password",
                ]
            }
        }
        dashboard.post("users/:userId/revoke") { request, context in
            await action(request) { _, _ in
                let userId = try context.parameter("userId")
                _ = try await services.auth.revokeSessions(userId: userId)
                return DashboardPath.user(userId) + "?done=revoked"
            }
        }
        dashboard.post("users/:userId/password") { request, context in
            await action(request) { _, form in
                let userId = try context.parameter("userId")
                try await services.auth.setPassword(SetPasswordRequest(password: form["password"] ?? ""), userId: userId)
                return DashboardPath.user(userId) + "?done=password"
            }
        }
        dashboard.get("roles") { request, _ in
            await page(request, "Roles", "roles") { _ in
                let graph = try await services.roles.graph()
                return ["roles": graph.roleNames.sorted().map { ["name": $0, "link": DashboardPath.role($0)] }]
            }
        }
        dashboard.post("roles") { request, _ in
            await action(request) { _, form in
                let role = try await services.roleService.create(
                    CreateRoleRequest(name: try form.required("name")), by: .admin)
                return DashboardPath.role(role.name) + "?done=created"
            }
        }
        dashboard.get("roles/:name") { request, context in
            await page(request, "Role", "role") { _ in
                let name = try context.parameter("name")
                let role = try await services.roleService.get(name, by: .admin)
                return [
                    "title": "Role \(role.name)", "users": role.users,
                    "children": role.roles.map { ["name": $0, "link": DashboardPath.role($0)] },
                    "acl": try role.acl.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) } ?? "none",
                    "updateAction": DashboardPath.role(name), "deleteAction": DashboardPath.role(name) + "/delete",
                ]
            }
        }
        dashboard.post("roles/:name") { request, context in
            await action(request) { _, form in
                let name = try context.parameter("name")
                let users = (form["user"] ?? "").isEmpty ? [] : [form["user"] ?? ""]
                let children = (form["child"] ?? "").isEmpty ? [] : [form["child"] ?? ""]
                let request = form["change"] == "remove"
                    ? UpdateRoleRequest(removeUsers: users, removeRoles: children)
                    : UpdateRoleRequest(addUsers: users, addRoles: children)
                _ = try await services.roleService.update(name, request, by: .admin)
                return DashboardPath.role(name) + "?done=saved"
            }
        }
        dashboard.post("roles/:name/delete") { request, context in
            await action(request) { _, form in
                guard form["confirm"] == "yes" else { throw RooftopError(.illegalArgument, "confirm the deletion") }
                try await services.roleService.delete(try context.parameter("name"), by: .admin)
                return "/dashboard/roles?done=deleted"
            }
        }
        dashboard.get("classes") { request, _ in
            if let name = DashboardForm.query(request)["name"], !name.isEmpty {
                guard try await session(request) != nil else { return Self.redirect("/dashboard/login") }
                return Self.redirect(DashboardPath.classSettings(String(name)))
            }
            return await page(request, "Classes", "classes") { _ in [:] }
        }
        dashboard.get("classes/:className") { request, context in
            await page(request, "Class settings", "class") { _ in
                let className = try context.parameter("className")
                try Identifier.validate(className, as: .className)
                let settings = try await services.classes.settings(of: className)
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                return [
                    "title": "Class \(className)", "json": String(decoding: try encoder.encode(settings), as: UTF8.self),
                    "saveAction": DashboardPath.classSettings(className),
                ]
            }
        }
        dashboard.post("classes/:className") { request, context in
            await action(request) { _, form in
                let className = try context.parameter("className")
                try Identifier.validate(className, as: .className)
                let body: ClassSettingsChange
                do {
                    body = try JSONDecoder().decode(ClassSettingsChange.self, from: Data((form["settings"] ?? "").utf8))
                } catch let error as DecodingError {
                    throw RequestBody.describe(error)
                }
                try await services.classes.change(className, with: body)
                return DashboardPath.classSettings(className) + "?done=saved"
            }
        }
    }

    // MARK: Plumbing

    /// The signed-in session of a request, if any.
    /// - Throws: Storage errors.
    private func session(_ request: Request) async throws -> Session? {
        try await sessions.session(token: request.cookies[DashboardSessions.cookieName]?.value)
    }

    /// The signed-in session of a request, or the response to send instead: to the sign-in page
    /// without one, a failure page when it cannot be read.
    private func signedIn(_ request: Request, title: String) async -> SignedIn {
        do {
            guard let session = try await session(request) else { return .no(Self.redirect("/dashboard/login")) }
            return .yes(session)
        } catch {
            return .no(Self.failure(error, layout: ["title": title], back: "/dashboard/login"))
        }
    }

    /// A request's session, or what to answer without one.
    private enum SignedIn {
        case yes(Session)
        case no(Response)
    }

    /// The datastore a page names by key.
    /// - Throws: `notFound`.
    private func datastore(_ context: Context) async throws -> DatastoreRecord {
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

    /// A page for a signed-in admin; errors are shown on it, with their status.
    private func page(
        _ request: Request, _ title: String, _ template: String, _ build: (Session) async throws -> [String: Any]
    ) async -> Response {
        let session: Session
        switch await signedIn(request, title: title) {
        case .yes(let found): session = found
        case .no(let response): return response
        }
        var layout: [String: Any] = ["title": title, "signedIn": true, "csrf": sessions.csrfToken(for: session)]
        if let done = DashboardForm.query(request)["done"], let notice = Self.notices[String(done)] {
            layout["notice"] = notice
        }
        do {
            var model = try await build(session)
            model["csrf"] = sessions.csrfToken(for: session)
            if let pageTitle = model["title"] as? String { layout["title"] = pageTitle }
            return Self.html(DashboardTemplates.render(template, model, layout: layout))
        } catch {
            return Self.failure(error, layout: layout, back: "/dashboard/overview")
        }
    }

    /// A POST form for a signed-in admin with the session's CSRF token; `body` returns where to
    /// go next (303). A refusal is shown with its status.
    private func action(_ request: Request, _ body: (Session, DashboardForm) async throws -> String) async -> Response {
        let session: Session
        switch await signedIn(request, title: "Not done") {
        case .yes(let found): session = found
        case .no(let response): return response
        }
        let layout: [String: Any] = ["title": "Not done", "signedIn": true, "csrf": sessions.csrfToken(for: session)]
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
    private static func failure(_ error: any Error, layout: [String: Any], back: String) -> Response {
        let failure = RooftopError.translating(error)
        var layout = layout
        layout["error"] = "\(failure.code): \(failure.message)"
        return html(DashboardTemplates.render("message", ["back": back], layout: layout), status: failure.httpStatus)
    }

    private func signIn(_ request: Request, _ context: Context) async -> Response {
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
                    "login", [:], layout: ["title": "Sign in", "error": "\(failure.code): \(failure.message)"]),
                status: failure.httpStatus)
            if failure.code == .retryLater {
                response.headers[.retryAfter] = String((error as? RetryLaterError)?.retryAfterSeconds ?? 60)
            }
            return response
        }
    }

    private func cookie(value: String, maxAge: Int) -> Cookie {
        Cookie(
            name: DashboardSessions.cookieName, value: value, maxAge: maxAge, path: "/dashboard", secure: secureCookie,
            httpOnly: true, sameSite: .strict)
    }

    /// The field updates an object's edit form asks for: each shown field whose value (empty:
    /// unset) differs from the value the page showed (its `original`), and a new field. A field
    /// left as shown is not sent, so that it does not overwrite a concurrent client's change under
    /// the `local` rule; a form without originals (not sent by the page) sets every field it names.
    /// - Throws: `illegalArgument` for a value that is not in the portable JSON form or a bad name.
    static func updates(from form: DashboardForm) throws -> [FieldUpdate] {
        let names = form.all("field")
        let values = form.all("value")
        let originals = form.all("original")
        guard names.count == values.count, originals.isEmpty || originals.count == names.count else {
            throw RooftopError(.illegalArgument, "the form's fields and values do not pair")
        }
        var updates: [FieldUpdate] = []
        for (index, (name, text)) in zip(names, values).enumerated() {
            try FieldUpdate.validateField(name)
            let operation: FieldOperation
            if text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                operation = .unset
            } else {
                let value = try DashboardValues.parse(text, field: name)
                if !originals.isEmpty, try DashboardValues.parse(originals[index], field: name) == value { continue }
                operation = .set(value)
            }
            updates.append(FieldUpdate(name, operation))
        }
        if let name = form["newField"]?.trimmingCharacters(in: .whitespaces), !name.isEmpty {
            try FieldUpdate.validateField(name)
            updates.append(FieldUpdate(name, .set(try DashboardValues.parse(form["newValue"] ?? "", field: name))))
        }
        return updates
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
                "message", ["back": "/dashboard/overview"],
                layout: ["title": "Refused", "error": "The form is stale or was not sent from the dashboard; reload the page."]),
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
