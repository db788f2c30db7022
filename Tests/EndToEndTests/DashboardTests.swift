import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import Rooftop
import RooftopShared
import RooftopTestSupport
import Synchronization
import Testing

/// The admin dashboard (`/dashboard`) against the real server process: its sign-in, CSRF and
/// headers over HTTP, and a real browser (headless Chromium driven by Selenium) that signs in,
/// browses, queries and edits while a Rooftop client watches the edited object.
@Suite("Admin dashboard", .timeLimit(.minutes(5)))
struct DashboardTests {
    /// An HTTP client that trusts the server's CA and does not follow redirects (a browser's
    /// redirects are what the tests look at).
    struct Pages {
        let server: ServerProcess
        let http: HTTPClient

        init(_ server: ServerProcess) throws {
            self.server = server
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(server.caCertificatePath))
            var configuration = HTTPClient.Configuration(tlsConfiguration: tls, redirectConfiguration: .disallow)
            configuration.connectionPool.retryConnectionEstablishment = false
            configuration.timeout = .init(connect: .seconds(60), read: .seconds(120))
            http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        }
    }

    /// A form POST or a GET, with an optional session cookie, not following redirects.
    static func request(
        _ pages: Pages, _ method: HTTPMethod, _ path: String, form: String? = nil, cookie: String? = nil
    ) async throws -> (status: Int, headers: HTTPHeaders, body: String) {
        var request = HTTPClientRequest(url: pages.server.baseURL + path)
        request.method = method
        if let cookie { request.headers.add(name: "Cookie", value: "rooftop_dashboard=" + cookie) }
        if let form {
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            request.body = .bytes(ByteBuffer(string: form))
        }
        let response = try await pages.http.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 4 << 20)
        return (Int(response.status.code), response.headers, String(buffer: body))
    }

    /// Signs in with the admin key; returns the session cookie's value.
    static func signIn(_ pages: Pages) async throws -> String {
        let key = pages.server.adminKey.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let answer = try await request(pages, .POST, "/dashboard/login", form: "key=" + key)
        #expect(answer.status == 303)
        let setCookie = try #require(answer.headers["Set-Cookie"].first)
        #expect(setCookie.contains("HttpOnly") && setCookie.contains("Secure") && setCookie.contains("SameSite=Strict"))
        #expect(!setCookie.contains(pages.server.adminKey), "the key itself is never put in the cookie")
        let value = try #require(setCookie.split(separator: ";").first?.split(separator: "=", maxSplits: 1).last)
        return String(value)
    }

    /// The CSRF token in a page's forms.
    static func csrf(in page: String) throws -> String {
        let marker = #"name="csrf" value=""#
        let start = try #require(page.range(of: marker)).upperBound
        return String(page[start...].prefix { $0 != "\"" })
    }

    @Test("sign-in, sessions, CSRF, throttling and headers over HTTP")
    func signInAndForms() async throws {
        try await withServer { server in
            let api = try APIClient(server: server)
            let pages = try Pages(server)
            do {
                let object = try await api.create(
                    "Note", fields: ["text": "<b>bold</b>", "n": 1], acl: .publicReadWrite, objectId: "n1", admin: true)
                let datastoreKey = 1
                let objectPath = "/dashboard/datastores/\(datastoreKey)/classes/Note/objects/n1"

                // Without a session: to the sign-in page; a forged cookie is no session.
                let anonymous = try await Self.request(pages, .GET, "/dashboard/overview")
                #expect(anonymous.status == 303 && anonymous.headers["Location"].first == "/dashboard/login")
                let forged = try await Self.request(pages, .GET, "/dashboard/overview", cookie: "v1.99999999999999.0123456789abcdef0123456789abcdef.00")
                #expect(forged.status == 303)

                let cookie = try await Self.signIn(pages)
                let overview = try await Self.request(pages, .GET, "/dashboard/overview", cookie: cookie)
                #expect(overview.status == 200)
                #expect(overview.headers["Content-Security-Policy"].first?.contains("default-src 'none'") == true)
                #expect(overview.headers["X-Frame-Options"].first == "DENY")
                #expect(overview.headers["Cache-Control"].first == "no-store")

                // The object page escapes user data; its forms carry the session's CSRF token.
                let page = try await Self.request(pages, .GET, objectPath, cookie: cookie)
                #expect(page.status == 200)
                #expect(page.body.contains("&lt;b&gt;bold&lt;/b&gt;") && !page.body.contains("<b>bold</b>"))
                let token = try Self.csrf(in: page.body)
                let edit = "field=text&value=%22plain%22&field=n&value=2&baseVersion=\(object.version)"

                let missing = try await Self.request(pages, .POST, objectPath, form: edit, cookie: cookie)
                #expect(missing.status == 403, "a form without the CSRF token is refused")
                let wrong = try await Self.request(pages, .POST, objectPath, form: edit + "&csrf=0000", cookie: cookie)
                #expect(wrong.status == 403)
                let noSession = try await Self.request(pages, .POST, objectPath, form: edit + "&csrf=" + token)
                #expect(noSession.status == 303, "a form without a session goes to the sign-in, changing nothing")
                #expect(try await api.object(.app, className: "Note", objectId: "n1", token: nil)?.fields["n"] == 1)

                let saved = try await Self.request(pages, .POST, objectPath, form: edit + "&csrf=" + token, cookie: cookie)
                #expect(saved.status == 303 && saved.headers["Location"].first == objectPath + "?done=saved")
                let stored = try await api.object(.app, className: "Note", objectId: "n1", token: nil)
                #expect(stored?.fields["text"] == "plain" && stored?.fields["n"] == 2)

                // A value that is not in the portable JSON form is refused with a 400 page.
                let bad = try await Self.request(
                    pages, .POST, objectPath, form: "field=n&value=%7Bnope&csrf=" + token, cookie: cookie)
                #expect(bad.status == 400 && bad.body.contains("portable JSON"))

                // The other pages over the same services: the change feed, class settings, users'
                // sessions and passwords, roles, and a shareable datastore's sharing.
                let feed = try await Self.request(pages, .GET, "/dashboard/datastores/1/feed", cookie: cookie)
                #expect(feed.status == 200 && feed.body.contains(">n1<"), "the feed's tail lists the edited object")
                let settingsForm = "settings=" + (#"{"mergeRules": {"n": "sum"}}"#.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
                let savedSettings = try await Self.request(
                    pages, .POST, "/dashboard/classes/Note", form: settingsForm + "&csrf=" + token, cookie: cookie)
                #expect(savedSettings.status == 303)
                let settingsPage = try await Self.request(pages, .GET, "/dashboard/classes/Note", cookie: cookie)
                #expect(settingsPage.body.contains("&quot;sum&quot;"), "the merge rule was saved")
                let user = try await api.newUser("dash")
                let shared: DatastoreInfo = try await api.call(API.createDatastore, body: CreateDatastoreRequest(title: "Team"), token: user.token)
                let userPage = try await Self.request(pages, .GET, "/dashboard/users/\(user.id)", cookie: cookie)
                #expect(userPage.status == 200 && userPage.body.contains("<td><code>"), "the sign-up's session is listed")
                let revoked = try await Self.request(
                    pages, .POST, "/dashboard/users/\(user.id)/revoke", form: "csrf=" + token, cookie: cookie)
                #expect(revoked.status == 303)
                #expect(try await api.send(API.getCurrentUser, token: user.token).status == 401, "the session was ended")
                let shortPassword = try await Self.request(
                    pages, .POST, "/dashboard/users/\(user.id)/password", form: "password=short&csrf=" + token, cookie: cookie)
                #expect(shortPassword.status == 400)
                _ = try await Self.request(pages, .POST, "/dashboard/roles", form: "name=Staff&csrf=" + token, cookie: cookie)
                let member = try await Self.request(
                    pages, .POST, "/dashboard/roles/Staff", form: "user=\(user.id)&change=add&csrf=" + token, cookie: cookie)
                #expect(member.status == 303)
                #expect(try await Self.request(pages, .GET, "/dashboard/roles/Staff", cookie: cookie).body.contains(user.id))
                let listing = try await Self.request(pages, .GET, "/dashboard/datastores", cookie: cookie)
                let key = try #require(listing.body.range(of: ">\(shared.id.rawValue)<").map { _ in
                    listing.body.components(separatedBy: "/dashboard/datastores/").compactMap { Int($0.prefix { $0.isNumber }) }.max()
                } ?? nil)
                let share = try await Self.request(
                    pages, .POST, "/dashboard/datastores/\(key)/share", form: "principal=role%3AStaff&role=viewer&csrf=" + token,
                    cookie: cookie)
                #expect(share.status == 303)
                let sharing = try await Self.request(pages, .GET, "/dashboard/datastores/\(key)", cookie: cookie)
                #expect(sharing.body.contains("role:Staff") && sharing.body.contains("viewer"), "the sharing role was set")

                                // Signing out revokes the session.
                let out = try await Self.request(pages, .POST, "/dashboard/logout", form: "csrf=" + token, cookie: cookie)
                #expect(out.status == 303 && out.headers["Set-Cookie"].first?.contains("Max-Age=0") == true)
                #expect(try await Self.request(pages, .GET, "/dashboard/overview", cookie: cookie).status == 303)

                // Sign-in attempts are throttled: after five wrong keys, even the right one waits.
                for _ in 0..<5 {
                    #expect(try await Self.request(pages, .POST, "/dashboard/login", form: "key=wrong").status == 401)
                }
                let throttled = try await Self.request(
                    pages, .POST, "/dashboard/login",
                    form: "key=" + (server.adminKey.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""))
                #expect(throttled.status == 429)
                await api.shutdown()
                try await pages.http.shutdown()
            } catch {
                await api.shutdown()
                try? await pages.http.shutdown()
                throw error
            }
        }
    }

    /// Whether this machine can run the browser test: Python with Selenium, Chromium and its driver.
    static func browserAvailable() -> String? {
        for path in ["/usr/bin/chromium", "/usr/bin/chromedriver"] where !FileManager.default.isExecutableFile(atPath: path) {
            return "\(path) is missing (apt install chromium chromium-driver)"
        }
        return pythonLacks("selenium")
    }

    /// Why `python3` cannot import `module`, or `nil` when it can.
    static func pythonLacks(_ module: String) -> String? {
        let probe = ChildProcess()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        probe.arguments = ["python3", "-c", "import " + module]
        probe.standardOutput = .handle(FileHandle.nullDevice)
        probe.standardError = .handle(FileHandle.nullDevice)
        do { try probe.run() } catch { return "python3 cannot be started: \(error)" }
        probe.waitUntilExit()
        return probe.terminationStatus == 0 ? nil : "python3 has no \(module) (pip install -r Tests/dashboard/requirements.txt)"
    }

    /// Whether a test that needs `missing` must fail (CI sets `ROOFTOP_REQUIRE_BROWSER`) or may
    /// be skipped, loudly; `true` when it runs.
    static func mayRun(_ what: String, missing: String?) -> Bool {
        guard let missing else { return true }
        if ProcessInfo.processInfo.environment["ROOFTOP_REQUIRE_BROWSER"] == "1" {
            Issue.record("\(what) must run here, but \(missing)")
        } else {
            print("⚠️  \(what.uppercased()) SKIPPED: \(missing)")
        }
        return false
    }

    /// Runs `body` with an API client and a dashboard client of `server`, both shut down
    /// whatever happens.
    static func withClients<T>(_ server: ServerProcess, _ body: (APIClient, Pages) async throws -> T) async throws -> T {
        let api = try APIClient(server: server)
        let pages: Pages
        do {
            pages = try Pages(server)
        } catch {
            await api.shutdown()
            throw error
        }
        do {
            let result = try await body(api, pages)
            await api.shutdown()
            try await pages.http.shutdown()
            return result
        } catch {
            await api.shutdown()
            try? await pages.http.shutdown()
            throw error
        }
    }

    @Test("in headless Chromium: sign in, browse, query, edit; the edit reaches a client; screenshots saved")
    func browser() async throws {
        guard Self.mayRun("the dashboard browser test", missing: Self.browserAvailable()) else { return }
        let screenshots = ProcessInfo.processInfo.environment["ROOFTOP_SCREENSHOTS_DIR"]
            ?? TemporaryDirectory.make(prefix: "dashboard-screenshots")
        try await withServer { server in
            let api = try APIClient(server: server)
            let className = Unique.name("Ticket")
            do {
                let photo = Value.bytes(BinaryValue(Data([0x89, 0x50, 0x4E, 0x47]), mimeType: "image/png"))
                _ = try await api.create(
                    className,
                    fields: [
                        "name": "<script>alert(1)</script>", "photo": photo, "score": 10, "status": "open",
                        "owner": .pointer(Pointer(className: "_User", objectId: "u1")),
                        "when": .date(Timestamp(millisecondsSinceEpoch: 1_763_779_346_123)),
                    ],
                    acl: .publicReadWrite, objectId: "t1", admin: true)
                _ = try await api.create(className, fields: ["score": 1], acl: .publicReadWrite, objectId: "t2", admin: true)
                await api.shutdown()
            } catch {
                await api.shutdown()
                throw error
            }

            // A client follows :app live and holds the object the browser edits.
            var configuration = try ClientTransportFixture.configuration(server)
            configuration.storage = .inMemory
            let client = try await RooftopClient(configuration: configuration)
            do {
                try await client.sync.startContinuous(datastores: [.app])
                let watched = try await client.query(className).getObject("t1")
                #expect(watched.string("status") == "open")

                let script = ReadmeExample.repositoryRoot.appending(path: "Tests/dashboard/dashboard_browser.py").path
                let run = try await Self.python(
                    [script, server.baseURL, server.adminKey, "1", className, "t1", screenshots])
                print("dashboard browser test (screenshots in \(screenshots)):\n\(run.output)")
                #expect(run.status == 0, "\(run.output)\nserver log:\n\(Self.crashReport(server.log))")
                #expect(run.output.contains("ok: edited"), "\(run.output)")
                let shots = (try? FileManager.default.contentsOfDirectory(atPath: screenshots)) ?? []
                #expect(shots.filter { $0.hasSuffix(".png") }.count >= 8, "screenshots: \(shots)")

                try await TestWait.until(within: .seconds(30), "the dashboard's edit to reach the client") {
                    watched.string("status") == "edited in the dashboard"
                }
                #expect(watched.string("status") == "edited in the dashboard")
                await client.shutdown()
            } catch {
                await client.shutdown()
                throw error
            }
        }
    }

    /// The part of a server's log that says why it stopped, if it crashed (else its tail).
    static func crashReport(_ log: String) -> String {
        guard let start = log.range(of: "Fatal error") ?? log.range(of: "Program crashed") else {
            return String(log.suffix(3000))
        }
        let from = log.index(start.lowerBound, offsetBy: -600, limitedBy: log.startIndex) ?? log.startIndex
        return String(log[from...].prefix(5000))
    }

    /// Runs `python3 ARGS` to completion (at most 3 minutes).
    static func python(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        let output = Pipe()
        process.standardOutput = .pipe(output)
        process.standardError = .pipe(output)
        try process.run()
        let reader = output.fileHandleForReading
        let collected = Task { await BlockingRead.toEnd(reader) }
        try? await TestWait.until(within: .seconds(180), "the browser script to finish") { !process.isRunning }
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        let text = String(decoding: await collected.value, as: UTF8.self)
        return (process.terminationStatus, text)
    }
}
