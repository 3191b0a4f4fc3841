import Authorization
import CardIndexing
import Contacts
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
        case ("POST", "directory"): return try await saveDirectoryEntry(context)
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
            "minimumLength": PasswordRule.minimumLength, "directory": try await directoryModel(context),
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

    /// The directory store and mode when the directory is on; nil hides "my card".
    private var directory: (store: any RoloStore & DirectoryStore, mode: DirectoryMode)? {
        guard configuration.directory != .off, let directoryStore = store as? any RoloStore & DirectoryStore else { return nil }
        return (directoryStore, configuration.directory)
    }

    /// "My card": the entry as the user set it, each box empty where they set nothing, with
    /// the account's value as its placeholder. A box prefilled with the account's value would
    /// be saved as the user's own, and an LDAP user's name and e-mail would then stop
    /// following the directory. Only the fields `directory_fields` carries (the name always),
    /// each with its "Hide"; an e-mail stored empty (how "hidden" was kept before the Hide
    /// boxes) shows as hidden.
    private func directoryModel(_ context: PageContext) async throws -> Any {
        guard let directory else { return false }
        let entry = try await directory.store.directoryEntry(user: context.user)
        let account = try await store.account(name: context.user)
        var model: [String: Any] = [
            "action": base + "/account/directory",
            "displayName": entry.displayName ?? "", "namePlaceholder": account?.displayName ?? context.user,
            "email": entry.email ?? "", "emailPlaceholder": account?.email ?? "",
            "phones": entry.phones.joined(separator: "\n"), "title": entry.title ?? "", "department": entry.department ?? "",
            "organization": entry.organization ?? "", "hidden": entry.hidden, "mountHidden": entry.mountHidden,
            "optOut": configuration.directoryOptOut, "hasPhoto": entry.photo != nil, "maxPhotoKB": DirectoryCard.maximumPhotoBytes / 1024,
        ]
        for field in DirectoryField.hideable {
            let key = Self.fieldKey(field)
            model["offer" + key] = configuration.directoryFields.contains(field)
            model["hide" + key] = entry.hiddenFields.contains(field) || (field == .email && entry.email == "")
        }
        return model
    }

    /// A field's part of the model's keys and of the form's `hide_` names (`Phone`, `hide_phone`).
    private static func fieldKey(_ field: DirectoryField) -> String { field.rawValue.prefix(1).uppercased() + field.rawValue.dropFirst() }

    /// `POST /web/account/directory` (a multipart form, for the photo): the user's own
    /// directory entry. A box left empty follows the account and LDAP; each field's "Hide" leaves it out of
    /// the card even when LDAP holds it; "leave me out" takes the card out; "hide from my
    /// devices" unmounts the directory. A photo is a JPEG or PNG of at most 256 KiB, the
    /// card's own rule. Fields `directory_fields` does not carry are not on the form and
    /// keep what they hold. With `directory_opt_out` off, "leave me out" is not offered and a
    /// post asking for it is refused. A bad value changes nothing. Their card is rebuilt at once,
    /// so the change reaches colleagues at their next sync.
    func saveDirectoryEntry(_ context: PageContext) async throws -> WebResponse {
        guard let directory else { throw WebError.notFound }
        let form = context.form
        let offered = configuration.directoryFields
        func text(_ name: String) -> String { (form[name] ?? "").trimmingCharacters(in: .whitespacesAndNewlines) }
        // Left empty, a field follows the LDAP directory (for a user from it); filled in, it is theirs.
        func optional(_ name: String) -> String? { text(name).isEmpty ? nil : text(name) }
        if !configuration.directoryOptOut, form["hidden"] != nil {
            return try await accountPage(context, error: "Leaving the directory is for an admin on this server. Nothing was changed.",
                                         status: 403)
        }
        var entry = try await directory.store.directoryEntry(user: context.user)
        entry.displayName = optional("display_name")
        if offered.contains(.email) { entry.email = optional("email") }
        if offered.contains(.phone) {
            entry.phones = text("phones").split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty }
            if let bad = entry.phones.first(where: { !DirectoryCard.isPhoneNumber($0) }) {
                return try await accountPage(context, error: "\(bad) is not a phone number. Nothing was changed.", status: 400)
            }
        }
        if offered.contains(.title) { entry.title = optional("title") }
        if offered.contains(.department) { entry.department = optional("department") }
        if offered.contains(.organisation) { entry.organization = optional("organization") }
        if offered.contains(.photo) {
            if let file = form.file("photo") {
                let bytes = [UInt8](file.data)
                guard bytes.count <= DirectoryCard.maximumPhotoBytes, DirectoryCard.photoType(bytes) != nil else {
                    return try await accountPage(context, error: "The photo must be a JPEG or PNG picture of at most "
                        + "\(DirectoryCard.maximumPhotoBytes / 1024) KB. Nothing was changed.", status: 400)
                }
                entry.photo = file.data
            } else if form["photo_remove"] == "on" {
                entry.photo = nil
            }
        }
        entry.hiddenFields = DirectoryField.hideable.filter { field in
            offered.contains(field) ? form["hide_" + field.rawValue] == "on" : entry.hiddenFields.contains(field)
        }
        // With `directory_opt_out` off, leaving is the admin's (`rolo user set --directory-hidden`): kept as it is.
        if configuration.directoryOptOut { entry.hidden = form["hidden"] == "on" }
        entry.mountHidden = form["mount_hidden"] == "on"
        try await directory.store.setDirectoryEntry(user: context.user, entry)
        // Their card alone: a rebuild of the whole directory would keep them waiting seconds.
        if let rebuild = configuration.rebuildDirectory {
            try await rebuild(context.user)
        } else {
            _ = try await DirectorySync.run(store: directory.store, mode: directory.mode, fields: offered, only: context.user)
        }
        return .redirect(base + "/account?done=directory-saved")
    }
}
