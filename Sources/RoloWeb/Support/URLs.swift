import Foundation

/// The web UI's URLs, percent-encoded: every link and redirect is built here.
enum URLs {
    /// Characters kept as they are in a path segment or query value.
    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    static func segment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    static func queryEscape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    static func query(_ parameters: [(String, String)]) -> String {
        let pairs = parameters.filter { !$0.1.isEmpty }
        guard !pairs.isEmpty else { return "" }
        return "?" + pairs.map { queryEscape($0.0) + "=" + queryEscape($0.1) }.joined(separator: "&")
    }

    static func book(_ base: String, _ slug: String, query parameters: [(String, String)] = []) -> String {
        base + "/b/" + segment(slug) + "/" + query(parameters)
    }

    static func bookPage(_ base: String, _ slug: String, _ page: String, query parameters: [(String, String)] = []) -> String {
        base + "/b/" + segment(slug) + "/" + page + query(parameters)
    }

    static func card(_ base: String, _ slug: String, _ name: String, _ action: String? = nil,
                     query parameters: [(String, String)] = []) -> String {
        base + "/b/" + segment(slug) + "/c/" + segment(name) + (action.map { "/" + $0 } ?? "") + query(parameters)
    }
}
