import Foundation
#if canImport(Glibc)
import Glibc
#endif
import LoopbackSockets
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
        var upstreamPort: Int?
        /// Every open connection, by the port its upstream socket has: the `client_port`
        /// PostgreSQL shows for its backend.
        var links: [Int: Link] = [:]
        var stopped = false
    }

    public init() throws {
        (listener, port) = try LoopbackSocket.listening()
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// Sends `configuration`'s connections through the proxy: the proxy connects to the
    /// server the configuration named (the same one for every store routed through it).
    public func route(_ configuration: inout PostgresStore.Configuration) {
        precondition(["127.0.0.1", "localhost"].contains(configuration.host), "the test server is on 127.0.0.1")
        let serverPort = configuration.port
        state.withLock { state in
            precondition(state.upstreamPort == nil || state.upstreamPort == serverPort, "one proxy, one server")
            state.upstreamPort = serverPort
        }
        configuration.servers = [.init(host: "127.0.0.1", port: port)]
    }

    /// Holds up the connection whose backend PostgreSQL shows at `clientPort` (its
    /// `client_port` in `pg_stat_activity`, `inet_client_port()` on it); false if no open
    /// connection has that port.
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
            guard let upstreamPort = state.withLock({ $0.stopped ? nil : $0.upstreamPort }),
                  let server = try? LoopbackSocket.connect(port: upstreamPort, receiveTimeoutSeconds: 0),
                  let serverPort = LoopbackSocket.localPort(of: server) else {
                close(client)
                continue
            }
            Self.noDelay(client)
            Self.noDelay(server)
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

    /// The protocol's messages are small and answered one by one: no Nagle delay on either leg.
    private static func noDelay(_ socket: Int32) {
        var on: Int32 = 1
        setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
    }
}
