import Logging

/// One stable line per failed login, for people and for fail2ban
/// (`deploy/fail2ban/filter.d/rolo.conf`), at `notice`:
///
///     auth_failed user=<name> ip=<address> reason=bad_password|unknown_user|throttled|not_utf8|sso_refused
///
/// with the same fields as metadata (`event`, `user`, `ip`, `reason`) for JSON logs. The
/// name is the one the client sent, with every byte outside `A-Z a-z 0-9 . _ - @ + :`
/// percent-encoded (and cut at 64 bytes), so it can neither break the line nor forge the
/// `ip=` field a filter bans on; the address is the client's (`ClientAddress.Subnet.address`).
/// The password is never logged.
struct AuthFailureLog: Sendable {
    enum Reason: String, Sendable {
        /// The user exists; the password was wrong.
        case badPassword = "bad_password"
        /// No such user.
        case unknownUser = "unknown_user"
        /// The subnet is blocked: answered 429, the password not checked.
        case throttled
        /// A revoked app password, still tried by a device that was not told.
        case revokedToken = "revoked_token"
        /// Credentials that are not UTF-8 (a client sending Latin-1, say): no password can
        /// match them, and a guesser must not get a way to try without being counted.
        case notUTF8 = "not_utf8"
        /// A sign-in through the OpenID provider refused: a token that fails its checks, a
        /// state that is not this browser's, a user outside the required group.
        case ssoRefused = "sso_refused"
    }

    let logger: Logger

    func record(user: String, address: String, reason: Reason) {
        guard logger.logLevel <= .notice else { return }
        let user = Self.loggable(user)
        let ip = Self.loggable(address)
        logger.notice("auth_failed user=\(user) ip=\(ip) reason=\(reason.rawValue)",
                      metadata: ["event": "auth_failed", "user": .string(user), "ip": .string(ip),
                                 "reason": .string(reason.rawValue)])
    }

    /// `text` with bytes outside a safe set percent-encoded; at most 64 bytes of it.
    static func loggable(_ text: String) -> String {
        var output = ""
        var utf8 = Array(text.utf8.prefix(64))
        if utf8.isEmpty { utf8 = Array("-".utf8) }
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"),
                 UInt8(ascii: "@"), UInt8(ascii: "+"), UInt8(ascii: ":"):
                output.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                output += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return output
    }
}
