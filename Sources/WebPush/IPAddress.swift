import Foundation

/// An IPv4 or IPv6 address as bytes, classified for the push-target check: may the server
/// connect there on a client's say-so?
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// 4 bytes for IPv4, 16 for IPv6, network order.
    public let bytes: [UInt8]

    /// Nil unless there are 4 or 16 bytes.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// Dotted-decimal IPv4 or RFC 4291 IPv6 text, without brackets or zone; nil for
    /// anything else (`inet_pton`, which unlike `inet_aton` takes no `127.1` or hex).
    public init?(_ text: String) {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { [UInt8]($0) }
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        bytes = withUnsafeBytes(of: &v6) { [UInt8]($0) }
    }

    public var isIPv4: Bool { bytes.count == 4 }

    /// 127.0.0.0/8, `::1`, or an IPv4-mapped loopback address.
    public var isLoopback: Bool {
        if isIPv4 { return bytes[0] == 127 }
        if let mapped = ipv4Mapped { return mapped.isLoopback }
        return bytes == [UInt8](repeating: 0, count: 15) + [1]
    }

    /// Whether the address is reachable on the public internet: false for loopback,
    /// private, shared (CGNAT), link-local, unique-local, documentation, benchmarking,
    /// multicast, broadcast, reserved and unspecified ranges (the IANA special-purpose
    /// registries). An IPv6 address that carries an IPv4 one (mapped `::ffff:0:0/96`,
    /// NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) is judged by that IPv4 address.
    public var isPublic: Bool {
        if isIPv4 { return Self.isPublicIPv4(bytes) }
        if let embedded = ipv4Mapped ?? ipv4NAT64 ?? ipv4SixToFour { return embedded.isPublic }
        // Outside 2000::/3 nothing is global unicast: ::/8 (unspecified, loopback,
        // IPv4-compatible), 100::/64, fc00::/7, fe80::/10, fec0::/10, ff00::/8 …
        guard bytes[0] & 0xE0 == 0x20 else { return false }
        // 2001::/23 (IETF protocol assignments: Teredo, ORCHID, benchmarking…).
        if bytes[0] == 0x20, bytes[1] == 0x01, bytes[2] & 0xFE == 0x00 { return false }
        // 2001:db8::/32 and 3fff::/20 (documentation).
        if bytes[0...3] == [0x20, 0x01, 0x0D, 0xB8] { return false }
        if bytes[0] == 0x3F, bytes[1] == 0xFF, bytes[2] & 0xF0 == 0x00 { return false }
        return true
    }

    public var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let family = isIPv4 ? AF_INET : AF_INET6
        let written = bytes.withUnsafeBytes { raw in
            inet_ntop(family, raw.baseAddress, &buffer, socklen_t(buffer.count))
        }
        guard written != nil else { return bytes.map { String($0) }.joined(separator: ".") }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `::ffff:a.b.c.d`: a dual-stack socket connects to a.b.c.d.
    private var ipv4Mapped: IPAddress? {
        guard !isIPv4, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF else { return nil }
        return IPAddress(bytes: Array(bytes[12...]))
    }

    /// `64:ff9b::a.b.c.d` (RFC 6052): a NAT64 gateway connects to a.b.c.d.
    private var ipv4NAT64: IPAddress? {
        guard !isIPv4, bytes[0..<12] == [0x00, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0] else { return nil }
        return IPAddress(bytes: Array(bytes[12...]))
    }

    /// `2002:AABB:CCDD::/48` (RFC 3056): a 6to4 relay connects to AA.BB.CC.DD.
    private var ipv4SixToFour: IPAddress? {
        guard !isIPv4, bytes[0] == 0x20, bytes[1] == 0x02 else { return nil }
        return IPAddress(bytes: Array(bytes[2..<6]))
    }

    private static func isPublicIPv4(_ b: [UInt8]) -> Bool {
        switch (b[0], b[1], b[2]) {
        case (0, _, _): false                                 // "this network", 0.0.0.0
        case (10, _, _): false                                // private
        case (100, 64...127, _): false                        // shared address space (CGNAT)
        case (127, _, _): false                               // loopback
        case (169, 254, _): false                             // link-local (cloud metadata)
        case (172, 16...31, _): false                         // private
        case (192, 0, 0), (192, 0, 2): false                  // IETF assignments, TEST-NET-1
        case (192, 88, 99): false                             // 6to4 relay anycast (deprecated)
        case (192, 168, _): false                             // private
        case (198, 18...19, _): false                         // benchmarking
        case (198, 51, 100), (203, 0, 113): false             // TEST-NET-2, TEST-NET-3
        case (224...255, _, _): false                         // multicast, reserved, broadcast
        default: true
        }
    }
}
