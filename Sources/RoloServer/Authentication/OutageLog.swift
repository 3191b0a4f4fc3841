import Logging
import Synchronization

/// Logs an outage of a source Rolo asks at sign-in (the LDAP directory, the OpenID
/// provider) once when it starts and once when it ends, not once per login: a phone
/// retrying every few seconds through an hour's outage would otherwise bury the log.
final class OutageLog: Sendable {
    private let down = Mutex(false)
    /// Names the source in both lines: "LDAP directory", "OpenID provider Keycloak".
    private let what: String
    private let logger: Logger

    init(what: String, logger: Logger) {
        self.what = what
        self.logger = logger
    }

    func failed(_ reason: String) {
        let first = down.withLock { down in
            defer { down = true }
            return !down
        }
        if first { logger.error("\(what) unavailable; logins that need it get 503", metadata: ["reason": "\(reason)"]) }
    }

    func recovered() {
        let was = down.withLock { down in
            defer { down = false }
            return down
        }
        if was { logger.notice("\(what) reachable again") }
    }
}
