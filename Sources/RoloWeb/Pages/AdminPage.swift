import Foundation
import RoloStore

extension WebApp {
    func adminRoute(_ context: PageContext, rest: [String], method: String) async throws -> WebResponse {
        try context.require(method == "GET" ? .seeAdminPages : .manageUsers)
        switch (method, rest.first, rest.count) {
        case ("GET", nil, _): return try await adminPage(context)
        case ("POST", "users", 1): return try await createUser(context)
        case ("GET", "users", 2): return try await adminUserPage(context, name: rest[1])
        case ("POST", "users", 3): return try await adminUserAction(context, name: rest[1], action: rest[2])
        default: throw WebError.notFound
        }
    }

    func adminModel(_ context: PageContext, title: String) async throws -> [String: Any] {
        var model = try await pageModel(context, title: title)
        if var layoutUser = model["user"] as? [String: Any] {
            layoutUser["onAdmin"] = true
            model["user"] = layoutUser
        }
        return model
    }

    /// `GET /web/admin`: health and users.
    func adminPage(_ context: PageContext, error: String? = nil, status: Int = 200) async throws -> WebResponse {
        let statistics = try await store.statistics()
        var users: [[String: Any]] = []
        for name in try await store.listUsers().sorted() {
            let account = try await store.account(name: name)
            let books = try await store.childCollections(owner: name, parentPath: []).filter { $0.kind == .addressBook }
            users.append([
                "name": name, "href": base + "/admin/users/" + URLs.segment(name),
                "role": account?.admin == true ? "Administrator" : "User",
                "state": account?.disabled == true ? "Disabled" : (account?.appPasswordsOnly == true ? "App passwords only" : "Active"),
                "books": books.count, "size": Formatting.bytes(try await store.usedBytes(owner: name)),
            ])
        }
        var model = try await adminModel(context, title: "Admin")
        model["adminPage"] = [
            "error": error ?? false,
            "health": [
                "version": configuration.version, "databaseSize": statistics.databaseBytes.map(Formatting.bytes) ?? "unknown",
                "users": Formatting.grouped(statistics.users), "books": Formatting.grouped(statistics.addressBooks),
                "cards": Formatting.grouped(statistics.cards),
            ] as [String: Any],
            "users": users,
        ] as [String: Any]
        return .html(renderer.render("page", model), status: status)
    }

    func createUser(_ context: PageContext) async throws -> WebResponse {
        let form = context.form
        let name = (form["user"] ?? "").trimmingCharacters(in: .whitespaces)
        let password = form["password"] ?? ""
        guard !name.isEmpty else { return try await adminPage(context, error: "Give a user name.", status: 400) }
        if let problem = PasswordRule.problem(with: password) { return try await adminPage(context, error: problem, status: 400) }
        do {
            try await store.createUser(name: name, password: password)
        } catch StoreError.userExists {
            return try await adminPage(context, error: "There is already a user \(name).", status: 400)
        } catch StoreError.invalidName(let reason), StoreError.invalid(let reason) {
            return try await adminPage(context, error: "Not created: \(reason).", status: 400)
        }
        if form["admin"] == "1" { try await store.updateAccount(name: name, UserAccountUpdate(admin: true)) }
        return .redirect(base + "/admin?done=user-created")
    }

    /// `GET /web/admin/users/{name}`: books and sizes; reset, disable, delete.
    func adminUserPage(_ context: PageContext, name: String, error: String? = nil, status: Int = 200) async throws -> WebResponse {
        guard let account = try await store.account(name: name) else { throw WebError.notFound }
        let books = try await store.childCollections(owner: name, parentPath: []).filter { $0.kind == .addressBook }
        var bookRows: [[String: Any]] = []
        for book in books {
            let count = try await store.cardCount(collectionID: book.id, filter: .contacts, search: [], cap: 1_000_000)
            bookRows.append(["name": book.displayName ?? book.path.last ?? "", "cards": Formatting.grouped(count)])
        }
        var model = try await adminModel(context, title: "User " + name)
        model["adminUser"] = [
            "name": name, "error": error ?? false, "books": bookRows, "size": Formatting.bytes(try await store.usedBytes(owner: name)),
            "userURL": base + "/admin/users/" + URLs.segment(name), "disabled": account.disabled, "isSelf": name == context.user,
        ] as [String: Any]
        return .html(renderer.render("page", model), status: status)
    }

    func adminUserAction(_ context: PageContext, name: String, action: String) async throws -> WebResponse {
        guard try await store.account(name: name) != nil else { throw WebError.notFound }
        let form = context.form
        switch action {
        case "password":
            let password = form["password"] ?? ""
            if let problem = PasswordRule.problem(with: password) {
                return try await adminUserPage(context, name: name, error: problem, status: 400)
            }
            try await store.setPassword(user: name, password: password)
            try await store.deleteWebSessions(user: name)
            return .redirect(base + "/admin/users/" + URLs.segment(name) + "?done=password-set")
        case "disable", "enable":
            guard name != context.user else {
                return try await adminUserPage(context, name: name, error: "You cannot disable yourself.", status: 400)
            }
            try await store.updateAccount(name: name, UserAccountUpdate(disabled: action == "disable"))
            if action == "disable" { try await store.deleteWebSessions(user: name) }
            return .redirect(base + "/admin/users/" + URLs.segment(name) + "?done=" + (action == "disable" ? "disabled" : "enabled"))
        case "delete":
            guard name != context.user else {
                return try await adminUserPage(context, name: name, error: "You cannot delete yourself.", status: 400)
            }
            guard form["confirm"] == name else {
                return try await adminUserPage(context, name: name, error: "Type the user name exactly to confirm.", status: 400)
            }
            // The admin's own password again, through the same throttle as every sign-in.
            switch await checkPassword(context.user, form["password"] ?? "", context.request.remoteAddress) {
            case .valid: break
            case .rejected(let delay):
                if delay > .zero { try? await Task.sleep(for: delay) }
                return try await adminUserPage(context, name: name, error: "Your password was wrong; nothing was deleted.", status: 403)
            case .throttled:
                return try await adminUserPage(context, name: name, error: "Too many failed passwords; try later.", status: 429)
            case .unavailable:
                return try await adminUserPage(context, name: name, error: Self.sourceUnavailableError + " Nothing was deleted.",
                                               status: 503)
            }
            try await store.deleteWebSessions(user: name)
            try await store.deleteUser(name: name)
            return .redirect(base + "/admin?done=user-deleted")
        default:
            throw WebError.notFound
        }
    }
}
