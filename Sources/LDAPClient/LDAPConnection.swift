import CLDAP
import Foundation
import NIOPosix

/// How to reach a directory server: the settings of issue 30 that concern the connection.
public struct LDAPSettings: Sendable, Equatable {
    /// `ldap://host[:port]` or `ldaps://host[:port]`.
    public var url: String
    /// Upgrade an `ldap://` connection with StartTLS before anything else is sent.
    public var startTLS: Bool
    /// The CA certificates (PEM) to verify the server with; nil for the system's.
    public var caFile: String?
    public var tlsVerify: LDAPTLSVerify
    /// Seconds to open the TCP connection (and the TLS handshake).
    public var networkTimeoutSeconds: Int
    /// Seconds for each operation (bind, search), asked of the server and enforced by the client.
    public var searchTimeoutSeconds: Int

    public init(url: String, startTLS: Bool = false, caFile: String? = nil, tlsVerify: LDAPTLSVerify = .demand,
                networkTimeoutSeconds: Int = 5, searchTimeoutSeconds: Int = 5) {
        self.url = url
        self.startTLS = startTLS
        self.caFile = caFile
        self.tlsVerify = tlsVerify
        self.networkTimeoutSeconds = networkTimeoutSeconds
        self.searchTimeoutSeconds = searchTimeoutSeconds
    }
}

/// How the server's certificate is checked, with libldap's names (`TLS_REQCERT` in ldap.conf(5)).
public enum LDAPTLSVerify: String, Sendable, CaseIterable {
    /// No certificate asked for or checked.
    case never
    /// A certificate is asked for; a bad or missing one is accepted.
    case allow
    /// A missing certificate is accepted, a bad one ends the connection.
    case `try`
    /// A valid certificate is required (the default: anything else lets a man in the middle read passwords).
    case demand

    var libldapValue: Int32 {
        switch self {
        case .never: LDAP_OPT_X_TLS_NEVER
        case .allow: LDAP_OPT_X_TLS_ALLOW
        case .try: LDAP_OPT_X_TLS_TRY
        case .demand: LDAP_OPT_X_TLS_DEMAND
        }
    }
}

/// Where a search looks below its base.
public enum LDAPScope: Sendable {
    case base, oneLevel, subtree

    var libldapValue: Int32 {
        switch self {
        case .base: Int32(ROLO_LDAP_SCOPE_BASE)
        case .oneLevel: Int32(ROLO_LDAP_SCOPE_ONE)
        case .subtree: Int32(ROLO_LDAP_SCOPE_SUBTREE)
        }
    }
}

/// One entry a search found: its DN and its attributes' values, as the server sent them.
public struct LDAPEntry: Sendable, Equatable {
    public var dn: String
    /// Attribute names as the server spelled them; each value's bytes (a `jpegPhoto` is
    /// binary, and a string that is not UTF-8 must be told apart from one that is).
    public var rawAttributes: [String: [Data]]

    public init(dn: String, rawAttributes: [String: [Data]]) {
        self.dn = dn
        self.rawAttributes = rawAttributes
    }

    public init(dn: String, attributes: [String: [String]]) {
        self.init(dn: dn, rawAttributes: attributes.mapValues { $0.map { Data($0.utf8) } })
    }

    /// The values as text (UTF-8, as LDAP's string syntaxes are; other bytes come out lossy).
    public var attributes: [String: [String]] {
        rawAttributes.mapValues { $0.map { String(decoding: $0, as: UTF8.self) } }
    }

    /// The values of `attribute` as text, whatever its case (LDAP attribute names are case-insensitive).
    public func values(_ attribute: String) -> [String] {
        data(attribute).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The values of `attribute` as bytes, whatever its case.
    public func data(_ attribute: String) -> [Data] {
        rawAttributes.first { $0.key.caseInsensitiveCompare(attribute) == .orderedSame }?.value ?? []
    }
}

/// One connection to a directory server, over OpenLDAP's client library.
///
/// libldap's calls block their thread for up to a timeout (a server down costs the whole
/// network timeout), so every call runs on `LDAPConnection.threads`, a small pool of this
/// module's own: not the cooperative pool or an event loop (whose threads must never
/// wait on the network), and not `NIOThreadPool.singleton` either, whose threads serve the
/// server's file I/O and would be taken up one by one by logins during a directory outage.
/// A libldap handle is not safe to use from two threads at once, so the connection's calls
/// run one at a time (a lock held for the call).
public final class LDAPConnection: @unchecked Sendable {
    /// The threads libldap's blocking calls run on (see the type's comment); four, so a few
    /// logins proceed in parallel while a slow directory holds the others back.
    static let threads: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: 4)
        pool.start()
        return pool
    }()

    private let lock = NSLock()
    /// The libldap handle (`LDAP *`); nil once closed.
    private var handle: OpaquePointer?
    private let settings: LDAPSettings

    private init(handle: OpaquePointer, settings: LDAPSettings) {
        self.handle = handle
        self.settings = settings
    }

    deinit {
        if let handle { ldap_unbind_ext_s(handle, nil, nil) }
    }

    /// A connection to `settings.url`, made now (TCP, the TLS handshake for `ldaps://`,
    /// StartTLS when asked), so an unreachable server shows here as `.unavailable`.
    /// Throws `LDAPError`.
    public static func open(_ settings: LDAPSettings) async throws -> LDAPConnection {
        let scheme = settings.url.prefix { $0 != ":" }.lowercased()
        guard scheme == "ldap" || scheme == "ldaps", settings.url.dropFirst(scheme.count).hasPrefix("://") else {
            throw LDAPError.failed(code: LDAP_PARAM_ERROR, message: "the URL must start with ldap:// or ldaps://: \(settings.url)")
        }
        if settings.startTLS && scheme == "ldaps" {
            throw LDAPError.failed(code: LDAP_PARAM_ERROR, message: "StartTLS needs an ldap:// URL (ldaps:// is TLS from the start)")
        }
        return try await run {
            var handle: OpaquePointer?
            let code = rolo_ldap_open(settings.url, settings.caFile, settings.tlsVerify.libldapValue,
                                      Int32(clamping: settings.networkTimeoutSeconds),
                                      Int32(clamping: settings.searchTimeoutSeconds), &handle)
            guard code == LDAP_SUCCESS, let handle else { throw error(code, nil) }
            let connection = LDAPConnection(handle: handle, settings: settings)
            var connected = ldap_connect(handle)
            if connected == LDAP_SUCCESS && settings.startTLS { connected = ldap_start_tls_s(handle, nil, nil) }
            guard connected == LDAP_SUCCESS else { throw error(connected, handle) }
            return connection
        }
    }

    /// A simple bind as `dn` with `password`. An empty password is refused here, before
    /// anything reaches the server (it would take it as an unauthenticated bind and answer
    /// success). Throws `LDAPError` (`.invalidCredentials` for a wrong DN or password).
    public func bind(dn: String, password: String) async throws {
        guard !password.isEmpty else { throw LDAPError.emptyPassword }
        try await withHandle { handle in
            let code = password.withCString { rolo_ldap_simple_bind(handle, dn, $0, strlen($0)) }
            guard code == LDAP_SUCCESS else { throw Self.error(code, handle) }
        }
    }

    /// The entries below `base` (within `scope`) that match `filter` (built with
    /// `LDAPFilter.escape` for any value from outside), with `attributes` (all user
    /// attributes when empty); at most `sizeLimit` entries (0: the server's limit), more
    /// is an error. Throws `LDAPError`.
    public func search(base: String, scope: LDAPScope = .subtree, filter: String, attributes: [String] = [],
                       sizeLimit: Int = 0) async throws -> [LDAPEntry] {
        let timeLimit = Int32(clamping: settings.searchTimeoutSeconds)
        return try await withHandle { handle in
            var names: [UnsafeMutablePointer<CChar>?] = attributes.map { strdup($0) } + [nil]
            defer { names.forEach { free($0) } }
            var result: OpaquePointer?
            let code = names.withUnsafeMutableBufferPointer { buffer in
                rolo_ldap_search(handle, base, scope.libldapValue, filter, attributes.isEmpty ? nil : buffer.baseAddress,
                                 timeLimit, Int32(clamping: sizeLimit), &result)
            }
            defer { if result != nil { ldap_msgfree(result) } }
            guard code == LDAP_SUCCESS else { throw Self.error(code, handle) }
            return Self.entries(of: result, handle: handle)
        }
    }

    /// Every entry below `base` that matches `filter`, read in pages of `pageSize` with the
    /// paged results control (RFC 2696), so a listing of a whole organisation passes the
    /// server's size limit; a server without the control answers in one page, and a limit
    /// it still reaches is an error (never a silently shorter list). Throws `LDAPError`.
    public func searchAll(base: String, scope: LDAPScope = .subtree, filter: String, attributes: [String] = [],
                          pageSize: Int = 500) async throws -> [LDAPEntry] {
        let timeLimit = Int32(clamping: settings.searchTimeoutSeconds)
        return try await withHandle { handle in
            var names: [UnsafeMutablePointer<CChar>?] = attributes.map { strdup($0) } + [nil]
            defer { names.forEach { free($0) } }
            var found: [LDAPEntry] = []
            var cookie: UnsafeMutablePointer<berval>?
            defer { if cookie != nil { ber_bvfree(cookie) } }
            repeat {
                var result: OpaquePointer?
                var next: UnsafeMutablePointer<berval>?
                let code = names.withUnsafeMutableBufferPointer { buffer in
                    rolo_ldap_search_page(handle, base, scope.libldapValue, filter, attributes.isEmpty ? nil : buffer.baseAddress,
                                          timeLimit, Int32(clamping: pageSize), cookie, &result, &next)
                }
                defer { if result != nil { ldap_msgfree(result) } }
                if cookie != nil { ber_bvfree(cookie) }
                cookie = next
                guard code == LDAP_SUCCESS else { throw Self.error(code, handle) }
                found += Self.entries(of: result, handle: handle)
            } while cookie != nil
            return found
        }
    }

    /// Unbinds and closes the connection; later calls fail. Also done when it is released.
    public func close() {
        lock.withLock {
            if let handle { ldap_unbind_ext_s(handle, nil, nil) }
            handle = nil
        }
    }

    /// Runs `body` with the handle on `threads`, one call at a time.
    private func withHandle<T: Sendable>(_ body: @escaping @Sendable (OpaquePointer) throws -> T) async throws -> T {
        try await Self.run { [self] in
            try lock.withLock {
                guard let handle else { throw LDAPError.failed(code: LDAP_OTHER, message: "the connection is closed") }
                return try body(handle)
            }
        }
    }

    /// Runs `body` on `threads`, with SIGPIPE blocked on the thread first: libldap (with
    /// GnuTLS) writes to its socket without `MSG_NOSIGNAL`, so a write to a connection the
    /// server has closed would otherwise kill the whole process. Blocked on these threads
    /// only, the write fails with EPIPE instead (and the signal stays pending on the thread,
    /// harmlessly), and the process's own signal handling is left alone.
    private static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        do {
            return try await threads.runIfActive {
                var pipeSignal = sigset_t()
                sigemptyset(&pipeSignal)
                sigaddset(&pipeSignal, SIGPIPE)
                pthread_sigmask(SIG_BLOCK, &pipeSignal, nil)
                return try body()
            }
        } catch let error as LDAPError {
            throw error
        } catch {
            throw LDAPError.unavailable("\(error)")
        }
    }

    private static func entries(of result: OpaquePointer?, handle: OpaquePointer) -> [LDAPEntry] {
        var entries: [LDAPEntry] = []
        var entry = ldap_first_entry(handle, result)
        while let current = entry {
            var dn = ""
            if let name = ldap_get_dn(handle, current) {
                dn = String(cString: name)
                ldap_memfree(name)
            }
            var attributes: [String: [Data]] = [:]
            var position: OpaquePointer?
            var attribute = ldap_first_attribute(handle, current, &position)
            while let name = attribute {
                var values: [Data] = []
                if let list = ldap_get_values_len(handle, current, name) {
                    var index = 0
                    while let value = list[index] {
                        values.append(Data(UnsafeRawBufferPointer(start: value.pointee.bv_val, count: Int(value.pointee.bv_len))))
                        index += 1
                    }
                    ldap_value_free_len(list)
                }
                attributes[String(cString: name)] = values
                ldap_memfree(name)
                attribute = ldap_next_attribute(handle, current, position)
            }
            if position != nil { ber_free(position, 0) }
            entries.append(LDAPEntry(dn: dn, rawAttributes: attributes))
            entry = ldap_next_entry(handle, current)
        }
        return entries
    }

    /// `code` as an `LDAPError` of its kind, with libldap's text and the server's diagnostic.
    static func error(_ code: Int32, _ handle: OpaquePointer?) -> LDAPError {
        var message = String(cString: ldap_err2string(code))
        if let diagnostic = rolo_ldap_diagnostic(handle) {
            let text = String(cString: diagnostic)
            ldap_memfree(diagnostic)
            if !text.isEmpty { message += " (\(text))" }
        }
        switch rolo_ldap_kind_of(code) {
        case ROLO_LDAP_UNAVAILABLE: return .unavailable(message)
        case ROLO_LDAP_INVALID_CREDENTIALS: return .invalidCredentials
        default: return .failed(code: code, message: message)
        }
    }
}
