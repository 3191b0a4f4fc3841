@testable import DAV
import CardIndexing
import DAVXML
import Foundation
import RoloSQLite
import RoloStore
import Testing
import VCard

/// addressbook-query over a real SQLite store, where contains and ends-with of three
/// characters or more come from the trigram index, shorter needles from a scan of the value
/// index, and filters the index cannot answer exactly (param-filters, several text-matches
/// on one property) from its candidates, parsed and matched. Every answer must be the one
/// parsing and matching every card gives, in the same order, truncated at the same card.
@Suite struct SubstringQueryTests {
    static let book = "/dav/addressbooks/alice/default/"

    static let people: [(fn: String, extra: [String])] = [
        ("Joanne Lindqvist", ["EMAIL;TYPE=WORK:joanne@lumen.test", "TEL;TYPE=CELL:+46 555 0100", "NICKNAME:Jo"]),
        ("Anna-Lena García", ["EMAIL;TYPE=HOME:anna@example.com", "TEL;TYPE=WORK:+34 555 0101"]),
        ("ÉLODIE Dubois", ["EMAIL:elodie@example.com", "TEL;TYPE=CELL:+33 1 23 45"]),
        ("Élodie Straße", ["EMAIL;TYPE=WORK:straße@example.de", "NOTE:met at the café"]),
        ("Zoë Okafor", ["TEL;TYPE=HOME:+234 555 0199", "ORG:Lumen Labs;Research"]),
        ("Анна Иванова", ["EMAIL:anna@example.ru", "TEL;TYPE=CELL:+7 555 0102"]),
        ("Σοφία Νικολάου", ["EMAIL;TYPE=HOME:sofia@example.gr"]),
        ("山田 太郎", ["TEL;TYPE=WORK:+81 3 555 0103", "NICKNAME:Taro"]),
        ("Ann", ["EMAIL:ann@a.io"]),
        ("Jonas Anderson", ["EMAIL;TYPE=WORK:jonas@lumen.test", "EMAIL;TYPE=HOME:jonas@home.test", "TEL:555"]),
        ("Priya", []),
    ]

    /// A service over a fresh SQLite store; a small merge threshold leaves some cards'
    /// entries merged (trigram index, which this small book is sent to) and the last ones
    /// pending (scanned).
    static func seeded() async throws -> (DAVService, SQLiteStore, [String: VCard]) {
        let store = try SQLiteStore.temporary(tuning: SQLiteStore.Tuning(pendingIndexEntries: 20, substringIndexMinimumCards: 0))
        try await store.createUser(name: "alice", password: "a")
        let service = DAVService(store: store)
        var cards: [String: VCard] = [:]
        for (index, person) in people.enumerated() {
            let uid = "p\(index)"
            let text = (["BEGIN:VCARD", "VERSION:3.0", "UID:\(uid)", "FN:\(person.fn)"] + person.extra + ["END:VCARD"])
                .joined(separator: "\r\n") + "\r\n"
            let response = await service.handle(DAVRequest(method: "PUT", path: book + "\(uid).vcf", headers: ["content-type": "text/vcard"],
                                                           body: Data(text.utf8), user: "alice"))
            #expect(response.status == 201)
            cards["\(uid).vcf"] = try VCardParser.parse(Array(text.utf8)).first
        }
        return (service, store, cards)
    }

    /// The hrefs in the order answered, and whether the answer was truncated (507).
    static func report(_ service: DAVService, filter: String, limit: Int? = nil) async throws -> (hrefs: [String], truncated: Bool) {
        let body = "<C:addressbook-query xmlns:D=\"DAV:\" xmlns:C=\"urn:ietf:params:xml:ns:carddav\"><D:prop><D:getetag/><C:address-data/></D:prop>"
            + filter + (limit.map { "<C:limit><C:nresults>\($0)</C:nresults></C:limit>" } ?? "") + "</C:addressbook-query>"
        let response = try await service.handle(DAVRequest(method: "REPORT", path: book, headers: ["depth": "1"],
                                                           body: Data(body.utf8), user: "alice")).collected()
        #expect(response.status == 207)
        var hrefs: [String] = [], truncated = false
        for element in try XMLDocumentParser.parse([UInt8](response.body)).children("DAV:", "response") {
            let href = element.child("DAV:", "href")?.text ?? ""
            if href == book { truncated = element.child("DAV:", "status")?.text.contains("507") ?? false } else { hrefs.append(href) }
        }
        return (hrefs, truncated)
    }

    /// What matching every card gives: hrefs in name order, cut at `limit`.
    static func expected(_ filter: String, cards: [String: VCard], limit: Int? = nil) throws -> (hrefs: [String], truncated: Bool) {
        let parsed = try parseFilter(filter)
        let all = cards.filter { parsed.matches($0.value) }.keys.sorted().map { book + $0 }
        guard let limit, all.count > limit else { return (all, false) }
        return (Array(all.prefix(limit)), true)
    }

    static func textMatch(_ property: String, _ text: String, collation: String, match: String, negate: Bool) -> String {
        "<C:filter><C:prop-filter name=\"\(property)\"><C:text-match collation=\"\(collation)\" match-type=\"\(match)\""
            + " negate-condition=\"\(negate ? "yes" : "no")\">\(text)</C:text-match></C:prop-filter></C:filter>"
    }

    @Test func oneTwoAndMoreCharacterNeedlesAgreeWithMatchingEveryCard() async throws {
        let (service, store, cards) = try await Self.seeded()
        defer { try? store.close() }
        var checked = 0
        for needle in ["a", "É", "n", "5", "an", "Jo", "ss", "ß", "ann", "ANN", "élo", "ÉLODIE", "lodie", "555 01", "@example.", ".test", "анн", "太郎", "zzz"] {
            for collation in ["i;unicode-casemap", "i;ascii-casemap", "i;octet"] {
                for match in ["contains", "ends-with"] {
                    for negate in [false, true] {
                        for property in ["FN", "EMAIL", "TEL"] {
                            let filter = Self.textMatch(property, needle, collation: collation, match: match, negate: negate)
                            let answer = try await Self.report(service, filter: filter)
                            let expected = try Self.expected(filter, cards: cards)
                            #expect(answer.hrefs == expected.hrefs, "\(filter)")
                            checked += 1
                        }
                    }
                }
            }
        }
        #expect(checked == 19 * 36)
    }

    /// Filters the index cannot answer exactly, answered from its candidates (or, when
    /// none narrow the book, by reading it whole), with and without a limit.
    @Test func paramFiltersSeveralTextMatchesAndCombinationsAgreeWithMatchingEveryCard() async throws {
        let (service, store, cards) = try await Self.seeded()
        defer { try? store.close() }
        let filters = [
            // A param-filter beside a text-match, under anyof and allof.
            "<C:filter><C:prop-filter name=\"TEL\" test=\"allof\"><C:text-match>555 01</C:text-match><C:param-filter name=\"TYPE\"><C:text-match match-type=\"equals\">cell</C:text-match></C:param-filter></C:prop-filter></C:filter>",
            "<C:filter><C:prop-filter name=\"TEL\" test=\"anyof\"><C:text-match>555 01</C:text-match><C:param-filter name=\"TYPE\"><C:text-match match-type=\"equals\">cell</C:text-match></C:param-filter></C:prop-filter></C:filter>",
            "<C:filter><C:prop-filter name=\"EMAIL\" test=\"allof\"><C:text-match match-type=\"ends-with\">.test</C:text-match><C:param-filter name=\"TYPE\"><C:is-not-defined/></C:param-filter></C:prop-filter></C:filter>",
            "<C:filter><C:prop-filter name=\"EMAIL\" test=\"allof\"><C:text-match>a</C:text-match><C:param-filter name=\"TYPE\"/></C:prop-filter></C:filter>",
            // Several text-matches that one and the same EMAIL must hold (allof), or any (anyof).
            "<C:filter><C:prop-filter name=\"EMAIL\" test=\"allof\"><C:text-match>jonas</C:text-match><C:text-match match-type=\"ends-with\">home.test</C:text-match></C:prop-filter></C:filter>",
            "<C:filter><C:prop-filter name=\"EMAIL\" test=\"allof\"><C:text-match>joanne</C:text-match><C:text-match match-type=\"ends-with\">home.test</C:text-match></C:prop-filter></C:filter>",
            "<C:filter><C:prop-filter name=\"EMAIL\" test=\"allof\"><C:text-match>an</C:text-match><C:text-match negate-condition=\"yes\">example</C:text-match></C:prop-filter></C:filter>",
            "<C:filter><C:prop-filter name=\"FN\" test=\"anyof\"><C:text-match>lodie</C:text-match><C:text-match match-type=\"ends-with\">son</C:text-match></C:prop-filter></C:filter>",
            // anyof and allof over prop-filters, with an unindexed property (NOTE) among them.
            "<C:filter test=\"allof\"><C:prop-filter name=\"FN\"><C:text-match>élo</C:text-match></C:prop-filter><C:prop-filter name=\"NOTE\"><C:text-match>café</C:text-match></C:prop-filter></C:filter>",
            "<C:filter test=\"anyof\"><C:prop-filter name=\"FN\"><C:text-match>élo</C:text-match></C:prop-filter><C:prop-filter name=\"NOTE\"><C:text-match>café</C:text-match></C:prop-filter></C:filter>",
            "<C:filter test=\"allof\"><C:prop-filter name=\"FN\"><C:text-match>an</C:text-match></C:prop-filter><C:prop-filter name=\"TEL\"><C:text-match match-type=\"ends-with\">0101</C:text-match></C:prop-filter></C:filter>",
            "<C:filter test=\"anyof\"><C:prop-filter name=\"FN\"><C:text-match negate-condition=\"yes\">a</C:text-match></C:prop-filter><C:prop-filter name=\"TEL\"><C:text-match>555</C:text-match></C:prop-filter></C:filter>",
            "<C:filter test=\"allof\"><C:prop-filter name=\"TEL\" test=\"allof\"><C:text-match>555</C:text-match><C:param-filter name=\"TYPE\"><C:text-match>work</C:text-match></C:param-filter></C:prop-filter><C:prop-filter name=\"EMAIL\"><C:text-match>lumen</C:text-match></C:prop-filter></C:filter>",
            "<C:filter test=\"anyof\"><C:prop-filter name=\"ORG\"><C:is-not-defined/></C:prop-filter><C:prop-filter name=\"TEL\" test=\"allof\"><C:text-match>555</C:text-match><C:param-filter name=\"TYPE\"><C:text-match>home</C:text-match></C:param-filter></C:prop-filter></C:filter>",
        ]
        for filter in filters {
            for limit in [nil, 1, 2] as [Int?] {
                let answer = try await Self.report(service, filter: filter, limit: limit)
                let expected = try Self.expected(filter, cards: cards, limit: limit)
                #expect(answer.hrefs == expected.hrefs && answer.truncated == expected.truncated, "\(filter) limit \(limit.map(String.init) ?? "none")")
            }
        }
        // The first filters are answered from candidates, not by reading the whole book.
        let indexed = CardMetadata.indexedProperties
        #expect(try parseFilter(filters[0]).indexPredicate(indexedProperties: indexed) == nil)
        #expect(try parseFilter(filters[0]).candidatePredicate(indexedProperties: indexed)
            == .textMatch(property: "TEL", text: "555 01", collation: .unicodeCasemap, match: .contains, negate: false))
        #expect(try parseFilter(filters[4]).candidatePredicate(indexedProperties: indexed) != nil)
        #expect(try parseFilter(filters[8]).candidatePredicate(indexedProperties: indexed) != nil)
        // anyof with an unindexed property, or with nothing to look for, reads the book.
        #expect(try parseFilter(filters[1]).candidatePredicate(indexedProperties: indexed) == nil)
        #expect(try parseFilter(filters[9]).candidatePredicate(indexedProperties: indexed) == nil)
        #expect(try parseFilter(filters[11]).candidatePredicate(indexedProperties: indexed) == nil)
    }

    @Test func aLimitCutsIndexAnswersAtTheSameCardAsAScan() async throws {
        let (service, store, cards) = try await Self.seeded()
        defer { try? store.close() }
        for needle in ["a", "an", "ann", "555"] {
            for limit in [1, 2, 3, 20] {
                let filter = Self.textMatch(needle == "555" ? "TEL" : "FN", needle, collation: "i;unicode-casemap", match: "contains", negate: false)
                let answer = try await Self.report(service, filter: filter, limit: limit)
                let expected = try Self.expected(filter, cards: cards, limit: limit)
                #expect(answer.hrefs == expected.hrefs && answer.truncated == expected.truncated, "\(needle) limit \(limit)")
            }
        }
    }
}
