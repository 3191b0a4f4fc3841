/// Building search filters from untrusted text (RFC 4515).
public enum LDAPFilter {
    /// `value` made safe to place inside a filter's assertion value: `*`, `(`, `)`, `\` and
    /// NUL become `\2a`, `\28`, `\29`, `\5c` and `\00` (RFC 4515 §3), so a user name can
    /// neither widen the match (`*`) nor add clauses (`)(uid=*`). Every other character,
    /// non-ASCII included, stays as it is (the filter is sent as UTF-8).
    public static func escape(_ value: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(value.utf8.count)
        for scalar in value.unicodeScalars {
            switch scalar {
            case "*": escaped += "\\2a"
            case "(": escaped += "\\28"
            case ")": escaped += "\\29"
            case "\\": escaped += "\\5c"
            case "\0": escaped += "\\00"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}
