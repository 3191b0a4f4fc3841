import Foundation

/// The second half of the CSRF defence (the first is the token): a state-changing request
/// must come from a page of this server. `Sec-Fetch-Site`, when the browser sends it, must
/// be `same-origin`; `Origin`, when sent, must be this server's origin. A client that sends
/// neither (an old browser, a script) still needs the token.
enum OriginCheck {
    /// `expected`: the origins the UI is served from (`http://host:port` from the request's
    /// Host and scheme, and the configured public URL's).
    static func allows(fetchSite: String?, origin: String?, expected: [String]) -> Bool {
        if let fetchSite, fetchSite.lowercased() != "same-origin" { return false }
        guard let origin else { return true }
        let normalized = normalize(origin)
        return expected.contains { normalize($0) == normalized }
    }

    /// Lower-cased scheme and host, default ports dropped, no trailing slash.
    static func normalize(_ origin: String) -> String {
        var text = origin.trimmingCharacters(in: .whitespaces).lowercased()
        while text.hasSuffix("/") { text.removeLast() }
        if text.hasPrefix("http://"), text.hasSuffix(":80") { text.removeLast(3) }
        if text.hasPrefix("https://"), text.hasSuffix(":443") { text.removeLast(4) }
        return text
    }

    /// `scheme://host` of a request from its Host header.
    static func origin(host: String?, secure: Bool) -> String? {
        guard let host, !host.isEmpty, !host.contains("/"), !host.contains(" ") else { return nil }
        return (secure ? "https://" : "http://") + host
    }
}
