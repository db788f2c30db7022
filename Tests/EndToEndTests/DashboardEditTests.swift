import Foundation
import RooftopShared
import RooftopTestSupport
import Testing

/// An object's edit in the dashboard sends only what the admin changed.
@Suite("Admin dashboard edits", .timeLimit(.minutes(3)))
struct DashboardEditTests {
    @Test("a field left as the page showed it does not overwrite a client's concurrent change, even under the local rule")
    func onlyChangedFields() async throws {
        try await withServer { server in
            try await DashboardTests.withClients(server) { api, pages in
                try await api.setClass("Memo", rules: ["a": .local, "b": .local])
                let object = try await api.create(
                    "Memo", fields: ["a": 1, "b": 1, "c": "same"], acl: .publicReadWrite, objectId: "m1", admin: true)
                let cookie = try await DashboardTests.signIn(pages)
                let listing = try await DashboardTests.request(pages, .GET, "/dashboard/datastores", cookie: cookie)
                let key = try DashboardHostileTests.datastoreKey(listing.body, id: ":app")
                let path = "/dashboard/datastores/\(key)/classes/Memo/objects/m1"
                let page = try await DashboardTests.request(pages, .GET, path, cookie: cookie)
                let token = try DashboardTests.csrf(in: page.body)
                #expect(page.body.contains(#"name="original" value="1""#), "the page carries what it showed")

                // A client changes b after the page was shown.
                let concurrent = try await api.update(object, fields: ["b": 2], admin: true)
                #expect(concurrent.status == 200)

                // The admin changes a and leaves b and c as shown; the form sends every field.
                let form = "baseVersion=\(object.version)&field=a&original=1&value=5&field=b&original=1&value=1"
                    + "&field=c&original=%22same%22&value=%20%22same%22%20&csrf=" + token
                let saved = try await DashboardTests.request(pages, .POST, path, form: form, cookie: cookie)
                #expect(saved.status == 303 && saved.headers["Location"].first == path + "?done=saved")
                let stored = try await api.object(.app, className: "Memo", objectId: "m1", token: nil)
                #expect(stored?.fields["a"] == 5)
                #expect(stored?.fields["b"] == 2, "the client's change stands")
                #expect(stored?.fields["c"] == "same")

                // Nothing changed: nothing is written.
                let version = try #require(stored?.version)
                let unchanged = "baseVersion=\(version)&field=a&original=5&value=5&csrf=" + token
                let none = try await DashboardTests.request(pages, .POST, path, form: unchanged, cookie: cookie)
                #expect(none.headers["Location"].first == path + "?done=unchanged")
                #expect(try await api.object(.app, className: "Memo", objectId: "m1", token: nil)?.version == version)
            }
        }
    }
}
