import Foundation
import Rooftop
import RooftopShared
import Testing

/// Objects through the client library against the real server: save, fetch, refresh with
/// includes, delete, get by ID, count, removal by query, Codable models, and every kind of field
/// value through the server and the local cache unchanged.
@Suite("Client queries: objects", .sharedServer(), .timeLimit(.minutes(5)))
struct ClientQueryObjectTests {
    @Test("save, get with includes, refresh with include paths, fetch and delete across two clients")
    func objectLifecycle() async throws {
        let (server, api) = try SharedServer.require()
        let user = try await api.newUser("writer")
        let books = Unique.name("Book")
        try await ClientQueryFixture.withClient(server, as: user) { writer async throws in
            try await ClientQueryFixture.withClient(server, as: user) { reader async throws in
                let company = writer.object("Company")
                company["name"] = "Acme"
                try await company.save()
                #expect(company.version > 0 && company.createdAt != nil)
                let author = writer.object("Author")
                author["name"] = "Ada"
                author["company"] = .pointer(Pointer(className: "Company", objectId: company.objectId))
                try await author.save()
                let book = writer.object(books)
                book["title"] = "Notes"
                book["author"] = .pointer(Pointer(className: "Author", objectId: author.objectId))
                try await book.save()
                #expect(!book.hasUnsavedChanges)

                let read = try await reader.query(books).including("author", "company").getObject(book.objectId)
                #expect(read.string("title") == "Notes")
                #expect(read !== book, "another client has its own instances")
                let readAuthor = try #require(try read.object("author"))
                #expect(readAuthor.string("name") == "Ada", "the included author arrived with its fields")
                let readCompany = try #require(try readAuthor.object("company"))
                #expect(readCompany.string("name") == "Acme")

                author["name"] = "Ada Lovelace"
                try await author.save()
                company["name"] = "Acme Corp"
                try await company.save()
                try await read.refresh(including: ["author"], ["author", "company"])
                #expect(readAuthor.string("name") == "Ada Lovelace", "refresh updates the included objects' instances")
                #expect(readCompany.string("name") == "Acme Corp")

                book["title"] = "Collected notes"
                try await book.save()
                try await read.fetch()
                #expect(read.string("title") == "Collected notes")
                #expect(read.version == book.version)

                let page = try await reader.query(books).including("author", "company").find()
                #expect(page.objectIds == [book.objectId])
                #expect(Set(page.included.map(\.objectId)) == [author.objectId, company.objectId])
                #expect(page.objects.first === read, "one instance per object in a client")
                try await ClientQueryFixture.withClient(server, as: user) { third async throws in
                    // Only the objects are kept, not the result that holds the included ones.
                    let found = try await third.query(books).including("author", "company").find().objects
                    let foundAuthor = try #require(try found.first?.object("author"))
                    #expect(foundAuthor.string("name") == "Ada Lovelace", "included objects outlive the result")
                    #expect(try foundAuthor.object("company")?.string("name") == "Acme Corp")
                }

                try await book.delete()
                #expect(book.isDeleted)
                let gone = await #expect(throws: RooftopError.self) { try await read.fetch() }
                #expect(gone?.code == .notFound)
                let missing = await #expect(throws: RooftopError.self) {
                    try await reader.query(books).getObject(book.objectId)
                }
                #expect(missing?.code == .notFound)
                #expect(try await reader.query(books).count() == 0)
            }
        }
    }

    @Test("a Codable model round trips through the server into another client")
    func codableModel() async throws {
        let (server, api) = try SharedServer.require()
        let user = try await api.newUser("cook")
        let author = Pointer(className: "Author", objectId: ObjectID.generate())
        let recipe = ClientRecipe(
            title: "Pão de queijo", servings: 12, rating: 4.75, vegetarian: true,
            published: Date(timeIntervalSince1970: 1_763_779_346.123), photo: Data([0, 1, 2, 254, 255]),
            tags: ["brazil", "snack"], nutrition: .init(calories: 120, notes: "per piece"),
            origin: try GeoPoint(latitude: -19.9167, longitude: -43.9345), day: try Day(year: 2024, month: 2, day: 29),
            price: try DecimalNumber("3.50"), author: author, subtitle: nil)
        try await ClientQueryFixture.withClient(server, as: user) { writer async throws in
            let saved = try await writer.save(recipe)
            #expect(saved.objectId == recipe.objectId)
            #expect(saved["subtitle"] == nil, "a nil optional is an absent field")
            #expect(saved.date("published") == recipe.published)
        }
        let file = ClientQueryFixture.cacheFile()
        try await ClientQueryFixture.withClient(server, as: user, storage: .file(path: file)) { reader async throws in
            let found = try await reader.query(ClientRecipe.self).find(as: ClientRecipe.self, policy: .remoteAndStore)
            #expect(found.count == 1)
            var read = try #require(found.first)
            #expect(read.updatedAt != nil, "the built-in updatedAt is read")
            read.updatedAt = nil
            #expect(read == recipe)
            let object = try await reader.query(ClientRecipe.self).getObject(recipe.objectId)
            #expect(object["nutrition"] == .json(.object(["calories": .int(120), "notes": .string("per piece")])))
            #expect(object["price"] == .decimal(try DecimalNumber("3.50")))
        }
        try await ClientQueryFixture.withOfflineClient(server, storage: .file(path: file)) { offline async throws in
            var cached = try #require(try await offline.query(ClientRecipe.self).find(as: ClientRecipe.self, policy: .localOnly).first)
            cached.updatedAt = nil
            #expect(cached == recipe, "the model decodes from the local cache too")
        }
    }

    @Test("field values of every kind come back unchanged from the server and from the local cache")
    func typedValues() async throws {
        let (server, api) = try SharedServer.require()
        let user = try await api.newUser("values")
        let className = Unique.name("Kinds")
        let fields: [String: Value] = [
            "int": .int(.max), "intMin": .int(.min), "zero": .int(0),
            "double": .double(0.1), "negativeZero": .double(-0.0), "infinity": .double(.infinity),
            "minusInfinity": .double(-.infinity), "subnormal": .double(.leastNonzeroMagnitude), "nan": .double(.nan),
            "string": "héllo\u{0}wörld 🌍", "bool": false, "null": .null,
            "date": .date(Timestamp(millisecondsSinceEpoch: -1)),
            "bytes": .bytes(BinaryValue(Data([0, 255, 0, 128]), mimeType: "application/octet-stream")),
            "decimal": .decimal(try DecimalNumber("12345678901234567890.000000000000000001")),
            "geo": .geoPoint(try GeoPoint(latitude: -90, longitude: 180)),
            "day": .day(try Day(year: 1, month: 1, day: 1)),
            "json": .json(.object(["a": .array([.int(1), .double(1.5), .null, .string("x"), .object([:])])])),
            "list": .list([.int(1), .double(-0.0), .string("é"), .list([]), .null, .bool(true), .date(Timestamp(millisecondsSinceEpoch: 0))]),
            "pointer": .pointer(Pointer(className: "Other", objectId: "o/1+=")),
        ]
        let id: String = try await ClientQueryFixture.withClient(server, as: user) { writer async throws in
            let object = writer.object(className)
            for (name, value) in fields { object[name] = value }
            try object.addRelation([writer.object("Member", id: "m1"), writer.object("Member", id: "m/2")], to: "members")
            try await object.save()
            #expect(object["members"] == .relation(Relation(className: "Member", objectIds: ["m1", "m/2"])))
            for (name, value) in fields {
                #expect(object[name] == value, "\(name) as the server answered the save")
            }
            return object.objectId
        }
        let file = ClientQueryFixture.cacheFile()
        try await ClientQueryFixture.withClient(server, as: user, storage: .file(path: file)) { reader async throws in
            let object = try await reader.query(className).getObject(id)
            for (name, value) in fields {
                #expect(object[name] == value, "\(name) read back from the server")
            }
            #expect(object["members"] == .relation(Relation(className: "Member", objectIds: ["m1", "m/2"])))
            let stored = try await reader.query(className).find(policy: .remoteAndStore)
            #expect(stored.objectIds == [id])
            let negativeZero = try await reader.query(className).where(Field("negativeZero") == .double(0)).find()
            #expect(negativeZero.objectIds == [id], "-0.0 equals 0 in queries on the server")
        }
        try await ClientQueryFixture.withOfflineClient(server, storage: .file(path: file)) { offline async throws in
            let cached = try await offline.query(className).find(policy: .localOnly)
            let object = try #require(cached.objects.first)
            for (name, value) in fields {
                #expect(object[name] == value, "\(name) read back from the local cache")
            }
            #expect(object["members"] == .relation(Relation(className: "Member", objectIds: ["m1", "m/2"])))
            let local = try await offline.query(className).fromLocalDatastore()
                .where(Field("negativeZero") == .double(0) && Field("int") == .int(.max)).find()
            #expect(local.objectIds == [id], "and locally")
        }
    }

    @Test("count, first, and removing what a query matches on the server drops the local copies")
    func countAndRemove() async throws {
        let (server, api) = try SharedServer.require()
        let scene = try await ClientScoreScene.make(server, api)
        try await scene.online { client async throws in
            let all = client.query(scene.className).order(by: "score")
            #expect(try await all.count() == 10)
            #expect(try await all.where(Field("score") > 50).count() == 5)
            #expect(try await all.first()?.int("score") == 10)
            #expect(try await all.where(Field("score") > 1000).first() == nil)
            let stored = try await all.find(policy: .remoteAndStore)
            let ten = try #require(stored.objects.first)

            let removed = try await all.where(Field("score") <= 30).remove(limit: 2)
            #expect(removed == 2)
            #expect(try await api.count(Query(scene.className), as: scene.user) == 8)
            let local = try await client.query(scene.className).fromLocalDatastore().order(by: "score").find()
            #expect(local.objectIds == scene.ids(30, 40, 50, 60, 70, 80, 90, 100), "the removed ones left the cache")
            #expect(ten["score"] == nil, "the live instance of a removed object reads nothing")

            let more = try await client.query(scene.className).where(Field("score") > 80).removeAll()
            #expect(more == 2)
            #expect(try await all.count() == 6)
            #expect(try await all.find(policy: .localOnly).objectIds == scene.ids(30, 40, 50, 60, 70, 80))
            let skipped = try await all.offset(1).remove(limit: 2)
            #expect(skipped == 2)
            #expect(try await all.find().objectIds == scene.ids(30, 60, 70, 80), "the offset is skipped, in order")
            #expect(try await all.find(policy: .localOnly).objectIds == scene.ids(30, 60, 70, 80))
        }
        let stranger = try await api.newUser("stranger")
        try await ClientQueryFixture.withClient(server, as: stranger) { client async throws in
            #expect(try await client.query(scene.className).removeAll() == 0, "nothing it may delete (nor read)")
        }
        #expect(try await api.count(Query(scene.className), as: scene.user) == 4)
        let negative = await #expect(throws: RooftopError.self) {
            try await ClientQueryFixture.withClient(server, as: scene.user) { client async throws in
                try await client.query(scene.className).remove(limit: -1)
            }
        }
        #expect(negative?.code == .illegalArgument)
    }
}

/// A model with a property of every kind the model coding maps.
struct ClientRecipe: RooftopModel, Equatable {
    static let className = "ClientRecipe"

    struct Nutrition: Codable, Equatable, Sendable {
        var calories: Int
        var notes: String
    }

    var objectId = ObjectID.generate()
    var title: String
    var servings: Int
    var rating: Double
    var vegetarian: Bool
    var published: Date
    var photo: Data
    var tags: [String]
    var nutrition: Nutrition
    var origin: GeoPoint
    var day: Day
    var price: DecimalNumber
    var author: Pointer
    var subtitle: String?
    var updatedAt: Date?
}
