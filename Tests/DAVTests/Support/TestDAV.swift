import DAV
import DAVXML
import Foundation
import RoloStore
import Testing

/// A DAV engine over a fresh in-memory store with users `alice` and `bob`, and helpers to
/// send requests and read their multistatus answers.
struct TestDAV {
    let store: InMemoryStore
    let service: DAVService

    init(configuration: DAVConfiguration = DAVConfiguration()) async throws {
        store = InMemoryStore()
        try await store.createUser(name: "alice", password: "a")
        try await store.createUser(name: "bob", password: "b")
        service = DAVService(store: store, configuration: configuration)
    }

    /// Sends a request; a streamed body is collected into `body` (a failure to produce it
    /// is recorded as an issue), so assertions read every answer the same way.
    @discardableResult
    func send(_ method: String, _ path: String, headers: [String: String] = [:], body: String = "",
              user: String = "alice") async -> DAVResponse {
        let response = await sendUncollected(method, path, headers: headers, body: body, user: user)
        do {
            return try await response.collected()
        } catch {
            Issue.record("The streamed body failed: \(error)")
            return response
        }
    }

    /// Sends a request and returns the answer as the engine gives it, streamed or whole.
    func sendUncollected(_ method: String, _ path: String, headers: [String: String] = [:], body: String = "",
                         user: String = "alice") async -> DAVResponse {
        await service.handle(DAVRequest(method: method, path: path, headers: headers, body: Data(body.utf8), user: user))
    }

    func propfind(_ path: String, depth: String = "0", props: [String], user: String = "alice") async -> DAVResponse {
        await send("PROPFIND", path, headers: ["depth": depth], body: Fixtures.propfind(props), user: user)
    }

    /// PUTs a card `<name>.vcf` with this UID and FN into alice's default book.
    @discardableResult
    func putCard(uid: String, fn: String, name: String? = nil, book: String = "default", extra: String = "",
                 version: String = "3.0", headers: [String: String] = ["content-type": "text/vcard"]) async -> DAVResponse {
        await send("PUT", "/dav/addressbooks/alice/\(book)/\(name ?? uid).vcf", headers: headers,
                   body: Fixtures.card(uid: uid, fn: fn, extra: extra, version: version))
    }
}

enum Fixtures {
    static func card(uid: String, fn: String, extra: String = "", version: String = "3.0") -> String {
        var lines = ["BEGIN:VCARD", "VERSION:\(version)", "UID:\(uid)", "FN:\(fn)"]
        if version == "3.0" { lines.append("N:\(fn);;;;") }
        if !extra.isEmpty { lines += extra.split(separator: "\n").map(String.init) }
        lines.append("END:VCARD")
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// `<D:propfind>` asking for Clark-named properties (`{DAV:}getetag`).
    static func propfind(_ props: [String]) -> String {
        "<?xml version=\"1.0\"?><D:propfind xmlns:D=\"DAV:\"><D:prop>" + props.map(element).joined() + "</D:prop></D:propfind>"
    }

    /// `{ns}name` -> `<name xmlns="ns"/>`.
    static func element(_ clark: String) -> String {
        let close = clark.firstIndex(of: "}")!
        let namespace = clark[clark.index(after: clark.startIndex)..<close]
        return "<\(clark[clark.index(after: close)...]) xmlns=\"\(namespace)\"/>"
    }
}

/// One `DAV:response` of a multistatus, flattened for assertions.
struct ResponseView {
    var href: String
    var status: Int?
    /// Clark name -> (status, element).
    var properties: [String: (status: Int, element: XMLElement)]
    var error: XMLElement?

    func status(of clark: String) -> Int? { properties[clark]?.status }
    func value(of clark: String) -> XMLElement? { properties[clark].flatMap { $0.status == 200 ? $0.element : nil } }
}

extension DAVResponse {
    var text: String { String(decoding: body, as: UTF8.self) }

    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    func xml() throws -> XMLElement { try XMLDocumentParser.parse([UInt8](body)) }

    /// The responses of a 207 body keyed by href.
    func multistatus() throws -> [String: ResponseView] {
        var result: [String: ResponseView] = [:]
        for response in try xml().children("DAV:", "response") {
            let href = response.child("DAV:", "href")?.text ?? ""
            var view = ResponseView(href: href, status: statusCode(response.child("DAV:", "status")?.text),
                                    properties: [:], error: response.child("DAV:", "error"))
            for propstat in response.children("DAV:", "propstat") {
                let status = statusCode(propstat.child("DAV:", "status")?.text) ?? 0
                for property in propstat.child("DAV:", "prop")?.children ?? [] {
                    view.properties[property.clarkName] = (status, property)
                }
            }
            result[href] = view
        }
        return result
    }

    /// The precondition elements of a `DAV:error` body, as Clark names.
    func errorConditions() throws -> [String] {
        try xml().children.map(\.clarkName)
    }
}

private func statusCode(_ line: String?) -> Int? {
    guard let line else { return nil }
    return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
}

extension XMLElement {
    /// Texts of the `DAV:href` children.
    var hrefs: [String] { children("DAV:", "href").map(\.text) }
    var childNames: Set<String> { Set(children.map(\.clarkName)) }
}
