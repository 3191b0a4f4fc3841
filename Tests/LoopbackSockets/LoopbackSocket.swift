import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A blocking TCP socket connected to 127.0.0.1, for tests that speak HTTP to a server byte
/// by byte (pipelining, split writes, raw answers), where no HTTP client fits. Shared by the
/// test targets that need one, so the socket set-up lives in one place.
public enum LoopbackSocket {
    public enum Failure: Error { case socket, refused }

    /// A socket connected to `port` on 127.0.0.1, whose reads give up after
    /// `receiveTimeoutSeconds` (0: never). The caller closes the descriptor.
    public static func connect(port: Int, receiveTimeoutSeconds: Int = 30) throws(Failure) -> Int32 {
        let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketFD >= 0 else { throw .socket }
        var timeout = timeval(tv_sec: receiveTimeoutSeconds, tv_usec: 0)
        setsockopt(socketFD, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = loopback(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(socketFD)
            throw .refused
        }
        return socketFD
    }

    /// A socket listening on a free port of 127.0.0.1, with that port (for a server inside
    /// the test process). The caller closes the descriptor.
    public static func listening(backlog: Int32 = 64) throws(Failure) -> (socket: Int32, port: Int) {
        let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketFD >= 0 else { throw .socket }
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(socketFD, backlog) == 0, let port = localPort(of: socketFD) else {
            close(socketFD)
            throw .socket
        }
        return (socketFD, port)
    }

    /// The 127.0.0.1 port `socket` is bound to (a connected socket's own end included).
    public static func localPort(of socket: Int32) -> Int? {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let got = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        return got == 0 ? Int(UInt16(bigEndian: address.sin_port)) : nil
    }

    /// 127.0.0.1:`port` as a socket address.
    static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}

extension LoopbackSocket {
    /// A port on 127.0.0.1 that was free a moment ago (bound to 0, read back, released), for
    /// a server the test starts as another process (which cannot be handed a bound socket).
    /// Another process may take it meanwhile: a caller retries when its server cannot bind.
    public static func freePort() throws(Failure) -> Int {
        let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketFD >= 0 else { throw .socket }
        defer { close(socketFD) }
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, let port = localPort(of: socketFD) else { throw .socket }
        return port
    }

    /// Binds `port` on 127.0.0.1 without listening, so that connecting to it is refused
    /// for as long as the caller keeps the descriptor: no other process can listen there,
    /// and the kernel never picks it as a connection's own port (which would let a connect
    /// to it "succeed" by connecting the socket to itself). For a test of a server gone
    /// away, whose port would otherwise be free for anyone. Nil when the port is taken.
    public static func reserve(port: Int) -> Int32? {
        let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketFD >= 0 else { return nil }
        // The server's own connections may linger in TIME_WAIT; they don't stop a bind.
        var on: Int32 = 1
        setsockopt(socketFD, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        var address = loopback(port: port)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard bound else {
            close(socketFD)
            return nil
        }
        return socketFD
    }
}
