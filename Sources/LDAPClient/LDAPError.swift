/// Why an LDAP call failed, in the three kinds a login must tell apart: the directory
/// could not answer (a 503 and a retry, never a fall-back to another source), it refused
/// the credentials (a failed login), or anything else (a setting or a server to fix).
public enum LDAPError: Error, Equatable, CustomStringConvertible {
    /// The server is down or unreachable, an operation timed out, or TLS failed.
    case unavailable(String)
    /// The server refused a bind's DN or password (LDAP result 49).
    case invalidCredentials
    /// An empty password, refused before any bind: the server would take it as an
    /// "unauthenticated bind" (RFC 4513 §5.1.2) and answer success.
    case emptyPassword
    /// Any other result: `code` is libldap's result code.
    case failed(code: Int32, message: String)

    public var description: String {
        switch self {
        case .unavailable(let message): "LDAP server unavailable: \(message)"
        case .invalidCredentials: "LDAP bind refused: invalid credentials"
        case .emptyPassword: "LDAP bind refused: empty password"
        case .failed(let code, let message): "LDAP error \(code): \(message)"
        }
    }
}
