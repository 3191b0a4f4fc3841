import Foundation
#if canImport(Glibc)
import Glibc
#endif
import RoloPostgres
import Synchronization

/// A TCP proxy on a free loopback port in front of the test server, whose connections a test
/// can hold up: while one is paused, nothing it carries is delivered either way, and the
/// backend behind it goes on running. A network that stops delivering, without closing.
///
/// It stands in for SIGSTOP of the backend, which froze a process of the cluster every test
/// shares wherever it was. One frozen while it reads its notify queue (a write's notice has
/// just woken it) holds the lock every notifying commit of every database takes; one frozen
/// while it writes its `pg_stat_activity` entry makes every reader of that view spin, the
/// other tests' heartbeats among them. Paused here, a backend holds nothing (Docs/testing.md).
public final class PausableProxy: Sendable {
    /// Where the stores connect: put in a configuration by `route`.
    public let port: Int
    private let listener: Int32
    private let state = Mutex(State())

    private struct State {
        var upstream: (host: String, port: Int)?
        /// Every open connection, by the port its upstream socket has: the `client_port`
        /// PostgreSQL shows for its backend.
        var links: [Int: Link] = [:]
        var stopped = false
    }

    public init() throws {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw TestPostgresError("proxy: socket() failed") }
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(socket, 64) == 0, let port = Self.localPort(of: socket) else {
            close(socket)
            throw TestPostgresError("proxy: could not listen on a loopback port")
        }
        self.listener = socket
        self.port = port
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// Sends `configuration`'s connections through the proxy: the proxy connects to the
    /// server the configuration named (the same one for every store routed through it).
    public func route(_ configuration: inout PostgresStore.Configuration) {
        let server = (host: configuration.host, port: configuration.port)
        state.withLock { state in
            precondition(state.upstream == nil || (state.upstream!.host == server.host && state.upstream!.port == server.port),
                         "one proxy, one server")
            state.upstream = server
        }
        configuration.servers = [.init(host: "127.0.0.1", port: port)]
    }

    /// Holds up the connection whose backend PostgreSQL shows at `clientPort` (its
    /// `client_port` in `pg_stat_activity`, `inet_client_port()` on it); false if no open
    /// connection has that port.
    @discardableResult
    public func pause(clientPort: Int) -> Bool {
        guard let link = state.withLock({ $0.links[clientPort] }) else { return false }
        link.paused.store(true, ordering: .sequentiallyConsistent)
        return true
    }

    /// Lets every held-up connection go on, delivering what it held.
    public func resumeAll() {
        for link in state.withLock({ Array($0.links.values) }) { link.paused.store(false, ordering: .sequentiallyConsistent) }
    }

    /// Accepts no more connections and lets every held-up one go on. Open connections stay
    /// until their stores close them, so it may run before the stores close.
    public func stop() {
        let wasStopped = state.withLock { state in
            defer { state.stopped = true }
            return state.stopped
        }
        guard !wasStopped else { return }
        resumeAll()
        shutdown(listener, Int32(SHUT_RDWR))
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else {
                if errno == EINTR { continue }
                break
            }
            guard let upstream = state.withLock({ $0.stopped ? nil : $0.upstream }),
                  let server = Self.connect(host: upstream.host, port: upstream.port),
                  let serverPort = Self.localPort(of: server) else {
                close(client)
                continue
            }
            Self.noDelay(client)
            let link = Link(client: client, server: server)
            state.withLock { $0.links[serverPort] = link }
            for (from, to) in [(client, server), (server, client)] {
                Thread { [self] in
                    link.pump(from: from, to: to)
                    if link.pumpEnded() { _ = state.withLock { $0.links.removeValue(forKey: serverPort) } }
                }.start()
            }
        }
        close(listener)
    }

    /// One proxied connection: a thread per direction, each reading as bytes come and
    /// delivering them unless the link is paused. A paused direction keeps reading (so that
    /// it sees its end: a store giving up on a held-up statement closes its connection) and
    /// keeps what it read until resumed.
    private final class Link: Sendable {
        let client: Int32
        let server: Int32
        let paused = Atomic(false)
        private let running = Atomic(2)

        init(client: Int32, server: Int32) {
            self.client = client
            self.server = server
        }

        func pump(from: Int32, to: Int32) {
            var held: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let isPaused = paused.load(ordering: .sequentiallyConsistent)
                if !isPaused, !held.isEmpty {
                    guard Self.send(held, to: to) else { break }
                    held.removeAll(keepingCapacity: true)
                }
                // Wait for bytes; while anything is held, wake now and then to see a resume.
                var poller = pollfd(fd: from, events: Int16(POLLIN), revents: 0)
                let ready = poll(&poller, 1, isPaused || !held.isEmpty ? 20 : -1)
                if ready < 0 { if errno == EINTR { continue } else { break } }
                if ready == 0 { continue }
                let count = buffer.withUnsafeMutableBytes { recv(from, $0.baseAddress, $0.count, 0) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                held.append(contentsOf: buffer[0..<count])
                if !paused.load(ordering: .sequentiallyConsistent) {
                    guard Self.send(held, to: to) else { break }
                    held.removeAll(keepingCapacity: true)
                }
            }
            // Either side's end ends both directions.
            shutdown(client, Int32(SHUT_RDWR))
            shutdown(server, Int32(SHUT_RDWR))
        }

        /// Called by each pump as it ends; true for the last, which closes the sockets (only
        /// then, so that neither number is reused while the other pump still uses it).
        func pumpEnded() -> Bool {
            guard running.subtract(1, ordering: .sequentiallyConsistent).newValue == 0 else { return false }
            close(client)
            close(server)
            return true
        }

        private static func send(_ bytes: [UInt8], to socket: Int32) -> Bool {
            var sent = 0
            while sent < bytes.count {
                let count = bytes.withUnsafeBytes { Glibc.send(socket, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return false }
                sent += count
            }
            return true
        }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private static func localPort(of socket: Int32) -> Int? {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let got = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        return got == 0 ? Int(UInt16(bigEndian: address.sin_port)) : nil
    }

    /// A connected socket to the server (an IPv4 address: the test server's is 127.0.0.1).
    private static func connect(host: String, port: Int) -> Int32? {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return nil }
        var address = loopback(port: port)
        address.sin_addr.s_addr = inet_addr(host == "localhost" ? "127.0.0.1" : host)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(socket)
            return nil
        }
        noDelay(socket)
        return socket
    }

    /// The protocol's messages are small and answered one by one: no Nagle delay on either leg.
    private static func noDelay(_ socket: Int32) {
        var on: Int32 = 1
        setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
    }
}
