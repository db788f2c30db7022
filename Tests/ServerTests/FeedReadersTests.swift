import RooftopShared
import Testing

@testable import RooftopServer

/// ``FeedReaders``: a page's reader sets decoded once each; a tombstone's readers from its
/// history; a set that cannot be read fails the page instead of hiding objects.
@Suite("Change feed readers")
struct FeedReadersTests {
    @Test("each set is decoded once per page, and the history adds former readers")
    func setsOncePerPage() throws {
        var readers = FeedReaders()
        var reads = 0
        let text = { () -> String? in
            reads += 1
            return #"["role:R","u1"]"#
        }
        for _ in 0..<3 {
            let found = try readers.readers(readerSet: 7, setPrincipals: text, lastReaders: nil, historyReaders: [])
            #expect(found.current == ["u1", "role:R"] && found.former == [])
        }
        #expect(reads == 1)
        let ended = try readers.readers(readerSet: 7, setPrincipals: text, lastReaders: nil, historyReaders: ["u9"])
        #expect(ended.current == ["u1", "role:R"] && ended.former == ["u9"])
        let tombstone = try readers.readers(
            readerSet: nil, setPrincipals: { nil }, lastReaders: ["u2"], historyReaders: ["u2", "u3"])
        #expect(tombstone.current == ["u2"] && tombstone.former == ["u2", "u3"])
        let nobody = try readers.readers(readerSet: nil, setPrincipals: { nil }, lastReaders: nil, historyReaders: [])
        #expect(nobody.current.isEmpty && nobody.former.isEmpty)
    }

    @Test("a set named but not stored, or not a list, is an internal error")
    func unreadableSet() {
        var readers = FeedReaders()
        for text in [nil, "{}", "[1]"] as [String?] {
            #expect(throws: RooftopError.self) {
                try readers.readers(readerSet: 3, setPrincipals: { text }, lastReaders: nil, historyReaders: [])
            }
        }
    }
}
