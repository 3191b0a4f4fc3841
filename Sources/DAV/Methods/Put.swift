import Authorization
import CardIndexing
import Foundation
import RoloStore
import VCard

/// PUT (RFC 4918 §9.7, RFC 6352 §6.3.2): into an address book only one valid vCard 3.0/4.0
/// (stored verbatim) or jCard (stored as vCard 4.0 text) with a UID unique in the book;
/// into a plain collection any bytes, stored verbatim. Every refusal of the card names its
/// CardDAV precondition in a 403 `DAV:error`.
enum Put {
    /// The content type cards are served with.
    static let cardContentType = "text/vcard; charset=utf-8"

    /// `text/vcard` or the legacy `text/x-vcard`, any parameters, in any letter case.
    /// Compared on bytes: the Foundation spelling (split, trim, lowercase) cost more than
    /// the rest of the PUT's header handling.
    static func isVCardMediaType(_ contentType: String) -> Bool {
        var bytes = contentType.utf8[...]
        if let semicolon = bytes.firstIndex(of: UInt8(ascii: ";")) { bytes = bytes[..<semicolon] }
        while let first = bytes.first, first == 0x20 || first == 0x09 { bytes = bytes.dropFirst() }
        while let last = bytes.last, last == 0x20 || last == 0x09 { bytes = bytes.dropLast() }
        return equalIgnoringASCIICase(bytes, "text/vcard") || equalIgnoringASCIICase(bytes, "text/x-vcard")
    }

    private static func equalIgnoringASCIICase(_ bytes: some Collection<UInt8>, _ lowercase: StaticString) -> Bool {
        let expected = UnsafeBufferPointer(start: lowercase.utf8Start, count: lowercase.utf8CodeUnitCount)
        return bytes.count == expected.count
            && zip(bytes, expected).allSatisfy { byte, lower in (byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte) == lower }
    }

    /// The one card a PUT body must hold, validated, or the CardDAV precondition it breaks.
    /// The body's bytes are checked and parsed where they are, without a copy (a String
    /// made only to validate them was a second 10 MB for a card with a big photo).
    static func validatedCard(_ body: Data) throws(DAVError) -> VCard {
        let parsed = body.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Result<[VCard], DAVError> in
            let bytes = raw.assumingMemoryBound(to: UInt8.self)
            guard isValidUTF8(bytes) else {
                return .failure(invalid("The vCard is not valid UTF-8."))
            }
            do throws(VCardError) {
                return .success(try VCardParser.parse(bytes))
            } catch {
                return .failure(invalid(error.description))
            }
        }
        let cards = try parsed.get()
        guard cards.count == 1, let card = cards.first else {
            throw invalid("Expected exactly one vCard, found \(cards.count).")
        }
        guard card.version == .v30 || card.version == .v40 else {
            throw DAVError.precondition(403, .cardDAV("supported-address-data"),
                                        message: "vCard \(card.version.rawValue) is not accepted; send 3.0 or 4.0.")
        }
        do {
            try VCardValidator.validate(card, requireUID: true)
        } catch {
            throw invalid(error.description)
        }
        return card
    }

    /// The one card a jCard PUT body holds (RFC 7095), validated like a vCard and written as
    /// the vCard 4.0 text the store keeps: `bytes` are what is stored.
    static func validatedJCard(_ body: Data) throws(DAVError) -> (card: VCard, bytes: Data) {
        let cards: [VCard]
        do throws(VCardError) {
            cards = try JCard.decode([UInt8](body))
        } catch {
            throw invalid("Not a valid jCard: \(error.description)")
        }
        guard cards.count == 1, let card = cards.first else {
            throw invalid("Expected exactly one jCard, found \(cards.count).")
        }
        do {
            try VCardValidator.validate(card, requireUID: true)
        } catch {
            throw invalid(error.description)
        }
        let bytes = Data(VCardWriter.write(card).utf8)
        // The written text must read back as a card a vCard PUT would take.
        return (try validatedCard(bytes), bytes)
    }

    /// UTF-8 validation in place (`UTF8Span`); older Apple systems make a String of it.
    static func isValidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        if #available(macOS 26.0, *) { return (try? UTF8Span(validating: bytes.span)) != nil }
        return String(validating: bytes, as: UTF8.self) != nil
    }

    static func invalid(_ message: String) -> DAVError {
        DAVError.precondition(403, .cardDAV("valid-address-data"), message: message)
    }
}

extension DAVService {
    func put(_ request: DAVRequest) async throws -> DAVResponse {
        let path = try path(of: request)
        guard case .member(_, let components) = path, let name = components.last else {
            throw DAVError(405, message: "Cannot PUT to a collection.")
        }
        let collection: CollectionInfo
        var existing: ResourceInfo?
        if let book = bookUnread(path) {
            // A write the store judges, the card unread (`mayWriteUnread`): the access a
            // member of the book has, as `.object` below decides it (an owner's, who may
            // also bind: only the owner's writes go unread).
            guard let held = Access.privileges(on: .member(of: book), for: request.credential) else { throw DAVError.notFound }
            if !held.contains(.writeContent) {
                throw DAVError.needPrivileges(href: hrefs.resource(in: book, name: name), privilege: .writeContent)
            }
            collection = book
        } else {
            switch try await resolve(path, for: request.credential) {
            case .found(.object(let parent, let info, let body)):
                // Checked before the body is read or validated (RFC 3744, sabre's order).
                try require(.writeContent, on: .object(parent, info, body), request)
                collection = parent; existing = info
            case .found:
                throw DAVError(405, message: "Cannot PUT to a collection.")
            case .missing(let parent, let parentIsHome, _):
                guard let parent else {
                    if parentIsHome { throw DAVError(403, message: "Files must be stored inside a collection.") }
                    throw DAVError.conflict
                }
                try require(.bind, on: .collection(parent), request)
                collection = parent
            }
            guard try await ifHeaderHolds(request, path: path, etag: existing?.etag) else { throw DAVError.preconditionFailed }
        }
        try await checkLocks(request, path: path, descendants: false)

        let body = request.body
        let isBook = collection.kind == .addressBook
        if body.count > configuration.maxResourceSize {
            throw isBook
                ? DAVError.precondition(413, .cardDAV("max-resource-size"),
                                        message: "The card is larger than \(configuration.maxResourceSize) bytes.")
                : DAVError(413, message: "The resource is larger than \(configuration.maxResourceSize) bytes.")
        }
        let contentType = request.headers["content-type"]
        var card: CardMetadata?
        var stored = body
        // A jCard is stored as vCard text, not byte for byte: no ETag in the answer then
        // (RFC 6352 §6.3.2.3), the client GETs the card for it.
        var transformed = false
        if isBook {
            // No Content-Type: a vCard, as clients have always sent them.
            let form = contentType.map { Put.isVCardMediaType($0) ? .vCard : CardMediaType(mediaType: $0) } ?? .vCard
            switch form {
            case .vCard?:
                card = CardMetadata(card: try Put.validatedCard(body))
            case .jCard?:
                let jCard = try Put.validatedJCard(body)
                card = CardMetadata(card: jCard.card)
                stored = jCard.bytes
                transformed = true
            case nil:
                throw DAVError.precondition(403, .cardDAV("supported-address-data"), message:
                    "Address books hold text/vcard or \(CardMediaType.jCardContentType), not \(contentType ?? "").")
            }
        }
        // A card in a shared book counts against the book's owner.
        try await checkQuota(user: collection.owner, adding: stored.count - (existing?.size ?? 0))

        let result: PutResult
        do {
            result = try await store.putResource(collectionID: collection.id, name: name, data: stored,
                                                 contentType: isBook ? Put.cardContentType : (contentType ?? "application/octet-stream"),
                                                 card: card, precondition: Preconditions.write(request.headers))
        } catch StoreError.uidConflict(let existingName) {
            let href = hrefs.resource(in: collection, name: existingName)
            throw DAVError(403, condition: .cardDAV("no-uid-conflict"), conditionHref: href,
                           message: "Another card in this address book has the same UID.")
        }
        request.tally?.wrote(book: collection.id)
        let etag = transformed ? [] : [("ETag", result.etag)]
        return DAVResponse(status: result.created ? 201 : 204, headers: etag + [("Content-Length", "0")])
    }

    /// Whether a PUT may go with nothing of its card read (`LookupAhead.writesUnread`): an
    /// update naming one `If-Match` entity tag, not `*`, and no `If-None-Match`; or a new
    /// card, `If-None-Match: *` and no `If-Match` (how clients upload cards and an import
    /// goes). Either with no `If` header (its lock tokens and ETags are judged on the card
    /// read first) and no quota (which counts the replaced card's size). Such a PUT needs
    /// nothing of the card before the store's write, which judges the ETag on the row it
    /// updates, or finds the name or the UID taken, and answers 412 or 403 as any PUT does;
    /// a store that remembers the book then reads nothing.
    func mayWriteUnread(_ header: (String) -> String?) -> Bool {
        guard configuration.quotaBytes == nil, header("if") == nil else { return false }
        switch (header("if-match"), header("if-none-match")) {
        case (let ifMatch?, nil):
            let tags = Preconditions.entityTags(ifMatch)
            return tags.count == 1 && tags[0] != "*"
        case (nil, let ifNoneMatch?):
            return Preconditions.entityTags(ifNoneMatch) == ["*"]
        default:
            return false
        }
    }

    /// The book of a PUT that its store signed in with nothing read (`LookupAhead.fillUnread`):
    /// an address book of the login's own home, as the store remembered it. Nil otherwise,
    /// and the PUT resolves its path as any request does. Only a lookup made for this
    /// request's headers is filled so (`lookupAhead(forPath:method:header:)` asks
    /// `mayWriteUnread`), so they are not judged again here.
    private func bookUnread(_ path: ResourcePath) -> CollectionInfo? {
        guard case .member(let user, let components) = path, components.count >= 2,
              let book = LookupAhead.current?.takeUnreadBook(owner: user, path: Array(components.dropLast()),
                                                             name: components[components.count - 1]),
              book.kind == .addressBook else { return nil }
        return book
    }

    /// 507 with `DAV:quota-not-exceeded` when the write would pass the user's quota (`Quota`).
    func checkQuota(user: String, adding bytes: Int) async throws {
        do {
            try await Quota(limit: configuration.quotaBytes).check(owner: user, adding: bytes, in: store)
        } catch let exceeded as QuotaExceeded {
            throw DAVError.quotaExceeded(exceeded)
        }
    }
}
