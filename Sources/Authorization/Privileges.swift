/// The RFC 3744 privileges Rolo grants or withholds. Aggregates (`write`, `all`) are
/// written out when every privilege they stand for is held. The web UI and the API read the
/// same set, so a page offers exactly what a DAV client would be allowed.
public struct Privileges: OptionSet, Sendable, Hashable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let read = Privileges(rawValue: 1 << 0)
    public static let writeContent = Privileges(rawValue: 1 << 1)
    public static let writeProperties = Privileges(rawValue: 1 << 2)
    public static let bind = Privileges(rawValue: 1 << 3)
    public static let unbind = Privileges(rawValue: 1 << 4)
    public static let readACL = Privileges(rawValue: 1 << 5)
    public static let writeACL = Privileges(rawValue: 1 << 6)
    public static let readCurrentUserPrivilegeSet = Privileges(rawValue: 1 << 7)

    public static let write: Privileges = [.writeContent, .writeProperties, .bind, .unbind]
    public static let all: Privileges = [.read, .write, .readACL, .writeACL, .readCurrentUserPrivilegeSet]
    /// Exactly what clients read as "read-only": Thunderbird treats `write-properties`
    /// alone as writable, so a read-only book must not list it.
    public static let readOnly: Privileges = [.read, .readCurrentUserPrivilegeSet]
    public static let readWriteShare: Privileges = [.readOnly, .write]
}
