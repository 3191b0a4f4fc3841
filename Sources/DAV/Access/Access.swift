import DAVXML
import RoloStore

/// The RFC 3744 privileges Rolo grants or withholds. Aggregates (`write`, `all`) are
/// written out when every privilege they stand for is held.
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

    /// Element names in `DAV:current-user-privilege-set` order, aggregates included.
    var elementNames: [String] {
        var names: [String] = []
        if contains(.all) { names.append("all") }
        if contains(.read) { names.append("read") }
        if contains(.write) { names.append("write") }
        let leaves: [(Privileges, String)] = [(.writeProperties, "write-properties"), (.writeContent, "write-content"),
                                             (.bind, "bind"), (.unbind, "unbind"), (.readACL, "read-acl"),
                                             (.writeACL, "write-acl"),
                                             (.readCurrentUserPrivilegeSet, "read-current-user-privilege-set")]
        for (privilege, name) in leaves where contains(privilege) { names.append(name) }
        return names
    }

    /// The element name of a single privilege (for `need-privileges`).
    var elementName: String { elementNames.last ?? "all" }
}

/// Who makes a request: the authenticated user, the credential they used and what it may reach.
public struct Credential: Sendable, Hashable {
    public var user: String
    /// The app password's id; 0 for the account password.
    public var appPasswordID: Int64
    public var scope: CredentialScope

    public init(user: String, appPasswordID: Int64, scope: CredentialScope) {
        self.user = user; self.appPasswordID = appPasswordID; self.scope = scope
    }

    public static func accountPassword(_ user: String) -> Credential {
        Credential(user: user, appPasswordID: 0, scope: .full)
    }

    public var isAppPassword: Bool { appPasswordID != 0 }

    /// The change-log attribution of this credential's writes.
    public var author: ChangeAuthor { ChangeAuthor(user: user, credentialID: appPasswordID) }
}

/// The one place that decides what a request may do. Handlers resolve a node and ask here;
/// the URL path grants nothing (a path only finds the node: another user's tree answers 404
/// before any node is found, and a mount finds the owner's book with the share's access).
enum Access {
    /// What `credential` may do on `node`; nil when the node is invisible to it (404).
    static func privileges(on node: Node, for credential: Credential) -> Privileges? {
        switch node {
        case .root, .principals, .homes, .principal:
            return .readOnly
        case .home(let owner):
            guard owner == credential.user else { return nil }
            // A scoped or read-only app password sees its books, and creates or removes none.
            return credential.scope.isFull ? [.readOnly, .bind, .unbind, .writeProperties] : .readOnly
        case .collection(let collection), .object(let collection, _, _):
            return privileges(on: collection, for: credential)
        }
    }

    static func privileges(on collection: CollectionInfo, for credential: Credential) -> Privileges? {
        var granted: Privileges
        if let mount = collection.mount {
            guard mount.sharee == credential.user else { return nil }
            granted = mount.access == .readWrite ? .readWriteShare : .readOnly
        } else {
            guard collection.owner == credential.user else { return nil }
            granted = .all
        }
        let scope = credential.scope
        if let books = scope.books {
            // Plain collections are no books: a scoped password does not see them.
            guard collection.kind == .addressBook, books.contains(collection.id) else { return nil }
        }
        if scope.readOnly { granted.formIntersection(.readOnly) }
        return granted
    }

    /// Throws 403 with `DAV:need-privileges` naming `href` unless `privilege` is held on `node`.
    static func require(_ privilege: Privileges, on node: Node, href: String, for credential: Credential) throws(DAVError) {
        guard let held = privileges(on: node, for: credential) else { throw DAVError.notFound }
        if !held.contains(privilege) { throw DAVError.needPrivileges(href: href, privilege: privilege) }
    }
}

extension DAVError {
    /// RFC 3744 §7.1.1: 403 naming the resource and the privilege that is missing. Never 401:
    /// iOS takes a 401 for a wrong password and stops syncing.
    static func needPrivileges(href: String, privilege: Privileges) -> DAVError {
        var error = DAVError(403, condition: .dav("need-privileges"),
                             message: "Not allowed: this needs the \(privilege.elementName) privilege.")
        error.missingPrivilege = (href, privilege.elementName)
        return error
    }
}
