import Authorization
import Foundation
import DAVXML
import RoloStore

/// addressbook-multiget (RFC 6352 §8.7): the listed cards, read a page of hrefs at a time
/// with one store query per address book in the page, and streamed like any listing once
/// the answer outgrows a chunk; hrefs that name nothing (or someone else's data) answer
/// 404 at the end of the multistatus.
extension DAVService {
    func addressbookMultiget(_ request: DAVRequest, body: XMLElement, node: Node) async throws -> DAVResponse {
        let properties = try PropertyRequest(report: body)
        var unresolved: [String] = []
        var requested: [MultigetPages.Target] = []
        // The address books the hrefs point into, each looked up once; targets refer to them
        // by position, so a page groups and copies integers rather than paths.
        var bookPaths: [[String]] = []
        var bookPositions: [[String]: Int] = [:]
        var resolver = MultigetHrefResolver()
        for hrefElement in body.children(Namespace.dav, "href") {
            let href = hrefElement.text.trimmingXMLWhitespace
            guard let target = resolver.target(href: href, user: request.user, service: self) else { unresolved.append(href); continue }
            let position = bookPositions[target.book] ?? {
                bookPaths.append(target.book)
                bookPositions[target.book] = bookPaths.count - 1
                return bookPaths.count - 1
            }()
            requested.append(MultigetPages.Target(href: href, book: position, name: target.name))
        }
        // The book the request names was looked up with the request (`existingNode`): its
        // hrefs, almost always all of them, take it from there.
        let requestBook: (path: [String], info: CollectionInfo)? = if case .collection(let info) = node,
            case .member(_, let components)? = try? path(of: request) { (components, info) } else { nil }
        var books: [CollectionInfo?] = []
        for path in bookPaths {
            var book = path == requestBook?.path ? requestBook?.info : try await store.collection(owner: request.user, path: path)
            if book == nil, path.count == 1 { book = try await store.mount(sharee: request.user, name: path[0]) }
            // A book the credential may not see answers 404 for each of its hrefs.
            if let found = book, found.kind != .addressBook || Access.privileges(on: found, for: request.credential) == nil {
                book = nil
            }
            books.append(book)
        }
        // Pages with bodies are several times the bytes of a listing's: smaller ones let the
        // next page's read overlap the writing of this one (`PrefetchingPages`).
        let pageSize = properties.wantsBodies ? max(configuration.listingPageSize / 4, 1) : configuration.listingPageSize
        // Hrefs into one book may name all its cards (a client's first sync after a listing):
        // the book is counted with the first page (`coveringReads`' rule).
        let found = books.compactMap { $0 }
        let countsBook = found.count == 1 && books.count == 1 && countsWholeBookReads(request, withBodies: properties.wantsBodies)
        let pages = MultigetPages(store: store, targets: requested, books: books, withBodies: properties.wantsBodies,
                                  pageSize: pageSize, bodyLimit: configuration.pageBodyLimit, countingBook: countsBook)
        let rows = CardResponseWriter(properties, withBodies: true)
        let credential = request.credential
        let writer: ItemWriter<MultigetPages.Card>
        if let rows {
            // Pages hold only cards of books that exist.
            writer = .rows { [books] item, multistatus in
                multistatus.add(card: item.card.info, body: item.card.data,
                                storedBody: books[item.book].flatMap { item.card.storedBody(in: $0.id) },
                                href: item.href, writer: rows)
            }
        } else {
            writer = .generic { [self, books] item, multistatus in
                guard let book = books[item.book] else { return }
                try await addCard(item.card.info, body: item.card.data, bodyLeftOut: item.card.bodyLeftOut, in: book,
                                  href: item.href, rows: nil, properties: properties, credential: credential, to: &multistatus)
            }
        }
        let reads = found.first.flatMap { CardReads(request, book: $0.id, withBodies: properties.wantsBodies) }
        return try await pagedMultistatus(Multistatus(), pages: pages, writer: writer, reads: reads, tail: { [unresolved] pages, multistatus in
            for href in unresolved + pages.notFound { multistatus.add(href: href, status: 404) }
        })
    }

    /// The (address book path, card name) an href names when it is in the user's tree.
    func resourceTarget(href: String, user: String) -> (book: [String], name: String)? {
        guard let decoded = PercentEncoding.decode(Self.pathOfURI(href)),
              case .member(let owner, let components) = ResourcePath(path: decoded, configuration: configuration),
              owner == user, components.count >= 2 else { return nil }
        return (Array(components.dropLast()), components[components.count - 1])
    }

    /// The path part of an absolute URI (`https://host/dav/x` -> `/dav/x`), or the input.
    static func pathOfURI(_ uri: String) -> String {
        if uri.utf8.first == 0x2F { return uri } // already a path, as clients almost always send
        guard let scheme = uri.range(of: "://") else { return uri }
        let afterAuthority = uri[scheme.upperBound...]
        guard let slash = afterAuthority.firstIndex(of: "/") else { return "/" }
        var path = afterAuthority[slash...]
        if let query = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<query] }
        return String(path)
    }
}

/// Resolves a multiget's hrefs to (address book path, card name). Clients name cards of one
/// book, so the hrefs share their collection part: its resolution (percent-decoding, a
/// split into segments, the user check) is kept, and an href with the same collection part
/// and a last segment that decoding leaves as it is (no `%`, not `.` or `..`) takes it
/// from there. A multiget of 1000 then splits and decodes one path instead of 1000.
/// Anything else (absolute URIs, another collection, an encoded name) takes the full
/// resolution, `resourceTarget(href:user:)`, whose answer it always equals.
struct MultigetHrefResolver {
    /// The collection part (through its last slash) of the last href resolved in full, as bytes.
    private var known: (prefix: [UInt8], book: [String])?

    mutating func target(href: String, user: String, service: DAVService) -> (book: [String], name: String)? {
        var href = href
        // Plain loops over contiguous bytes, memchr and memcmp: the generic
        // `lastIndex(of:)` and `contains` over UTF-8 views went byte by byte through the
        // views' indices, about 2% of a multiget of 100 in the profile.
        let quick: String?? = href.withUTF8 { bytes -> String?? in
            guard let base = bytes.baseAddress, bytes.count > 0, base[0] == 0x2F else { return .none }
            var slash = bytes.count - 1
            while base[slash] != 0x2F { slash -= 1 }
            let nameStart = slash + 1
            let nameCount = bytes.count - nameStart
            let name = base + nameStart
            let plainName = nameCount > 0 && memchr(name, 0x25, nameCount) == nil
                && !(nameCount == 1 && name[0] == 0x2E) && !(nameCount == 2 && name[0] == 0x2E && name[1] == 0x2E)
            guard plainName else { return .some(nil) }
            // Byte slices: a Character slice could take a combining mark after the slash along.
            if let known, known.prefix.count == nameStart,
               known.prefix.withUnsafeBytes({ memcmp($0.baseAddress!, base, nameStart) == 0 }) {
                return .some(String(decoding: UnsafeBufferPointer(start: name, count: nameCount), as: UTF8.self))
            }
            return .some(nil)
        }
        switch quick {
        case .some(.some(let name)): return (known!.book, name)
        case .some(.none):
            // A path: resolved in full, and its collection part kept when its name is plain.
            let target = service.resourceTarget(href: href, user: user)
            if let target { remember(href, book: target.book) }
            return target
        case .none:
            return service.resourceTarget(href: href, user: user)
        }
    }

    /// Keeps the collection part of `href` when its last segment is a plain name.
    private mutating func remember(_ href: String, book: [String]) {
        let utf8 = Array(href.utf8)
        guard let slash = utf8.lastIndex(of: 0x2F) else { return }
        let name = utf8[(slash + 1)...]
        guard !name.isEmpty, !name.contains(0x25), !name.elementsEqual([0x2E]), !name.elementsEqual([0x2E, 0x2E]) else { return }
        known = (Array(utf8[...slash]), book)
    }
}

/// The cards a multiget names, `pageSize` hrefs per page in the order asked, each page
/// one read per address book it touches. Hrefs whose card is not there are kept, in order,
/// in `notFound`.
struct MultigetPages: ListingPages {
    /// An href that names a card in one of the user's collections (`book`: its position in `books`).
    struct Target: Sendable {
        var href: String
        var book: Int
        var name: String
    }

    /// A card found, with the href it was asked by and its book's position in `books`.
    struct Card: Sendable {
        var href: String
        var book: Int
        var card: StoredResource
    }

    let store: any CardStore
    let targets: [Target]
    /// The collections the targets point into; nil for one that is not an address book of the user's.
    let books: [CollectionInfo?]
    let withBodies: Bool
    let pageSize: Int
    let bodyLimit: Int
    /// The first page also counts the targets' one book, up to one more than the targets.
    private var countingBook: Bool
    private var position = 0
    private(set) var notFound: [String] = []
    private(set) var wholeBookCards: Int?
    var isFinished: Bool { position >= targets.count }

    init(store: any CardStore, targets: [Target], books: [CollectionInfo?], withBodies: Bool, pageSize: Int, bodyLimit: Int,
         countingBook: Bool = false) {
        self.store = store; self.targets = targets; self.books = books; self.withBodies = withBodies; self.pageSize = pageSize
        self.bodyLimit = bodyLimit; self.countingBook = countingBook
    }

    mutating func nextPage() async throws -> [Card] {
        let chunk = targets[position..<min(position + pageSize, targets.count)]
        position += chunk.count
        var namesByBook: [Int: [String]] = [:]
        for target in chunk where books[target.book] != nil { namesByBook[target.book, default: []].append(target.name) }
        var found: [Int: [String: StoredResource]] = [:]
        for (position, names) in namesByBook {
            guard let book = books[position] else { continue }
            let reader = NamedCardReader(store: store, collectionID: book.id, withBodies: withBodies, bodyLimit: bodyLimit)
            if countingBook {
                countingBook = false
                let (cards, bookCards) = try await reader.read(names, countingBookUpTo: targets.count + 1)
                found[position] = cards
                wholeBookCards = CardReads.wholeBook(counted: bookCards, atMost: targets.count)
            } else {
                found[position] = try await reader.read(names)
            }
        }
        var cards: [Card] = []
        cards.reserveCapacity(chunk.count)
        for target in chunk {
            if let card = found[target.book]?[target.name] {
                cards.append(Card(href: target.href, book: target.book, card: card))
            } else {
                notFound.append(target.href)
            }
        }
        return cards
    }
}
