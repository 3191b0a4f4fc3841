import CardIndexing
import Foundation
import RoloStore
import Testing
import VCard
@testable import RoloWeb

/// The web UI over a temporary SQLite store, driven by `WebRequest`s (no socket): a
/// browser's cookie jar and the session's CSRF token, kept between requests.
final class WebHarness: @unchecked Sendable {
    let store: SQLiteStore
    let app: WebApp
    let folder: URL
    var cookies: [String: String] = [:]
    var csrf = ""

    init() async throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-web-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        store = try SQLiteStore(path: folder.appendingPathComponent("rolo.sqlite").path, bcryptCost: 4)
        for (name, password) in [("alice", "alice-secret"), ("bob", "bob-secret")] {
            try await store.createUser(name: name, password: password)
        }
        let store = self.store
        app = try WebApp(store: store) { user, password, _ in
            (try? await store.verifyPassword(user: user, password: password)) == true ? .valid : .rejected(delay: .zero)
        }
    }

    deinit {
        try? store.close()
        try? FileManager.default.removeItem(at: folder)
    }

    @discardableResult
    func get(_ path: String, headers: [String: String] = [:]) async -> WebResponse {
        await send("GET", path, headers: headers)
    }

    /// A form POST with the session's CSRF token unless `csrf` says otherwise.
    @discardableResult
    func post(_ path: String, _ fields: [(String, String)], csrf token: String? = nil, headers: [String: String] = [:]) async -> WebResponse {
        var all = fields
        all.append(("csrf", token ?? csrf))
        let body = all.map { FormDataTestEncoding.escape($0.0) + "=" + FormDataTestEncoding.escape($0.1) }.joined(separator: "&")
        var headers = headers
        headers["content-type"] = "application/x-www-form-urlencoded"
        return await send("POST", path, headers: headers, body: Data(body.utf8))
    }

    func send(_ method: String, _ target: String, headers: [String: String] = [:], body: Data = Data()) async -> WebResponse {
        let parts = target.split(separator: "?", maxSplits: 1).map(String.init)
        var all = ["host": "127.0.0.1:8800"]
        if !cookies.isEmpty { all["cookie"] = cookies.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: "; ") }
        for (name, value) in headers { all[name.lowercased()] = value }
        let request = WebRequest(method: method, path: FormData.decodeComponent(Substring(parts[0])),
                                 query: parts.count > 1 ? WebRequest.parseQuery(parts[1]) : [], headers: all, body: body,
                                 remoteAddress: "127.0.0.1", isSecure: false)
        let response = await app.handle(request)
        for value in response.headerValues("Set-Cookie") {
            let pair = value.split(separator: ";")[0].split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2 else { continue }
            if value.contains("Max-Age=0") { cookies[pair[0]] = nil } else { cookies[pair[0]] = pair[1] }
        }
        if let token = Self.csrfToken(in: response.text) { csrf = token }
        return response
    }

    static func csrfToken(in html: String) -> String? {
        guard let range = html.range(of: #"name="csrf" value=""#) else { return nil }
        let rest = html[range.upperBound...]
        return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
    }

    func signIn(_ user: String = "alice", _ password: String? = nil) async throws {
        await get("/web/login")
        let response = await post("/web/login", [("user", user), ("password", password ?? user + "-secret")])
        #expect(response.status == 303, "sign-in: \(response.status) \(response.text.prefix(300))")
        await get("/web/b/default/")
    }

    /// Stores a card in the user's book `default` the way a PUT would.
    @discardableResult
    func put(_ text: String, name: String, user: String = "alice", book: String = "default") async throws -> String {
        let collection = try #require(try await store.collection(owner: user, path: [book]))
        let card = try VCardParser.parse(text)[0]
        return try await store.putResource(collectionID: collection.id, name: name, data: Data(text.utf8),
                                           contentType: "text/vcard; charset=utf-8", card: CardMetadata(card: card),
                                           precondition: .none).etag
    }

    func stored(_ name: String, user: String = "alice", book: String = "default") async throws -> StoredResource? {
        let collection = try #require(try await store.collection(owner: user, path: [book]))
        return try await store.resource(collectionID: collection.id, name: name)
    }
}

enum FormDataTestEncoding {
    static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")) ?? ""
    }
}
