import CardIndexing
import Foundation
import RoloSQLite
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
    /// This browser made the store (and closes it); a second browser shares it.
    let ownsStore: Bool

    init(store: SQLiteStore, app: WebApp) async throws {
        self.store = store
        self.app = app
        folder = FileManager.default.temporaryDirectory
        ownsStore = false
    }

    init(configuration: WebConfiguration = WebConfiguration()) async throws {
        ownsStore = true
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-web-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        store = try SQLiteStore(path: folder.appendingPathComponent("rolo.sqlite").path, bcryptCost: 4)
        for (name, password) in [("alice", "alice-secret"), ("bob", "bob-secret")] {
            try await store.createUser(name: name, password: password)
        }
        let store = self.store
        app = try WebApp(store: store, configuration: configuration) { user, password, _ in
            (try? await store.verifyPassword(user: user, password: password)) == true ? .valid : .rejected(delay: .zero)
        }
    }

    deinit {
        guard ownsStore else { return }
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

extension WebHarness {
    /// A `multipart/form-data` POST (the editor and the import send these).
    @discardableResult
    func postMultipart(_ path: String, _ fields: [(String, String)], files: [(name: String, filename: String, type: String, data: Data)] = [],
                       headers: [String: String] = [:]) async -> WebResponse {
        let boundary = "----rolo\(UUID().uuidString)"
        var body = Data()
        for (name, value) in fields + [("csrf", csrf)] {
            body.append(Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n".utf8))
        }
        for file in files {
            body.append(Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(file.name)\"; filename=\"\(file.filename)\"\r\nContent-Type: \(file.type)\r\n\r\n".utf8))
            body.append(file.data)
            body.append(Data("\r\n".utf8))
        }
        body.append(Data("--\(boundary)--\r\n".utf8))
        var all = headers
        all["content-type"] = "multipart/form-data; boundary=\(boundary)"
        return await send("POST", path, headers: all, body: body)
    }

    /// The fields the page's form `id` would submit (see `PageForm`).
    func form(_ html: String, id: String) throws -> PageForm {
        try #require(PageForm(in: html, id: id), "no form \(id)")
    }
}

/// The fields a browser would submit from a form of the page (markup as the web UI writes it).
struct PageForm {
    var action: String
    var fields: [(String, String)]

    init?(in html: String, id: String) {
        guard let idRange = html.range(of: " id=\"\(id)\""),
              let formStart = html[..<idRange.lowerBound].range(of: "<form", options: .backwards),
              let formEnd = html[idRange.upperBound...].range(of: "</form>") else { return nil }
        let form = String(html[formStart.lowerBound..<formEnd.lowerBound])
        let openTag = String(form[..<(form.firstIndex(of: ">") ?? form.endIndex)])
        action = Self.attribute("action", in: openTag).map(Self.unescape) ?? ""
        fields = []
        let regex = try! NSRegularExpression(pattern: #"<(input|select|textarea)\b([^>]*)>"#)
        let text = form as NSString
        for match in regex.matches(in: form, range: NSRange(location: 0, length: text.length)) {
            let tag = text.substring(with: match.range(at: 1)), attributes = text.substring(with: match.range(at: 2))
            guard let name = Self.attribute("name", in: attributes).map(Self.unescape) else { continue }
            let after = text.substring(from: match.range.location + match.range.length)
            switch tag {
            case "input":
                let type = Self.attribute("type", in: attributes) ?? "text"
                if type == "file" { continue }
                if (type == "checkbox" || type == "radio") && !attributes.contains(" checked") { continue }
                fields.append((name, Self.attribute("value", in: attributes).map(Self.unescape) ?? ""))
            case "select":
                let body = String(after[..<(after.range(of: "</select>")?.lowerBound ?? after.endIndex)])
                let options = body.components(separatedBy: "<option").dropFirst()
                let chosen = options.first { $0.contains(" selected") } ?? options.first
                fields.append((name, chosen.flatMap { Self.attribute("value", in: $0) }.map(Self.unescape) ?? ""))
            default:
                fields.append((name, Self.unescape(String(after[..<(after.range(of: "</textarea>")?.lowerBound ?? after.endIndex)]))))
            }
        }
    }

    static func attribute(_ name: String, in tag: String) -> String? {
        guard let range = tag.range(of: " \(name)=\"") else { return nil }
        let rest = tag[range.upperBound...]
        return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
    }

    static func unescape(_ text: String) -> String {
        text.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&amp;", with: "&")
    }

    func values(_ name: String) -> [String] { fields.filter { $0.0 == name }.map(\.1) }

    mutating func set(_ name: String, at index: Int = 0, to value: String) {
        var seen = 0
        for position in fields.indices where fields[position].0 == name {
            if seen == index { fields[position].1 = value; return }
            seen += 1
        }
        fields.append((name, value))
    }

    mutating func remove(_ name: String) { fields.removeAll { $0.0 == name } }

    /// Without the csrf field: the harness adds the session's.
    var submitted: [(String, String)] { fields.filter { $0.0 != "csrf" } }
}
