import Authorization
import CardIndexing
import DAV
import Foundation
import RoloStore

/// The JSON API under `/api/`: the signed-in user's shares (given and received), app
/// passwords and access history, the same operations as `rolo share|token|access`, so the
/// web UI and scripts use one path. Each path names the account action it takes and
/// `Access` allows it or not: account password only (app passwords get 403), and only for
/// the signed-in user's own account; an admin acts for other users from the command line.
/// Every refusal is a JSON `{"error": …}` and changes nothing.
///
/// | method and path | what |
/// | --- | --- |
/// | `GET /api/account` | the user's account record |
/// | `GET /api/shares` | `{"given": [...], "received": [...]}` |
/// | `POST /api/shares` `{"book", "sharee", "access": "read"/"read-write"}` | share one of the user's books (pending) |
/// | `POST /api/shares/OWNER/BOOK/SHAREE/accept` | the sharee accepts |
/// | `DELETE /api/shares/OWNER/BOOK/SHAREE` | the owner revokes or the sharee leaves |
/// | `GET /api/tokens` | the user's app passwords, never their secrets |
/// | `POST /api/tokens` `{"name", "read_only", "books": [...]}` | a new one; its secret in the answer, once |
/// | `DELETE /api/tokens/NAME` | revoke |
/// | `GET /api/access?since=YYYY-MM-DD` | the access history (30 days by default) |
/// | `GET /api/books/BOOK/cards/CARD/history` | the card's kept versions, oldest first, each with what it changed |
/// | `POST /api/books/BOOK/cards/CARD/restore` `{"seq", "etag"}` | that version becomes a new write (`etag`: only over it) |
/// | `POST /api/books/BOOK/undo` `{"to", "device", "dry_run", "include_conflicts"}` | the plan; carried out unless `dry_run` |
///
/// The history paths (issue 31) ask what `rolo history` and `rolo restore` ask
/// (`CardHistory`), on a book the user reaches (BOOK as in their home: a share is
/// `book~owner`) with the privileges `Access` gives there.
struct AccountAPI: Sendable {
    /// Accounts, app passwords, the access history and shares; cards only for their history.
    let store: any AccountStore & SharingStore & CardStore & WebStore
    /// The store's clock: an undo's "not in the future" is judged by the time its writes get.
    let clock: StoreClock

    struct Answer: Sendable {
        var status: Int
        var json: Data
        /// What a restore or an undo wrote, for the access history: its own entry, under the
        /// credential that asked, as the web UI's undo has.
        var counts: RequestTally.Counts? = nil
    }

    static let prefix = "/api/"

    /// `path` is percent-decoded and starts with `/api/`.
    func handle(method: String, path: String, query: [String: String], body: Data, credential: Credential) async -> Answer {
        let segments = path.dropFirst(Self.prefix.count).split(separator: "/").map(String.init)
        // The API takes no admin action, so whether the user is one does not matter here.
        if case .denied(let denied) = Access.decide(Self.action(method: method, segments: segments, user: credential.user),
                                                      by: .user(credential, admin: false)) {
            return Self.error(403, denied.message)
        }
        do {
            return try await route(method: method, segments: segments, query: query, body: body, user: credential.user)
        } catch let error as APIError {
            return Self.error(error.status, error.message)
        } catch StoreError.notFound {
            return Self.error(404, "Not found.")
        } catch StoreError.noSuchUser {
            return Self.error(404, "No such user.")
        } catch StoreError.invalid(let reason), StoreError.invalidName(let reason) {
            return Self.error(400, reason.prefix(1).uppercased() + reason.dropFirst() + ".")
        } catch StoreError.unavailable {
            // The responder adds `Retry-After`.
            return Self.error(503, "The database is unavailable; try again later.")
        } catch {
            return Self.error(500, "Internal error.")
        }
    }

    private func route(method: String, segments: [String], query: [String: String], body: Data,
                       user: String) async throws -> Answer {
        switch (method, segments.first, segments.count) {
        case ("GET", "account", 1):
            guard let account = try await store.account(name: user) else { throw APIError(404, "No such user.") }
            return Self.ok(Self.json(account))
        case ("GET", "shares", 1):
            let shares = try await store.shares(of: user)
            return Self.ok(["given": shares.filter { $0.owner == user }.map(Self.json),
                            "received": shares.filter { $0.sharee == user }.map(Self.json)])
        case ("POST", "shares", 1):
            let fields = try Self.object(body)
            let book = try Self.string(fields, "book"), sharee = try Self.string(fields, "sharee")
            let accessName = (fields["access"] as? String) ?? ShareAccess.readOnly.rawValue
            guard let access = ShareAccess(rawValue: accessName) else {
                throw APIError(400, "access must be \"read\" or \"read-write\".")
            }
            if let existing = try await store.shares(of: user).first(where: { $0.owner == user && $0.book == book && $0.sharee == sharee }),
               existing.access == access {
                return Self.ok(Self.json(existing))
            }
            let share = try await store.shareBook(owner: user, book: book, with: sharee, access: access, accepted: false)
            return Answer(status: 201, json: Self.serialized(Self.json(share)))
        case ("POST", "shares", 5) where segments[4] == "accept":
            let (owner, book, sharee) = (segments[1], segments[2], segments[3])
            return Self.ok(Self.json(try await store.acceptShare(sharee: sharee, owner: owner, book: book)))
        case ("DELETE", "shares", 4):
            let (owner, book, sharee) = (segments[1], segments[2], segments[3])
            try await store.removeShare(owner: owner, book: book, sharee: sharee)
            return Answer(status: 204, json: Data())
        case ("GET", "tokens", 1):
            return Self.ok(try await store.appPasswords(user: user).map(Self.json))
        case ("POST", "tokens", 1):
            let fields = try Self.object(body)
            let name = try Self.string(fields, "name")
            let readOnly = fields["read_only"] as? Bool ?? false
            var books: [String]?
            if let listed = fields["books"] {
                guard let names = listed as? [String] else { throw APIError(400, "books must be a list of book names.") }
                books = names
            }
            let created = try await store.createAppPassword(user: user, name: name, readOnly: readOnly, books: books)
            var answer = Self.json(created.appPassword)
            answer["secret"] = created.secret
            return Answer(status: 201, json: Self.serialized(answer))
        case ("DELETE", "tokens", 2):
            try await store.revokeAppPassword(user: user, name: segments[1])
            return Answer(status: 204, json: Data())
        case ("GET", "access", 1):
            var since = Date().addingTimeInterval(-30 * 86_400)
            if let text = query["since"] {
                guard let parsed = Self.date(text) else { throw APIError(400, "since must be YYYY-MM-DD or an ISO 8601 time.") }
                since = parsed
            }
            return Self.ok(try await store.accessHistory(user: user, since: since).map(Self.json))
        case ("GET", "books", 5) where segments[2] == "cards" && segments[4] == "history":
            return try await cardHistory(book: segments[1], card: segments[3], user: user)
        case ("POST", "books", 5) where segments[2] == "cards" && segments[4] == "restore":
            return try await restoreVersion(book: segments[1], card: segments[3], body: body, user: user)
        case ("POST", "books", 3) where segments[2] == "undo":
            return try await undo(book: segments[1], body: body, user: user)
        case (_, "account", 1), (_, "shares", _), (_, "tokens", _), (_, "access", 1), (_, "books", 3), (_, "books", 5):
            throw APIError(405, "\(method) is not allowed here.")
        default:
            throw APIError(404, "No such API path.")
        }
    }

    /// The account action a request takes; any other path is the account's too (an app
    /// password gets 403 before it learns which paths exist).
    static func action(method: String, segments: [String], user: String) -> AccountAction {
        switch (method, segments.first, segments.count) {
        case ("POST", "shares", 1): .manageSharesGiven(owner: user)
        case ("POST", "shares", 5) where segments[4] == "accept": .manageSharesReceived(sharee: segments[3])
        case ("DELETE", "shares", 4): .removeShare(owner: segments[1], sharee: segments[3])
        case (_, "tokens", _): .manageAppPasswords(of: user)
        case (_, "access", _): .seeAccessHistory(of: user)
        default: .manageAccount(of: user)
        }
    }

    // MARK: History (issue 31)

    /// The book `slug` in `user`'s home and its history, once `Access` grants `needs` there.
    private func historyBook(_ slug: String, user: String, needs: Privileges) async throws -> (CollectionInfo, any CardHistoryStore) {
        let credential = Credential.accountPassword(user)
        var found: CollectionInfo?
        if !slug.contains("~") { found = try await store.collection(owner: user, path: [slug]) }
        if found == nil { found = try await store.mount(sharee: user, name: slug) }
        guard let book = found, book.kind == .addressBook, let granted = Access.privileges(on: book, for: credential) else {
            throw APIError(404, "No address book \(slug).")
        }
        guard granted.isSuperset(of: needs) else { throw APIError(403, "This address book is shared with you read-only.") }
        guard let history = store as? any CardHistoryStore else { throw APIError(404, "This server keeps no card versions.") }
        return (book, history)
    }

    /// The card's file name, or the name of the card with this UID, with its versions.
    private func cardVersions(_ card: String, in book: CollectionInfo,
                              history: any CardHistoryStore) async throws -> (name: String, versions: [CardVersion]) {
        let versions = try await history.cardVersions(collectionID: book.id, name: card)
        if versions.isEmpty, let byUID = try await store.resourceName(collectionID: book.id, uid: card) {
            return (byUID, try await history.cardVersions(collectionID: book.id, name: byUID))
        }
        return (card, versions)
    }

    private func cardHistory(book slug: String, card: String, user: String) async throws -> Answer {
        let (book, history) = try await historyBook(slug, user: user, needs: .read)
        let (name, versions) = try await cardVersions(card, in: book, history: history)
        guard !versions.isEmpty else { throw APIError(404, "No card \(card) in \(slug), nor any version of it.") }
        let devices = try await CardHistory.deviceNames(of: user, in: store)
        let rows = zip(versions, CardHistory.describe(versions)).map { version, changes -> [String: Any] in
            ["seq": version.seq, "time": Self.time(version.at), "etag": version.etag ?? NSNull(), "deleted": version.isDeletion,
             "user": version.user ?? NSNull(), "device": CardHistory.device(of: version, names: devices, namesOf: user),
             "changes": changes]
        }
        return Self.ok(["card": name, "versions": rows])
    }

    private func restoreVersion(book slug: String, card: String, body: Data, user: String) async throws -> Answer {
        let (book, history) = try await historyBook(slug, user: user, needs: [.writeContent, .bind])
        let fields = try Self.object(body)
        guard let seq = (fields["seq"] as? Int).map(Int64.init) else { throw APIError(400, "seq is missing: the version's seq from its history.") }
        let name = try await cardVersions(card, in: book, history: history).name
        let found: (version: CardVersion, current: String?)
        do {
            found = try await CardHistory.versionToRestore(collectionID: book.id, name: name, seq: seq,
                                                           shownETag: fields["etag"] as? String, history: history)
        } catch let refused as CardHistory.RestoreError {
            throw APIError(409, refused.description)
        }
        do {
            let result = try await asAuthor(user) {
                try await CardHistory.restore(found.version, current: found.current, collectionID: book.id, in: store)
            }
            var answer = Self.ok(["card": name, "restored_seq": seq, "etag": result.etags[name] ?? NSNull()])
            answer.counts = RequestTally.Counts(bookID: book.id)
            answer.counts?.cardsWritten = 1
            return answer
        } catch StoreError.preconditionFailed {
            throw APIError(409, "The card changed meanwhile; nothing was restored.")
        } catch StoreError.uidConflict {
            throw APIError(409, "Another card in the book has this version's UID now; nothing was restored.")
        } catch let refused as CardHistory.RestoreError {
            throw APIError(409, refused.description)
        }
    }

    private func undo(book slug: String, body: Data, user: String) async throws -> Answer {
        let (book, history) = try await historyBook(slug, user: user, needs: [.bind, .writeContent, .unbind])
        let fields = try Self.object(body)
        let text = try Self.string(fields, "to")
        guard let time = CardHistory.parseTime(text) else { throw APIError(400, "to must be an ISO 8601 time, e.g. 2026-11-28T07:10:00Z.") }
        let device = (fields["device"] as? String).flatMap { $0.isEmpty ? nil : $0 }
        let dryRun = fields["dry_run"] as? Bool ?? false
        let includeConflicts = fields["include_conflicts"] as? Bool ?? false
        let plan: UndoPlan
        do {
            plan = try await CardHistory.undoPlan(collectionID: book.id, since: time, device: device, of: user, now: clock.now,
                                                  includeConflicts: includeConflicts, accounts: store, history: history)
        } catch let refused as CardHistory.RestoreError {
            throw APIError(400, refused.description)
        }
        if !dryRun {
            do {
                _ = try await asAuthor(user) { try await CardHistory.apply(plan, collectionID: book.id, in: store) }
            } catch StoreError.preconditionFailed, StoreError.uidConflict {
                throw APIError(409, "A card changed while the undo ran; nothing was changed.")
            }
        }
        let devices = try await CardHistory.deviceNames(of: user, in: store)
        let steps = plan.steps.map { step -> [String: Any] in
            switch step {
            case let .revert(name, version, current):
                ["card": name, "action": current == nil ? "undelete" : "revert", "to_time": Self.time(version.at),
                 "to_etag": version.etag ?? NSNull()]
            case let .remove(name, _):
                ["card": name, "action": "remove"]
            }
        }
        let conflicts = plan.conflicts.map { conflict -> [String: Any] in
            ["card": conflict.name, "changed_by": conflict.others.map { other -> [String: Any] in
                ["user": other.user ?? NSNull(), "device": CardHistory.device(of: other, names: devices, namesOf: user),
                 "time": Self.time(other.at)]
            }]
        }
        var answer = Self.ok(["dry_run": dryRun, "applied": !dryRun && !plan.isEmpty, "steps": steps, "conflicts": conflicts])
        if !dryRun, !plan.isEmpty {
            var counts = RequestTally.Counts(bookID: book.id)
            for step in plan.steps {
                if case .remove = step { counts.cardsDeleted += 1 } else { counts.cardsWritten += 1 }
            }
            answer.counts = counts
        }
        return answer
    }

    /// A write the change log attributes to the signed-in user (the API takes the account password only).
    private func asAuthor<T: Sendable>(_ user: String, _ body: () async throws -> T) async throws -> T {
        try await ChangeAuthor.$current.withValue(ChangeAuthor(user: user, credentialID: 0)) { try await body() }
    }

    // MARK: JSON

    struct APIError: Error {
        var status: Int
        var message: String
        init(_ status: Int, _ message: String) { self.status = status; self.message = message }
    }

    static func error(_ status: Int, _ message: String) -> Answer {
        Answer(status: status, json: serialized(["error": message]))
    }

    static func ok(_ value: Any) -> Answer { Answer(status: 200, json: serialized(value)) }

    static func serialized(_ value: Any) -> Data {
        (try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
    }

    static func object(_ body: Data) throws -> [String: Any] {
        guard let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] else {
            throw APIError(400, "The body must be a JSON object.")
        }
        return object
    }

    static func string(_ fields: [String: Any], _ key: String) throws -> String {
        guard let value = fields[key] as? String, !value.isEmpty else { throw APIError(400, "\(key) is missing.") }
        return value
    }

    static func date(_ text: String) -> Date? {
        if let date = ISO8601DateFormatter().date(from: text) { return date }
        let day = ISO8601DateFormatter()
        day.formatOptions = [.withFullDate]
        return day.date(from: text)
    }

    static func time(_ date: Date?) -> Any {
        date.map { ISO8601DateFormatter().string(from: $0) } ?? NSNull()
    }

    static func json(_ account: UserAccount) -> [String: Any] {
        ["name": account.name, "display_name": account.displayName ?? NSNull(), "email": account.email ?? NSNull(),
         "app_passwords_only": account.appPasswordsOnly, "admin": account.admin]
    }

    static func json(_ share: Share) -> [String: Any] {
        ["owner": share.owner, "book": share.book, "book_display_name": share.bookDisplayName ?? NSNull(),
         "sharee": share.sharee, "access": share.access.rawValue, "state": share.state.rawValue,
         "mount": share.mountName, "mount_display_name": share.mountDisplayName ?? NSNull(), "created": time(share.created)]
    }

    static func json(_ password: AppPassword) -> [String: Any] {
        ["name": password.name, "read_only": password.scope.readOnly,
         "books": password.scope.books == nil ? NSNull() : password.bookNames, "created": time(password.created),
         "last_used": time(password.lastUsed), "last_address": password.lastAddress ?? NSNull(),
         "last_user_agent": password.lastUserAgent ?? NSNull(), "revoked": time(password.revoked)]
    }

    static func json(_ record: AccessRecord) -> [String: Any] {
        ["period": record.period.rawValue, "start": time(record.start), "user": record.user,
         "credential": record.credential ?? NSNull(), "book_owner": record.bookOwner ?? NSNull(),
         "book": record.book ?? NSNull(), "requests": record.requests, "cards_read": record.cardsRead,
         "cards_written": record.cardsWritten, "cards_deleted": record.cardsDeleted, "full_download": record.fullDownload]
    }
}
