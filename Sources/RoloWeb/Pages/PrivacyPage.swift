import Authorization
import CardIndexing
import Foundation
import RoloStore

extension WebApp {
    /// Each privacy form names the account action it takes; `Access` allows it or not.
    func privacyRoute(_ context: PageContext, rest: [String], method: String) async throws -> WebResponse {
        let user = context.user, form = context.form
        let action: AccountAction
        switch (method, rest.joined(separator: "/")) {
        case ("GET", ""): action = .manageAccount(of: user)
        case ("POST", "tokens"), ("POST", "tokens/revoke"), ("POST", "mobileconfig"): action = .manageAppPasswords(of: user)
        case ("POST", "shares"): action = .manageSharesGiven(owner: user)
        case ("POST", "shares/accept"): action = .manageSharesReceived(sharee: user)
        case ("POST", "shares/remove"): action = .removeShare(owner: form["owner"] ?? "", sharee: form["sharee"] ?? "")
        default: throw WebError.notFound
        }
        try context.require(action)
        switch (method, rest.joined(separator: "/")) {
        case ("POST", "tokens"): return try await createToken(context)
        case ("POST", "tokens/revoke"):
            try await store.revokeAppPassword(user: user, name: form["name"] ?? "")
            return .redirect(base + "/privacy?done=token-revoked")
        case ("POST", "mobileconfig"): return try mobileconfig(context)
        case ("POST", "shares"): return try await share(context)
        case ("POST", "shares/accept"):
            try await store.acceptShare(sharee: user, owner: form["owner"] ?? "", book: form["book"] ?? "")
            return .redirect(base + "/privacy?done=accepted")
        case ("POST", "shares/remove"):
            try await store.removeShare(owner: form["owner"] ?? "", book: form["book"] ?? "", sharee: form["sharee"] ?? "")
            return .redirect(base + "/privacy?done=share-removed")
        default:
            return try await privacyPage(context)
        }
    }

    /// `GET /web/privacy`: app passwords, shares both ways, the access history with a chart per device.
    func privacyPage(_ context: PageContext, error: String? = nil, status: Int = 200) async throws -> WebResponse {
        let user = context.user
        async let tokensRead = store.appPasswords(user: user)
        async let sharesRead = store.shares(of: user)
        let now = store.clock.now
        let since = now.addingTimeInterval(-30 * 86_400)
        async let historyRead = store.accessHistory(user: user, since: since)
        let (tokens, shares, history) = try await (tokensRead, sharesRead, historyRead)
        let books = try await books(user: user)
        var model = try await pageModel(context, title: "Privacy")
        model["onPrivacy"] = true
        if var layoutUser = model["user"] as? [String: Any] {
            layoutUser["onPrivacy"] = true
            model["user"] = layoutUser
        }
        let devices = Self.deviceCharts(history, user: user, since: since, now: now)
        model["privacyPage"] = [
            "error": error ?? false,
            "tokens": tokens.map { token -> [String: Any] in
                let scope = (token.scope.readOnly ? "Read only" : "Read and write") + ", "
                    + (token.scope.books == nil ? "every book" : token.bookNames.joined(separator: ", "))
                var lastUsed = "Never"
                if let used = token.lastUsed {
                    lastUsed = Formatting.time(used) + [token.lastAddress, token.lastUserAgent].compactMap { $0 }.map { ", " + $0 }.joined()
                }
                return ["name": token.name, "access": scope, "created": Formatting.day(token.created),
                        "createdISO": Formatting.iso(token.created), "lastUsed": lastUsed,
                        "revoked": token.revoked.map(Formatting.day) ?? false]
            },
            "hasTokens": !tokens.isEmpty,
            "books": books.map { ["slug": $0.slug, "name": $0.displayName] },
            "ownBooks": books.filter { $0.sharedBy == nil }.map { ["slug": $0.slug, "name": $0.displayName] },
            "received": shares.filter { $0.sharee == user }.map { shareModel($0) },
            "hasReceived": shares.contains { $0.sharee == user },
            "given": shares.filter { $0.owner == user }.map { shareModel($0) },
            "hasGiven": shares.contains { $0.owner == user },
            "devices": devices,
            "hasDevices": !devices.isEmpty,
            "history": history.sorted { ($0.start, $0.credential ?? "") > ($1.start, $1.credential ?? "") }.prefix(300).map { record -> [String: Any] in
                [
                    // Recent traffic is kept per hour, older per day (the store rolls hours up): say which.
                    "day": record.period == .hour ? Formatting.time(record.start) : Formatting.day(record.start),
                    "iso": Formatting.iso(record.start), "device": Self.deviceName(record, user: user),
                    "book": record.book.map { book in record.bookOwner == user ? book : "\(book) (\(record.bookOwner ?? ""))" } ?? "—",
                    "requests": record.requests, "read": record.cardsRead, "written": record.cardsWritten,
                    "deleted": record.cardsDeleted, "full": record.fullDownload,
                    "changes": changesLink(record, user: user),
                ]
            },
        ] as [String: Any]
        return .html(renderer.render("page", model), status: status)
    }

    func shareModel(_ share: Share) -> [String: Any] {
        [
            "id": String(share.id), "owner": share.owner, "book": share.book, "sharee": share.sharee,
            "bookName": share.bookDisplayName ?? share.book, "access": share.access == .readOnly ? "read only" : "read and write",
            "readOnly": share.access == .readOnly, "pending": share.state == .pending,
        ]
    }

    /// For the user's own device in their own book: what it changed there since the row's
    /// time, and its undo (the same page: the plan, then the confirm button).
    func changesLink(_ record: AccessRecord, user: String) -> Any {
        guard record.user == user, record.bookOwner == user, let book = record.book else { return false }
        let device = record.credential ?? CardHistory.accountPasswordDevice
        let url = URLs.bookPage(base, book, "undo-changes", query: [("to", Formatting.iso(record.start)), ("device", device)])
        return ["url": url, "undoURL": url + "#undo-confirm", "device": Self.deviceName(record, user: user), "book": book]
    }

    static func deviceName(_ record: AccessRecord, user: String) -> String {
        if record.user != user { return "\(record.user) (shared with them)" }
        return record.credential ?? "Account password"
    }

    /// One small bar chart per device: requests per day over the last 30 days, drawn as
    /// SVG by the template (presentation attributes only, colours from the stylesheet).
    static func deviceCharts(_ history: [AccessRecord], user: String, since: Date, now: Date) -> [[String: Any]] {
        let days = 30
        let width = 300, height = 64, baseline = 60
        var perDevice: [String: [Int]] = [:]
        for record in history {
            let day = Int(record.start.timeIntervalSince(since) / 86_400)
            guard day >= 0, day < days else { continue }
            perDevice[deviceName(record, user: user), default: Array(repeating: 0, count: days)][day] += record.requests
        }
        return perDevice.keys.sorted().map { name in
            let counts = perDevice[name] ?? []
            let most = max(counts.max() ?? 0, 1)
            let slot = width / days
            let bars = counts.enumerated().map { index, count -> [String: Any] in
                let barHeight = count == 0 ? 0 : max(1, count * (baseline - 4) / most)
                let day = since.addingTimeInterval(Double(index) * 86_400)
                return ["x": index * slot + 1, "y": baseline - barHeight, "w": slot - 2, "h": barHeight,
                        "day": Formatting.day(day), "count": count]
            }
            return ["name": name, "total": counts.reduce(0, +), "bars": bars, "width": width, "height": height, "baseline": baseline]
        }
    }

    /// `POST /web/privacy/tokens` (`name`, `scope`, `books`, `book`…): the secret is shown once.
    func createToken(_ context: PageContext) async throws -> WebResponse {
        let form = context.form
        let name = (form["name"] ?? "").trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty else { return try await privacyPage(context, error: "Give the app password a name.", status: 400) }
        let books: [String]? = form["books"] == "some" ? form.values("book") : nil
        if let books, books.isEmpty {
            return try await privacyPage(context, error: "Check at least one book, or allow every book.", status: 400)
        }
        let created: NewAppPassword
        do {
            created = try await store.createAppPassword(user: context.user, name: name, readOnly: form["scope"] == "read-only", books: books)
        } catch StoreError.invalid(let reason) {
            return try await privacyPage(context, error: reason.prefix(1).uppercased() + reason.dropFirst() + ".", status: 400)
        }
        var model = try await pageModel(context, title: "App password")
        var shown: [String: Any] = [
            "name": created.appPassword.name, "secret": created.secret, "user": context.user,
            "serverURL": serverURL(context.request), "davURL": davURL(context.request),
        ]
        // The device chosen decides what the page offers; without a choice, both.
        let kind = form["device"] ?? ""
        if kind != "other", let profile = deviceProfile(context.request, user: context.user, device: name, secret: created.secret) {
            let token = await profileDownloads.add(try profileResponse(profile))
            let link = absoluteBase(context.request) + "/profile/" + token
            shown["apple"] = [
                "qr": Self.qrImage(link, label: "QR code: opens the configuration profile for \(name) on an iPhone or iPad") ?? false,
                "signed": configuration.profileSigner != nil, "link": link,
            ] as [String: Any]
        }
        if kind != "apple", let link = carddavLink(context.request, user: context.user) {
            shown["other"] = [
                "qr": Self.qrImage(link, label: "QR code: opens DAVx5 with the server address and the user name \(context.user)") ?? false,
                "link": link,
            ] as [String: Any]
        }
        model["newPassword"] = shown
        return .html(renderer.render("page", model), status: 201)
    }

    /// The address devices are given: the public URL, else this request's host.
    func serverURL(_ request: WebRequest) -> String {
        if let url = configuration.publicURL { return url.absoluteString }
        let origin = OriginCheck.origin(host: request.header("host"), secure: request.isSecure) ?? "http://localhost"
        return origin + configuration.pathPrefix + "/"
    }

    /// `POST /web/privacy/mobileconfig` (`name`, `secret`): an Apple configuration profile
    /// with a CardDAV account for this app password (signed when the server has a signing
    /// certificate). Nothing is stored; the secret comes from the page that showed it.
    func mobileconfig(_ context: PageContext) throws -> WebResponse {
        let form = context.form
        guard let profile = deviceProfile(context.request, user: context.user, device: form["name"] ?? "Rolo",
                                          secret: form["secret"] ?? "") else {
            return .plain("No server address.", status: 400)
        }
        return try profileResponse(profile)
    }

    /// `POST /web/privacy/shares` (`book`, `sharee`, `access`): share, or change the access.
    func share(_ context: PageContext) async throws -> WebResponse {
        let form = context.form
        let book = form["book"] ?? "", sharee = (form["sharee"] ?? "").trimmingCharacters(in: .whitespaces)
        guard let access = ShareAccess(rawValue: form["access"] ?? "read") else { throw WebError.badRequest("Unknown access.") }
        do {
            try await store.shareBook(owner: context.user, book: book, with: sharee, access: access, accepted: false)
        } catch StoreError.invalid(let reason), StoreError.invalidName(let reason) {
            return try await privacyPage(context, error: "Not shared: " + reason + ".", status: 400)
        } catch StoreError.notFound {
            return try await privacyPage(context, error: "Not shared: you have no such book.", status: 400)
        }
        return .redirect(base + "/privacy?done=shared")
    }
}
