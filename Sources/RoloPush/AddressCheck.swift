import Foundation
import NIOPosix
import WebPush

/// The DNS half of the push-target check: what a push resource's host name resolves to,
/// right before the POST. `PushTarget.validate` saw only the text; a name can point
/// anywhere, and point elsewhere tomorrow.
enum AddressCheck {
    struct ResolutionFailed: Error, CustomStringConvertible {
        var host: String
        var message: String
        var description: String { "cannot resolve \(host): \(message)" }
    }

    /// Every IPv4 and IPv6 address `host` resolves to (`getaddrinfo`), on NIO's blocking
    /// thread pool so a slow resolver holds no cooperative thread.
    @Sendable static func resolve(_ host: String) async throws -> [IPAddress] {
        try await NIOThreadPool.singleton.runIfActive { try resolveBlocking(host) }
    }

    static func resolveBlocking(_ host: String) throws -> [IPAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Darwin)
        hints.ai_socktype = SOCK_STREAM
        #else
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0 else {
            throw ResolutionFailed(host: host, message: String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(list) }
        var addresses: [IPAddress] = []
        var entry = list
        while let current = entry?.pointee {
            defer { entry = current.ai_next }
            guard let socketAddress = current.ai_addr else { continue }
            switch Int32(socketAddress.pointee.sa_family) {
            case AF_INET:
                let raw = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
                if let address = withUnsafeBytes(of: raw, { IPAddress(bytes: [UInt8]($0)) }) { addresses.append(address) }
            case AF_INET6:
                let raw = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
                if let address = withUnsafeBytes(of: raw, { IPAddress(bytes: [UInt8]($0)) }) { addresses.append(address) }
            default:
                continue
            }
        }
        var seen = Set<IPAddress>()
        return addresses.filter { seen.insert($0).inserted }
    }
}
