import Authorization
import ContactFeeds
import Crypto
import DAV
import Foundation
import HTTPTypes
import Hummingbird
import RoloStore

/// `/feeds/<secret>` (issue 33): a user's feed for calendar apps and desk phones, which
/// subscribe without a login. The secret is the only credential, so every failure to find a
/// live feed is the same 404 (never 401: a feed reader must not prompt for a password).
/// Access is decided again at every read: the chosen books the user can still read (their
/// own address books and accepted shares; none chosen: all of them), so a share removed
/// drops its book from the next answer.
///
/// The ETag is strong and cheap: a hash of the feed's settings and each book's id and sync
/// seq, read before any card, so a conditional GET with a matching `If-None-Match` answers
/// 304 without reading a card. `Last-Modified` is the newest card or book change.
struct FeedEndpoint: Sendable {
    static let root = "/feeds"
    /// Bumped when a writer's output changes for the same cards, so clients fetch it again.
    static let formatVersion = "1"

    let store: any RoloStore

    func answer(method: String, path: String, ifNoneMatch: String?, ifModifiedSince: String?) async -> Response {
        guard method == "GET" || method == "HEAD" else {
            var response = RoloResponder.plain(.methodNotAllowed, "A feed is read with GET.\n")
            response.headers[.allow] = "GET, HEAD"
            return response
        }
        guard let feeds = store as? any FeedStore else { return Self.notFound() }
        var secret = path.dropFirst(Self.root.count + 1)
        // Some apps want a file name: `<secret>.ics` and `<secret>.xml` are the feed too.
        for suffix in [".ics", ".xml"] where secret.hasSuffix(suffix) { secret = secret.dropLast(suffix.count) }
        do {
            guard path.hasPrefix(Self.root + "/"), !secret.isEmpty, let feed = try await feeds.feed(secret: String(secret)) else {
                return Self.notFound()
            }
            let books = try await readableBooks(of: feed)
            let etag = Self.etag(feed, books)
            var headers = HTTPFields()
            headers[.eTag] = etag
            headers[.cacheControl] = "private, no-cache"
            if let ifNoneMatch, Self.matches(ifNoneMatch, etag) {
                try? await feeds.noteFeedRead(id: feed.id, at: Date())
                return Response(status: .notModified, headers: headers)
            }
            var cards: [FeedContact] = []
            var seen = Set<String>()
            var newest = books.map(\.modified).max() ?? feed.created
            for book in books {
                for resource in try await store.allResources(collectionID: book.id).sorted(by: { $0.info.name < $1.info.name }) {
                    newest = max(newest, resource.info.modified)
                    guard let card = FeedContact(key: "\(book.id)-\(resource.info.name)", bytes: Array(resource.data)),
                          seen.insert(card.key).inserted else { continue }
                    cards.append(card)
                }
            }
            let lastModified = HTTPDate.rfc1123(newest)
            headers[.lastModified] = lastModified
            if ifNoneMatch == nil, let since = ifModifiedSince.flatMap(HTTPDate.parseIMFFixdate), newest.timeIntervalSince1970.rounded(.down) <= since.timeIntervalSince1970 {
                try? await feeds.noteFeedRead(id: feed.id, at: Date())
                return Response(status: .notModified, headers: headers)
            }
            let body: String
            switch feed.kind {
            case .birthdays:
                headers[.contentType] = "text/calendar; charset=utf-8"
                headers[.contentDisposition] = "inline; filename=\"birthdays.ics\""
                let stamp = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC")!, from: newest)
                body = BirthdayCalendar.write(cards, options: .init(
                    name: "Birthdays (\(feed.user))",
                    stamp: (stamp.year ?? 2000, stamp.month ?? 1, stamp.day ?? 1, stamp.hour ?? 0, stamp.minute ?? 0, stamp.second ?? 0)))
            case .yealink, .fritzbox, .snom:
                headers[.contentType] = "text/xml; charset=utf-8"
                let format = PhoneBookFormat(rawValue: feed.kind.rawValue) ?? .yealink
                body = format.write(cards, bookName: books.count == 1 ? (books[0].mount?.displayName ?? books[0].displayName ?? books[0].path.last ?? "Rolo") : "Rolo")
            }
            try? await feeds.noteFeedRead(id: feed.id, at: Date())
            let bytes = ByteBuffer(string: body)
            headers[.contentLength] = String(bytes.readableBytes)
            return Response(status: .ok, headers: headers, body: method == "HEAD" ? ResponseBody() : ResponseBody(byteBuffer: bytes))
        } catch StoreError.unavailable {
            return RoloResponder.unavailable()
        } catch {
            return RoloResponder.plain(.internalServerError, "Internal error.\n")
        }
    }

    /// The feed's chosen books the user can read now, in id order: the books of their home
    /// (their own and their accepted mounts), each asked of `Access` as the user's own
    /// reading (a feed is the user reading, through its secret instead of a password).
    func readableBooks(of feed: Feed) async throws -> [CollectionInfo] {
        let own = try await store.childCollections(owner: feed.user, parentPath: []).filter { $0.kind == .addressBook }
        let mounted = try await store.mounts(sharee: feed.user)
        let reader = Credential.accountPassword(feed.user)
        let readable = (own + mounted).filter { Access.privileges(on: .collection($0), for: reader)?.contains(.read) == true }
        let chosen = feed.bookIDs.isEmpty ? readable : readable.filter { feed.bookIDs.contains($0.id) }
        var seen = Set<Int64>()
        return chosen.filter { seen.insert($0.id).inserted }.sorted { $0.id < $1.id }
    }

    static func etag(_ feed: Feed, _ books: [CollectionInfo]) -> String {
        var text = "\(formatVersion)|\(feed.id)|\(feed.kind.rawValue)|\(feed.user)"
        for book in books { text += "|\(book.id):\(book.syncSeq):\(book.mount?.displayName ?? book.displayName ?? "")" }
        let digest = SHA256.hash(data: Data(text.utf8)).prefix(16).map { String(format: "%02x", $0) }.joined()
        return "\"\(digest)\""
    }

    /// `If-None-Match`: `*`, or a list of tags one of which is ours (weak comparison, RFC 9110 §13.1.2).
    static func matches(_ header: String, _ etag: String) -> Bool {
        header.split(separator: ",").contains { tag in
            let trimmed = tag.trimmingCharacters(in: .whitespaces)
            return trimmed == "*" || trimmed == etag || trimmed == "W/" + etag
        }
    }

    static func notFound() -> Response { RoloResponder.plain(.notFound, "Not Found\n") }
}
