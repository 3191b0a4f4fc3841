import Foundation

/// The web UI's answer: status, header fields, and a body either whole or written in
/// chunks (an export of a whole book).
public struct WebResponse: Sendable {
    public enum Body: Sendable {
        case bytes(Data)
        /// Chunks pulled one at a time (nil: the end); the server asks for the next once it
        /// has sent the last, so a slow client holds up the reading, not memory.
        case stream(@Sendable () async throws -> Data?)
    }

    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: Body
    /// What a book page did to its book, for the server's access history.
    public var access: WebAccess?

    public init(status: Int, headers: [(name: String, value: String)] = [], body: Body = .bytes(Data())) {
        self.status = status; self.headers = headers; self.body = body
    }

    public func header(_ name: String) -> String? {
        headers.last { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// Every value of a header field (several `Set-Cookie`).
    public func headerValues(_ name: String) -> [String] {
        headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
    }

    public mutating func setHeader(_ name: String, _ value: String) {
        headers.removeAll { $0.name.lowercased() == name.lowercased() }
        headers.append((name, value))
    }

    /// The whole body as bytes (empty for a stream).
    public var data: Data {
        if case .bytes(let data) = body { return data }
        return Data()
    }

    public var text: String { String(decoding: data, as: UTF8.self) }

    static func html(_ html: String, status: Int = 200) -> WebResponse {
        WebResponse(status: status, headers: [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store")],
                    body: .bytes(Data(html.utf8)))
    }

    static func plain(_ text: String, status: Int) -> WebResponse {
        WebResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8"), ("Cache-Control", "no-store")],
                    body: .bytes(Data(text.utf8)))
    }

    /// 303 See Other: after a POST, the browser GETs `location` (no form resubmission).
    static func redirect(_ location: String, status: Int = 303) -> WebResponse {
        WebResponse(status: status, headers: [("Location", location), ("Cache-Control", "no-store")])
    }
}
