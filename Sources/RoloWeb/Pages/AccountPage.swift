import Authorization
import Foundation
import RoloStore

extension WebApp {
    /// `/web/account`: what a person changes about their own account. Every form is the
    /// account action `manageAccount`, which `Access` allows the account password alone.
    func accountRoute(_ context: PageContext, rest: [String], method: String) async throws -> WebResponse {
        try context.require(.manageAccount(of: context.user))
        switch (method, rest.joined(separator: "/")) {
        case ("GET", ""): return try await accountPage(context)
        case ("POST", "password"): return try await changePassword(context)
        default: throw WebError.notFound
        }
    }

    /// `GET /web/account`: the password form and the user's books, each with its settings.
    func accountPage(_ context: PageContext, error: String? = nil, status: Int = 200) async throws -> WebResponse {
        let books = try await books(user: context.user)
        var rows: [[String: Any]] = []
        for book in books {
            let count = try await store.cardCount(collectionID: book.id, filter: .contacts, search: [], cap: ListState.countCap)
            rows.append([
                "name": book.displayName, "slug": book.slug, "href": URLs.book(base, book.slug),
                "settingsURL": URLs.bookPage(base, book.slug, "settings"), "count": Formatting.count(count, cap: ListState.countCap),
                "sharedBy": book.sharedBy ?? false,
            ])
        }
        var model = try await pageModel(context, title: "Account")
        if var layoutUser = model["user"] as? [String: Any] {
            layoutUser["onAccount"] = true
            model["user"] = layoutUser
        }
        model["accountPage"] = [
            "error": error ?? false, "name": context.user, "books": rows,
            "minimumLength": PasswordRule.minimumLength,
        ] as [String: Any]
        return .html(renderer.render("page", model), status: status)
    }

    /// `POST /web/account/password` (`current`, `password`, `confirm`): the current password is
    /// checked through the same throttle as a sign-in. Every browser signed in as the user is
    /// signed out, and this one gets a new session, so a stolen session ends with the change.
    func changePassword(_ context: PageContext) async throws -> WebResponse {
        let form = context.form
        let password = form["password"] ?? ""
        if let problem = PasswordRule.problem(with: password) {
            return try await accountPage(context, error: problem + " Nothing was changed.", status: 400)
        }
        guard password == form["confirm"] else {
            return try await accountPage(context, error: "The two new passwords are not the same. Nothing was changed.", status: 400)
        }
        switch await checkPassword(context.user, form["current"] ?? "", context.request.remoteAddress) {
        case .valid:
            break
        case .rejected(let delay):
            if delay > .zero { try? await Task.sleep(for: delay) }
            return try await accountPage(context, error: "Your current password was wrong. Nothing was changed.", status: 403)
        case .throttled(let retryAfter):
            var response = try await accountPage(context, error: "Too many wrong passwords from your network. Try again later.",
                                                 status: 429)
            response.headers.append(("Retry-After", String(max(1, retryAfter.components.seconds))))
            return response
        case .unavailable(let retryAfter):
            var response = try await accountPage(context, error: Self.sourceUnavailableError + " Nothing was changed.",
                                                 status: 503)
            response.headers.append(("Retry-After", String(max(1, retryAfter.components.seconds))))
            return response
        }
        try await store.setPassword(user: context.user, password: password)
        try await store.deleteWebSessions(user: context.user)
        var response = WebResponse.redirect(base + "/account?done=password-changed")
        response.headers.append(("Set-Cookie", try await startSession(user: context.user, request: context.request)))
        return response
    }
}
