import Authorization
import Foundation
import RoloStore

/// GET/HEAD (RFC 9110 §9.3.1, §9.3.2):
/// - a card: its stored bytes, or its jCard when `Accept` prefers `application/vcard+json`
///   (`CardMediaType.negotiate`), each form with its own strong ETag; `If-None-Match`
///   answers 304, `If-Match` 412;
/// - a file: its stored bytes;
/// - an address book: every card as one document (`AddressBookDocument`), streamed;
/// - the user's home, principal and the root: a short plain-text page naming the user's
///   address books and URLs, for a person who opens one in a browser;
/// - anything else (plain collections, the lists of homes and principals): 405.
extension DAVService {
    func get(_ request: DAVRequest, includeBody: Bool) async throws -> DAVResponse {
        let path = try path(of: request)
        let node: Node
        switch try await getTarget(at: path, for: request.credential) {
        case .stored(let collection, let stored):
            request.tally?.read(includeBody ? 1 : 0, book: collection.id)
            return try Self.getResponse(request, collection: collection, stored: stored, includeBody: includeBody)
        case .node(let found):
            node = found
        }
        switch node {
        case .collection(let book) where book.kind == .addressBook:
            return try await bookDocument(book, request: request, includeBody: includeBody)
        case .home(let user):
            return try await homePage(user, credential: request.credential, includeBody: includeBody)
        case .principal(let user):
            return try await principalPage(user, includeBody: includeBody)
        case .root:
            return try await principalPage(request.user, includeBody: includeBody)
        default:
            return DAVResponse(status: 405, headers: [("Allow", Self.allowedWithoutGet(node)), ("Content-Length", "0")])
        }
    }

    /// The methods a node GET does not answer supports, for the 405's `Allow` (RFC 9110
    /// §15.5.6: the target's methods, so not GET): the lists of principals and homes are
    /// read and searched only; a plain collection is also changed, copied, moved and locked.
    static func allowedWithoutGet(_ node: Node) -> String {
        switch node {
        case .principals, .homes: "OPTIONS, PROPFIND, REPORT"
        default: "OPTIONS, DELETE, PROPFIND, PROPPATCH, COPY, MOVE, REPORT, LOCK, UNLOCK"
        }
    }

    /// GET or HEAD of a stored card or file answered from one store read
    /// (`InlineResourceReads`: the card with its book, and the login's password stamp), for
    /// the server's inline path before the HTTP codec. `done` gets the answer `handle` gives
    /// with the stamp read beside it (the server trusts its cached login only while that
    /// stamp is unchanged), or nil when `handle` must answer: a path that is not a stored
    /// resource (collections, 404s), a book outside an app password's scope, a store error.
    /// It is called once, on the calling thread before this returns when the store reads
    /// without waiting (SQLite), else when the read comes back (PostgreSQL). False, and
    /// `done` never called, for another method or a store without the read.
    public func inlineResponse(to request: DAVRequest, done: @escaping @Sendable (InlineAnswer?) -> Void) -> Bool {
        let includeBody: Bool
        switch request.method {
        case "GET": includeBody = true
        case "HEAD": includeBody = false
        default: return false
        }
        guard let inlineReads, case .member(let user, let components)? = try? path(of: request), components.count >= 2
        else { return false }
        inlineReads.readInline(owner: user, collectionPath: Array(components.dropLast()), name: components[components.count - 1],
                               stampOf: request.user) { read in
            guard let read, let found = read.found,
                  // A book outside an app password's scope: `handle` answers 404.
                  Access.privileges(on: found.collection, for: request.credential) != nil
            else { return done(nil) }
            request.tally?.read(includeBody ? 1 : 0, book: found.collection.id)
            let response: DAVResponse
            do throws(DAVError) {
                response = try Self.getResponse(request, collection: found.collection, stored: found.resource, includeBody: includeBody)
            } catch {
                response = error.response
            }
            done(InlineAnswer(response: response, stamp: read.stamp))
        }
        return true
    }

    /// The answer to a GET or HEAD of `stored`, by `Accept` (for a card) and the request's
    /// conditional headers, which compare with the chosen form's ETag. A card's answer
    /// varies with `Accept`, and says so for caches.
    private static func getResponse(_ request: DAVRequest, collection: CollectionInfo, stored: StoredResource,
                                    includeBody: Bool) throws(DAVError) -> DAVResponse {
        let current = stored.info
        let isCard = collection.kind == .addressBook
        var form = isCard ? CardMediaType.negotiate(accept: request.headers["accept"]) : .vCard
        var body = stored.data
        if form == .jCard {
            // A stored card that cannot be read (none should be) is served as it is stored.
            if let json = form.render(stored: stored.data) { body = json } else { form = .vCard }
        }
        let etag = form.etag(stored: current.etag)
        var headers = [("ETag", etag), ("Last-Modified", HTTPDate.rfc1123(current.modified))]
        if isCard { headers.append(("Vary", "Accept")) }
        if let ifNoneMatch = request.headers["if-none-match"] {
            let tags = Preconditions.entityTags(ifNoneMatch)
            if tags.contains("*") || tags.contains(etag) { return DAVResponse(status: 304, headers: headers) }
        }
        if let ifMatch = request.headers["if-match"] {
            let tags = Preconditions.entityTags(ifMatch)
            guard tags.contains("*") || tags.contains(etag) else { throw DAVError.preconditionFailed }
        }
        headers.append(("Content-Type", isCard ? form.contentType : current.contentType))
        headers.append(("Content-Length", String(body.count)))
        return DAVResponse(status: 200, headers: headers, body: includeBody ? body : Data())
    }

    /// `inlineResponse(to:done:)`'s answer, with the login's password stamp read beside the card.
    public struct InlineAnswer: Sendable {
        public var response: DAVResponse
        public var stamp: String?
    }

    private enum GetTarget {
        case stored(CollectionInfo, StoredResource)
        case node(Node)
    }

    /// The card or file at `path` with its body, read in one store call since GET is the
    /// hottest path; else the node there (a collection or above the stored tree); 404 when
    /// nothing is there.
    private func getTarget(at path: ResourcePath, for credential: Credential) async throws -> GetTarget {
        if case .member(let user, let components) = path, components.count >= 2,
           let found = try await store.resource(owner: user, collectionPath: Array(components.dropLast()),
                                                name: components[components.count - 1]) {
            guard Access.privileges(on: found.collection, for: credential) != nil else { throw DAVError.notFound }
            return .stored(found.collection, found.resource)
        }
        guard case .found(let node) = try await resolve(path, for: credential) else { throw DAVError.notFound }
        guard case .object(let collection, let info, _) = node else { return .node(node) }
        guard let stored = try await store.resource(collectionID: collection.id, name: info.name) else { throw DAVError.notFound }
        return .stored(collection, stored)
    }

    // MARK: Address book

    /// The whole book in the form `Accept` prefers, cards in name order. A book that fits in
    /// one chunk of `streamChunkSize` is answered whole, with its length; a bigger one is
    /// streamed, its cards read a page at a time while the previous chunk is sent, so the
    /// server never holds more than a page and a chunk of it (`DAVBodyStream`). HEAD gets
    /// the same head and no body (a streamed body is then never produced).
    private func bookDocument(_ book: CollectionInfo, request: DAVRequest, includeBody: Bool) async throws -> DAVResponse {
        try require(.read, on: .collection(book), request)
        let form = CardMediaType.negotiate(accept: request.headers["accept"])
        let headers = [("Content-Type", form.contentType), ("Vary", "Accept")]
        // The client gets every card of the book at once: the access history flags it.
        if includeBody { request.tally?.fullDownload(book: book.id) }
        let reads = includeBody ? CardReads(request, book: book.id, withBodies: true) : nil
        let chunkSize = configuration.streamChunkSize
        // Big bodies (a phone's full-size photo) stay out of the pages and are read one at a
        // time as they are written, like a multiget's.
        var pages = PrefetchingPages(BookPages(store: store, collectionID: book.id, withBodies: true,
                                               pageSize: max(configuration.listingPageSize / 4, 1),
                                               bodyLimit: configuration.pageBodyLimit))
        let store = self.store
        let body: @Sendable (StoredResource) async throws -> Data = { card in
            guard card.bodyLeftOut else { return card.data }
            return try await store.resource(collectionID: book.id, name: card.info.name)?.data ?? Data()
        }
        var document = AddressBookDocument(form)
        var out: [UInt8] = []
        out.reserveCapacity(chunkSize + chunkSize / 4)
        var page = try await pages.nextPage()[...]
        while out.count < chunkSize {
            while out.count < chunkSize, let card = page.popFirst() {
                document.append(card: try await body(card), to: &out)
                reads?.count(1)
            }
            if out.count >= chunkSize { break }
            if pages.isFinished {
                document.finish(into: &out)
                let length = ("Content-Length", String(out.count))
                return DAVResponse(status: 200, headers: headers + [length], body: includeBody ? Data(out) : Data())
            }
            page = try await pages.nextPage()[...]
        }
        let first = out
        let rest = page
        let remaining = pages
        let documentSoFar = document
        let stream = DAVBodyStream { write in
            var pages = remaining
            var page = rest
            var document = documentSoFar
            var out = first
            do {
                while true {
                    if out.count >= chunkSize {
                        try await write(out)
                        out.removeAll(keepingCapacity: true)
                    }
                    while out.count < chunkSize, let card = page.popFirst() {
                        document.append(card: try await body(card), to: &out)
                        reads?.count(1)
                    }
                    if out.count >= chunkSize { continue }
                    if pages.isFinished { break }
                    page = try await pages.nextPage()[...]
                }
            } catch {
                pages.cancel()
                throw error
            }
            document.finish(into: &out)
            try await write(out)
        }
        return DAVResponse(status: 200, headers: headers, streamedBody: stream)
    }

    /// The length of a GET of the book without `Accept` (`DAV:getcontentlength`), or nil
    /// for a book of `bookLengthBound` bytes or more. RFC 4918 §15.4 asks the property of a
    /// resource whose GET sends a `Content-Length`, which a book's does below one chunk
    /// (`streamChunkSize`); the bound is at least that, and a chunked GET's body has the same
    /// length, so a smaller chunk does not take the property away. Only the cards' bytes
    /// tell the length (a card that does not end in a newline gets one), so the rows' sizes
    /// are read first, giving up as soon as they reach the bound, and the bodies only of a
    /// book below it: a PROPFIND never reads more of a book than that.
    func bookDocumentLength(_ book: CollectionInfo) async throws -> Int? {
        let bound = max(configuration.streamChunkSize, Self.bookLengthBound)
        var rows = BookPages(store: store, collectionID: book.id, withBodies: false, pageSize: configuration.listingPageSize,
                             bodyLimit: configuration.pageBodyLimit)
        var stored = 0
        while !rows.isFinished {
            for card in try await rows.nextPage() {
                stored += card.info.size
                if stored >= bound { return nil }
            }
        }
        var cards = BookPages(store: store, collectionID: book.id, withBodies: true, pageSize: configuration.listingPageSize,
                              bodyLimit: configuration.pageBodyLimit)
        var document = AddressBookDocument(CardMediaType.negotiate(accept: nil))
        var out: [UInt8] = []
        while !cards.isFinished {
            for card in try await cards.nextPage() {
                let body = card.bodyLeftOut
                    ? try await store.resource(collectionID: book.id, name: card.info.name)?.data ?? Data() : card.data
                document.append(card: body, to: &out)
                if out.count >= bound { return nil }
            }
        }
        document.finish(into: &out)
        return out.count
    }

    /// The default `streamChunkSize`: the least of a book that `bookDocumentLength` measures.
    static let bookLengthBound = 256 << 10

    // MARK: Home, principal and root

    /// The user's address books (their own, then those shared with them), each with its URL.
    private func homePage(_ user: String, credential: Credential, includeBody: Bool) async throws -> DAVResponse {
        var text = "Address books of \(user) (CardDAV home \(hrefs.home(user))):\n"
        for child in try await children(of: .home(user), user: user, credential: credential) {
            guard case .collection(let info) = child, info.kind == .addressBook else { continue }
            let name = info.mount?.displayName ?? info.displayName ?? info.path.last ?? ""
            let access = info.mount.map { $0.access == .readOnly ? ", shared by \(info.owner), read-only" : ", shared by \(info.owner)" } ?? ""
            text += "\(hrefs.collection(info))  \(name)\(access)\n"
        }
        return Self.plainText(text, includeBody: includeBody)
    }

    /// Who the principal is and where their address books live: what a client asks for
    /// when set up with this URL.
    private func principalPage(_ user: String, includeBody: Bool) async throws -> DAVResponse {
        let displayName = try await store.account(name: user)?.displayName
        let text = """
            \(displayName.map { "\($0) (\(user))" } ?? user)
            Principal: \(hrefs.principal(user))
            Address book home: \(hrefs.home(user))
            Set up a CardDAV client (DAVx5, Contacts, Thunderbird) with this server's URL and your user name.

            """
        return Self.plainText(text, includeBody: includeBody)
    }

    private static func plainText(_ text: String, includeBody: Bool) -> DAVResponse {
        let body = Data(text.utf8)
        return DAVResponse(status: 200, headers: [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", String(body.count))],
                           body: includeBody ? body : Data())
    }
}
