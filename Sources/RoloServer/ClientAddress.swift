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

    /// A client address as the login throttle and the failure log see it.
    struct Subnet: Sendable, Hashable {
        /// The address in one canonical text: IPv6 compressed and lower-cased
        /// (`2001:db8::1`), an IPv4-mapped IPv6 address as plain IPv4. Text that is no IP
        /// address (`unknown`) is kept as it came.
        var address: String
        /// What failures are counted under: the IPv4 address (/32), or the IPv6 /56 prefix
        /// (`2001:db8:0:ab00::/56`), one customer's allocation at most ISPs, so rotating
        /// through the addresses of one's own prefix does not reset the count.
        var key: String
        /// Whether `address` parsed as an IPv4 or IPv6 address.
        var isIP: Bool
    }

    /// `text` parsed (brackets and an IPv6 zone `%eth0` dropped) into its throttle subnet.
    static func subnet(of text: String) -> Subnet {
        guard var bytes = bytes(of: text) else { return Subnet(address: text, key: text, isIP: false) }
        if bytes.count == 4 {
            let dotted = Self.dotted(bytes[0], bytes[1], bytes[2], bytes[3])
            return Subnet(address: dotted, key: dotted, isIP: true)
        }
        let address = Self.ipv6Text(bytes)
        for index in 7..<16 { bytes[index] = 0 }
        return Subnet(address: address, key: Self.ipv6Text(bytes) + "/56", isIP: true)
    }

    /// What the access history keeps of a client's address: IPv4 /24, IPv6 /48, enough to
    /// tell home from office and not a person; empty for text that is no address.
    static func historyPrefix(of text: String) -> String {
        guard var bytes = bytes(of: text) else { return "" }
        if bytes.count == 4 { return Self.dotted(bytes[0], bytes[1], bytes[2], 0) + "/24" }
        for index in 6..<16 { bytes[index] = 0 }
        return Self.ipv6Text(bytes) + "/48"
    }

    /// The address's bytes: 4 for IPv4 (an IPv4-mapped IPv6 address included), 16 for IPv6,
    /// nil for anything else; brackets and an IPv6 zone are dropped first.
    private static func bytes(of text: String) -> [UInt8]? {
        var trimmed = Substring(text.trimmingCharacters(in: .whitespaces))
        if trimmed.first == "[", let close = trimmed.firstIndex(of: "]") {
            trimmed = trimmed[trimmed.index(after: trimmed.startIndex)..<close]
        }
        if let zone = trimmed.firstIndex(of: "%") { trimmed = trimmed[..<zone] }
        let candidate = String(trimmed)
        var v4 = in_addr()
        if inet_pton(AF_INET, candidate, &v4) == 1 { return withUnsafeBytes(of: &v4) { [UInt8]($0) } }
        var v6 = in6_addr()
        guard candidate.contains(":"), inet_pton(AF_INET6, candidate, &v6) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: &v6) { [UInt8]($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xff, bytes[11] == 0xff { return Array(bytes[12...]) }
        return bytes
    }

    private static func dotted(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8) -> String {
        "\(a).\(b).\(c).\(d)"
    }

    /// RFC 5952 text of 16 address bytes (`inet_ntop`).
    private static func ipv6Text(_ bytes: [UInt8]) -> String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let written = bytes.withUnsafeBytes { raw in
            inet_ntop(AF_INET6, raw.baseAddress, &buffer, socklen_t(buffer.count))
        }
        guard written != nil else { return bytes.map { String($0, radix: 16) }.joined(separator: ".") }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
