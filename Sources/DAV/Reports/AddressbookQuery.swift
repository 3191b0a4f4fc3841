import CardIndexing
import DAVXML
import Foundation
import RoloStore
import VCard

/// addressbook-query (RFC 6352 §8.6): the cards of a book matching a filter, answered from
/// the store's index when the filter translates to an `IndexPredicate`, else by parsing
/// and matching the cards the index names as candidates (`candidatePredicate`), or each
/// card of the book when it names none. `limit/nresults` truncates with a 507 response for the book
/// carrying `DAV:number-of-matches-within-limits`. On a card, the answer is that card
/// when it matches, else empty (`cardQuery`).
extension DAVService {
    func addressbookQuery(_ request: DAVRequest, body: XMLElement, node: Node) async throws -> DAVResponse {
        let properties = try PropertyRequest(report: body)
        let filter = try Self.filter(body.child(Namespace.cardDAV, "filter"))
        let asked = try resultLimit(body.child(Namespace.cardDAV, "limit"))
        if case .object(let book, let card, let loaded) = node, book.kind == .addressBook {
            return try await cardQuery(request, card: card, body: loaded, in: book, node: node, properties: properties,
                                       filter: filter)
        }
        let book = try addressBook(node, report: "addressbook-query")
        // The directory is searched, not downloaded: the server's limit applies (§8.6.1).
        let limit = DirectoryRules.isDirectory(book) ? min(asked ?? .max, configuration.directoryQueryLimit) : asked

        let bookHref = hrefs.href(for: node)
        let rows = CardResponseWriter(properties, withBodies: true)
        let credential = request.credential
        let memberPrefix = EscapedHref(bookHref)
        let writeCard: ItemWriter<StoredResource> = memberWriter(in: book, collectionHref: memberPrefix, rows: rows,
                                                                 properties: properties, credential: credential) { $0 }
        let pageSize = configuration.listingPageSize
        if let predicate = filter.indexPredicate(indexedProperties: CardMetadata.indexedProperties) {
            // The hits' names (in name order) are few bytes each; their cards are read a page at a
            // time, the first page with the names. When the answer may be the whole book, the
            // book is counted with them.
            let hits = try await store.queryHits(collectionID: book.id, predicate: predicate, limit: limit.map { $0 + 1 },
                                                 countingBook: countsWholeBookReads(request, withBodies: properties.wantsBodies),
                                                 firstPage: pageSize, withBodies: properties.wantsBodies,
                                                 bodyLimit: configuration.pageBodyLimit)
            var names = hits.names
            let truncated = limit.map { names.count > $0 } ?? false
            if let limit, truncated { names = Array(names.prefix(limit)) }
            let reads = truncated ? CardReads(request, book: book.id, withBodies: properties.wantsBodies)
                : try await coveringReads(request, book: book.id, withBodies: properties.wantsBodies, atMost: names.count,
                                          bookCards: hits.bookCards)
            let cards = NamedCardReader(store: store, collectionID: book.id, withBodies: properties.wantsBodies,
                                        bodyLimit: configuration.pageBodyLimit)
            let pages = NamedCardPages(cards, names: names, pageSize: pageSize, firstPage: hits.firstCards)
            return try await pagedMultistatus(Multistatus(), pages: pages, writer: writeCard, reads: reads, tail: { _, multistatus in
                if truncated { multistatus.addTruncation(href: bookHref) }
            })
        }
        if let candidates = filter.candidatePredicate(indexedProperties: CardMetadata.indexedProperties) {
            // The cards that may match (a param-filter, several text-matches on one property),
            // in name order like the book, each parsed and matched exactly.
            let names = try await store.query(collectionID: book.id, predicate: candidates, limit: nil)
            let reads = limit != nil ? CardReads(request, book: book.id, withBodies: properties.wantsBodies)
                : try await coveringReads(request, book: book.id, withBodies: properties.wantsBodies, atMost: names.count)
            let cards = NamedCardReader(store: store, collectionID: book.id, withBodies: true,
                                        bodyLimit: configuration.pageBodyLimit)
            let pages = MatchingCardPages(NamedCardPages(cards, names: names, pageSize: pageSize), store: store,
                                          collectionID: book.id, filter: filter, limit: limit)
            return try await pagedMultistatus(Multistatus(), pages: pages, writer: writeCard, reads: reads, tail: { pages, multistatus in
                if pages.truncated { multistatus.addTruncation(href: bookHref) }
            })
        }
        let reads = limit != nil ? CardReads(request, book: book.id, withBodies: properties.wantsBodies)
            : try await coveringReads(request, book: book.id, withBodies: properties.wantsBodies, atMost: .max)
        let pages = MatchingCardPages(BookPages(store: store, collectionID: book.id, withBodies: true, pageSize: pageSize,
                                                bodyLimit: configuration.pageBodyLimit),
                                      store: store, collectionID: book.id, filter: filter, limit: limit)
        return try await pagedMultistatus(Multistatus(), pages: pages, writer: writeCard, reads: reads, tail: { pages, multistatus in
            if pages.truncated { multistatus.addTruncation(href: bookHref) }
        })
    }

    /// RFC 6352 §8.6 lets the query address a card itself: the card when it matches the
    /// filter, else an empty multistatus. A card has no members, so any Depth means the
    /// card alone (as PROPFIND's infinity does on a card).
    private func cardQuery(_ request: DAVRequest, card: ResourceInfo, body loaded: Data?, in book: CollectionInfo, node: Node,
                           properties: PropertyRequest, filter: AddressbookFilter) async throws -> DAVResponse {
        try require(.read, on: node, request)
        var body = loaded
        if body == nil { body = try await store.resource(collectionID: book.id, name: card.name)?.data }
        var multistatus = Multistatus()
        // One card is within any `limit` (its nresults is positive).
        if let body, filter.matches(cardData: body) {
            if properties.wantsBodies { request.tally?.read(1, book: book.id) }
            try await addCard(card, body: body, in: book, href: hrefs.href(for: node),
                              rows: CardResponseWriter(properties, withBodies: true),
                              properties: properties, credential: request.credential, to: &multistatus)
        }
        return multistatusResponse(multistatus.finish())
    }

    /// The request's filter; a missing one matches every card. Unsupported collations and
    /// filters answer 403 with their CardDAV precondition, malformed ones 400.
    static func filter(_ element: XMLElement?) throws(DAVError) -> AddressbookFilter {
        guard let element else { return AddressbookFilter() }
        do {
            return try AddressbookFilter(xml: element)
        } catch {
            if let condition = error.precondition {
                throw DAVError.precondition(403, .cardDAV(condition), message: error.description)
            }
            throw DAVError.badRequest("Invalid filter: \(error.description)")
        }
    }
}

/// The cards of a book (or of the index's candidates) that match a filter the index cannot
/// answer exactly: each page of cards is parsed and matched, and only the matches are kept.
/// Stops after `limit` matches, noting whether another one follows (`truncated`).
struct MatchingCardPages<Cards: ListingPages>: ListingPages where Cards.Item == StoredResource {
    private var book: Cards
    /// Where a body left out of a page (`StoredResource.bodyLeftOut`) is read from.
    let store: any CardStore
    let collectionID: Int64
    let filter: AddressbookFilter
    let limit: Int?
    private var matched = 0
    private(set) var truncated = false
    var isFinished: Bool { truncated || book.isFinished }

    init(_ book: Cards, store: any CardStore, collectionID: Int64, filter: AddressbookFilter, limit: Int?) {
        self.book = book; self.store = store; self.collectionID = collectionID; self.filter = filter; self.limit = limit
    }

    mutating func nextPage() async throws -> [StoredResource] {
        var matches: [StoredResource] = []
        for stored in try await book.nextPage() {
            guard try await isMatch(stored) else { continue }
            if let limit, matched == limit { truncated = true; break }
            matched += 1
            matches.append(stored)
        }
        return matches
    }

    /// Whether the card matches. A body left in the store is read for the test and let go
    /// (the writer reads it again), so a page never holds several big bodies.
    private func isMatch(_ stored: StoredResource) async throws -> Bool {
        var data = stored.data
        if stored.bodyLeftOut {
            guard let full = try await store.resource(collectionID: collectionID, name: stored.info.name) else { return false }
            data = full.data
        }
        return filter.matches(cardData: data)
    }
}

extension AddressbookFilter {
    /// Whether the stored card matches; a card that does not parse matches nothing.
    func matches(cardData data: Data) -> Bool {
        // Parsed where the bytes are: a [UInt8] copy of each body cost as much as a big card.
        let card = data.withUnsafeBytes { raw in
            try? VCardParser.parse(raw.assumingMemoryBound(to: UInt8.self)).first
        }
        guard let card else { return false }
        return matches(card)
    }
}
