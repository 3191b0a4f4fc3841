import Foundation

/// Who sent a request: the TCP peer, unless that peer is a trusted reverse proxy, in which
/// case its `X-Forwarded-For` names the client. Only trusted peers are believed, or anyone
/// could dodge the login throttle (and forge the access log) by inventing the header.
enum ClientAddress {
    static func resolve(peer: String, forwardedFor: String?, trustedProxies: Set<String>) -> String {
        guard trustedProxies.contains(peer), let forwardedFor else { return peer }
        let hops = forwardedFor.split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
        // Right to left: each trusted proxy appended the address it saw; the first hop that
        // is not one of ours is the client (anything left of it the client could have made up).
        for hop in hops.reversed() where !trustedProxies.contains(hop) { return hop }
        return hops.first ?? peer
    }
}
