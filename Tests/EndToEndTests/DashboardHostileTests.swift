import Foundation
import RooftopShared
import RooftopTestSupport
import Testing

/// The admin dashboard's pages filled with hostile strings — user names, datastore titles, field
/// values, a query and a refused form's echo — and read by a real HTML parser (html5lib,
/// `Tests/dashboard/html_check.py`): no string may become markup, every string is shown whole as
/// text, and IDs holding `/`, `+` and `=` open.
@Suite("Admin dashboard with hostile strings", .timeLimit(.minutes(5)))
struct DashboardHostileTests {
    /// Strings that broke out of swift-mustache's own HTML escaping (a prepend mark before `<`, a
    /// combining mark after a quote) and the usual suspects: a closing textarea or title, a meta
    /// refresh, a formaction button, Mustache tags, bidirectional overrides, text that looks
    /// escaped already.
    static let hostile: [String] = [
        "\u{0600}<b id=x1>prepend</b>",
        "q\"\u{0301} autofocus id=\u{0301}x2 x='\u{0301}y",
        "'\u{0301}><i id=x3>combining</i>",
        "{{title}} {{{body}}} {{#signedIn}}x{{/signedIn}}",
        "\u{202E}gnp.exe\u{202C} bidi \u{2066}iso\u{2069} \u{200F}mark",
        "</textarea><meta http-equiv=refresh content=\"0;url=/dashboard/login\">",
        "</title><b id=x4>",
        "<button formaction=/dashboard/roles/Staff>go</button>",
        "&amp; &lt;b&gt; &#60; \u{05D0}\"<",
    ]

    /// The key of a datastore in the dashboard's listing, found by its ID's link text.
    static func datastoreKey(_ listing: String, id: String) throws -> Int {
        let marker = "\">\(id)</a>"
        let end = try #require(listing.range(of: marker)).lowerBound
        let digits = listing[..<end].reversed().prefix { $0.isNumber }
        return try #require(Int(String(digits.reversed())))
    }

    @Test("every page shows hostile strings as text, by html5lib; IDs with / + = open")
    func hostileStrings() async throws {
        guard DashboardTests.mayRun("the dashboard's HTML parser check", missing: DashboardTests.pythonLacks("html5lib"))
        else { return }
        let directory = TemporaryDirectory.make(prefix: "dashboard-hostile")
        try await withServer { server in
            try await DashboardTests.withClients(server) { api, pages in
                var expectations: [String: [String]] = [:]
                var saved: [String] = []
                let cookie = try await DashboardTests.signIn(pages)
                func save(_ name: String, _ path: String, status: Int = 200, expecting: [String] = []) async throws -> String {
                    let page = try await DashboardTests.request(pages, .GET, path, cookie: cookie)
                    #expect(page.status == status, "\(path): \(page.body.prefix(2000))")
                    try Data(page.body.utf8).write(to: URL(fileURLWithPath: directory).appending(path: name + ".html"))
                    expectations[name + ".html"] = expecting
                    saved.append(name)
                    return page.body
                }

                // User names, datastore titles and field values, each hostile.
                var userIds: [String] = []
                for name in Self.hostile {
                    userIds.append(try await api.signUp(name).user.objectId)
                }
                let owner = try await api.newUser("owner")
                for title in Self.hostile {
                    let _: DatastoreInfo = try await api.call(
                        API.createDatastore, body: CreateDatastoreRequest(title: title), token: owner.token)
                }
                var fields: [String: Value] = [:]
                for (index, text) in Self.hostile.enumerated() { fields["s\(index)"] = .string(text) }
                fields["long"] = .string(String(repeating: "<b id=\"x\" title='y'>&\u{0600}<", count: 4_000))
                fields["nested"] = .json(.object(["k": .string(Self.hostile[5])]))
                let className = "Cls+x=y"
                let objectId = "a/b+c=d"
                _ = try await api.create(className, fields: fields, acl: .publicReadWrite, objectId: objectId, admin: true)

                let listing = try await save("datastores", "/dashboard/datastores", expecting: Self.hostile)
                let appKey = try Self.datastoreKey(listing, id: ":app")
                _ = try await save("users", "/dashboard/users", expecting: Self.hostile)
                for (index, id) in userIds.enumerated() {
                    _ = try await save("user\(index)", "/dashboard/users/\(id)", expecting: [Self.hostile[index]])
                }
                let classPath = "/dashboard/datastores/\(appKey)/classes/Cls%2Bx%3Dy"
                let browse = try await save("browse", classPath, expecting: Self.hostile)
                #expect(browse.contains("a%2Fb%2Bc%3Dd"), "the object's link encodes its ID")
                _ = try await save(
                    "object", classPath + "/objects/a%2Fb%2Bc%3Dd", expecting: Self.hostile + ["\(className)/\(objectId)"])
                let query = "where s0 = '\(Self.hostile[0])' or s6 = '</title><b id=x5>'"
                let encoded = query.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
                _ = try await save("query", classPath + "?q=" + encoded, expecting: [query])
                let badQuery = "where <b id=x6> \u{0600}<i>"
                _ = try await save(
                    "bad-query", classPath + "?q=" + (badQuery.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""),
                    status: 400)
                _ = try await save("feed", "/dashboard/datastores/\(appKey)/feed", expecting: [objectId])
                _ = try await save("settings", "/dashboard/classes/Cls%2Bx%3Dy", expecting: [className])
                _ = try await save("overview", "/dashboard/overview")
                _ = try await save("roles", "/dashboard/roles")

                // A refused form echoes what it was sent.
                let token = try DashboardTests.csrf(in: browse)
                let echo = try await DashboardTests.request(
                    pages, .POST, "/dashboard/datastores/\(appKey)/share",
                    form: "principal=%2A&role=" + (Self.hostile[6].addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
                        + "&csrf=" + token,
                    cookie: cookie)
                #expect(echo.status == 400)
                try Data(echo.body.utf8).write(to: URL(fileURLWithPath: directory).appending(path: "refused.html"))
                expectations["refused.html"] = [Self.hostile[6]]

                try JSONEncoder().encode(expectations).write(to: URL(fileURLWithPath: directory).appending(path: "expectations.json"))
                let script = ReadmeExample.repositoryRoot.appending(path: "Tests/dashboard/html_check.py").path
                let run = try await DashboardTests.python([script, directory])
                #expect(run.status == 0 && run.output.contains("ok: \(saved.count + 1) pages"), "pages in \(directory):\n\(run.output)")
            }
        }
    }
}
