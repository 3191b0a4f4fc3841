import Foundation

/// The cookies of the web UI: the session (`__Host-rolo_session` behind TLS, `rolo_session`
/// on plain http), the sign-in form's nonce and the last book listed. All HttpOnly and SameSite=Lax, Secure
/// behind TLS; Path=/ (the `__Host-` prefix wants it, and no Domain).
enum Cookies {
    static let secureSessionName = "__Host-rolo_session"
    static let plainSessionName = "rolo_session"
    static let secureLoginName = "__Host-rolo_login"
    static let plainLoginName = "rolo_login"

    /// The book this browser last listed (its slug, percent-encoded): where `/web/` lands
    /// next time. Only a preference: a slug the user cannot see is ignored.
    static let secureLastBookName = "__Host-rolo_book"
    static let plainLastBookName = "rolo_book"

    static func sessionName(secure: Bool) -> String { secure ? secureSessionName : plainSessionName }
    static func lastBookName(secure: Bool) -> String { secure ? secureLastBookName : plainLastBookName }
    static func loginName(secure: Bool) -> String { secure ? secureLoginName : plainLoginName }

    /// The `Cookie` header's pairs (first value of a repeated name wins, as browsers send
    /// the most specific first).
    static func parse(_ header: String?) -> [String: String] {
        var cookies: [String: String] = [:]
        for pair in (header ?? "").split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let name = parts[0].trimmingCharacters(in: .whitespaces)
            var value = parts[1].trimmingCharacters(in: .whitespaces)
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
            if cookies[name] == nil { cookies[name] = value }
        }
        return cookies
    }

    /// A `Set-Cookie` value. `maxAge` nil: a session cookie; 0: delete it.
    static func setCookie(name: String, value: String, secure: Bool, maxAge: Int?) -> String {
        var text = "\(name)=\(value); Path=/; HttpOnly; SameSite=Lax"
        if secure { text += "; Secure" }
        if let maxAge { text += "; Max-Age=\(maxAge)" }
        return text
    }
}
