import Authorization
import Foundation
import RoloStore

/// `/web/feeds` (issue 33): the user's feeds at secret URLs, a birthday calendar or a desk
/// phone's phone book, listed, added and revoked as `rolo feed` does. A feed's URL is a
/// credential of a kind (whoever has it reads the books), so the page takes the same account
/// action as app passwords, and shows a new URL once.
extension WebApp {
    func feedsRoute(_ context: PageContext, rest: [String], method: String) async throws -> WebResponse {
        try context.require(.manageAppPasswords(of: context.user))
        guard let feeds = store as? any FeedStore else { throw WebError.notFound }
        switch (method, rest.joined(separator: "/")) {
        case ("GET", ""):
            return try await feedsPage(context, feeds)
        case ("POST", ""):
            return try await createFeed(context, feeds)
        case ("POST", "revoke"):
            guard let id = Int64(context.form["id"] ?? "") else { throw WebError.badRequest("Which feed?") }
            do {
                try await feeds.revokeFeed(user: context.user, id: id)
            } catch StoreError.notFound {
                throw WebError.notFound
            }
            return .redirect(base + "/feeds?done=feed-revoked")
        default:
            throw WebError.notFound
        }
    }

    static let feedKinds: [(kind: FeedKind, label: String)] = [
        (.birthdays, "Birthday calendar (iCalendar: calendar apps subscribe to it)"),
        (.yealink, "Yealink phone book (XML)"),
        (.fritzbox, "FRITZ!Box phone book (XML)"),
        (.snom, "Snom phone book (XML)"),
    ]

    /// `GET /web/feeds`: the feeds (never their URLs: only a hash is kept) and the form.
    func feedsPage(_ context: PageContext, _ feeds: any FeedStore, error: String? = nil, status: Int = 200) async throws -> WebResponse {
        let list = try await feeds.feeds(user: context.user)
        // Only books the user can read are offered; the store refuses any other name too.
        let books = try await books(user: context.user)
        var model = try await pageModel(context, title: "Feeds")
        if var layoutUser = model["user"] as? [String: Any] {
            layoutUser["onFeeds"] = true
            model["user"] = layoutUser
        }
        model["feedsPage"] = [
            "error": error ?? false,
            "hasFeeds": !list.isEmpty,
            "feeds": list.map { feed -> [String: Any] in
                [
                    "id": String(feed.id), "kind": Self.feedKinds.first { $0.kind == feed.kind }?.label ?? feed.kind.rawValue,
                    "books": feed.bookIDs.isEmpty ? "All books" : (feed.bookNames.isEmpty ? "No books left" : feed.bookNames.joined(separator: ", ")),
                    "created": Formatting.day(feed.created), "createdISO": Formatting.iso(feed.created),
                    "lastRead": feed.lastRead.map(Formatting.time) ?? "Never",
                ]
            },
            "kinds": Self.feedKinds.enumerated().map { index, entry in
                ["value": entry.kind.rawValue, "label": entry.label, "checked": index == 0] as [String: Any]
            },
            "books": books.map { ["slug": $0.slug, "name": $0.displayName + ($0.sharedBy.map { " (shared by \($0))" } ?? "")] },
        ] as [String: Any]
        return .html(renderer.render("page", model), status: status)
    }

    /// `POST /web/feeds` (`kind`, `books`, `book`…): the URL is shown once.
    func createFeed(_ context: PageContext, _ feeds: any FeedStore) async throws -> WebResponse {
        let form = context.form
        guard let kind = FeedKind(rawValue: form["kind"] ?? "") else {
            return try await feedsPage(context, feeds, error: "Choose what the feed serves.", status: 400)
        }
        let books: [String] = form["books"] == "some" ? form.values("book") : []
        if form["books"] == "some" && books.isEmpty {
            return try await feedsPage(context, feeds, error: "Check at least one book, or choose every book.", status: 400)
        }
        let created: NewFeed
        do {
            created = try await feeds.createFeed(user: context.user, kind: kind, books: books)
        } catch StoreError.invalid(let reason) {
            return try await feedsPage(context, feeds, error: "Not created: " + reason + ".", status: 400)
        }
        let url = feedURL(context.request, secret: created.secret)
        var shown: [String: Any] = ["url": url, "kind": Self.feedKinds.first { $0.kind == kind }?.label ?? kind.rawValue]
        // Calendar apps subscribe to webcal: links; a phone's camera opens them too.
        let webcal = kind == .birthdays ? Self.webcal(url) : nil
        shown["webcal"] = webcal ?? false
        shown["qr"] = Self.qrImage(webcal ?? url, label: kind == .birthdays
            ? "QR code: subscribes a phone's calendar to the birthday calendar" : "QR code: the phone book's URL") ?? false
        var model = try await pageModel(context, title: "Feed")
        model["newFeed"] = shown
        return .html(renderer.render("page", model), status: 201)
    }

    /// `<public URL>/feeds/<secret>`, else this request's origin and the proxy prefix.
    func feedURL(_ request: WebRequest, secret: String) -> String {
        if let url = configuration.publicURL {
            var text = url.absoluteString
            while text.hasSuffix("/") { text.removeLast() }
            return text + "/feeds/" + secret
        }
        return absoluteBase(request).dropLast(base.count) + configuration.pathPrefix + "/feeds/" + secret
    }

    /// The same URL with the `webcal` scheme (RFC-less but universal for calendar subscriptions).
    static func webcal(_ url: String) -> String? {
        guard let colon = url.firstIndex(of: ":") else { return nil }
        return "webcal" + url[colon...]
    }
}
