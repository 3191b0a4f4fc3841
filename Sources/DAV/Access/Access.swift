import Authorization
import DAVXML
import RoloStore

/// DAV's side of access: the `Authorization` module decides; this maps a node onto what it
/// decides on and a refusal onto RFC 3744's answers.
extension Privileges {
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

extension Node {
    /// What `Access` decides on for this node.
    var accessTarget: AccessTarget {
        switch self {
        case .root, .principals, .homes: .server
        case .principal(let name): .principal(name)
        case .home(let owner): .home(owner: owner)
        case .collection(let info): .collection(info)
        case .object(let collection, _, _): .member(of: collection)
        }
    }
}

extension Access {
    /// What `credential` may do on `node`; nil when the node is invisible to it (404).
    static func privileges(on node: Node, for credential: Credential) -> Privileges? {
        privileges(on: node.accessTarget, for: credential)
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

    /// `directory = gateway`: the directory is searched, never listed, read or synced.
    static var gatewayOnly: DAVError {
        DAVError(403, message: "The directory is searched only: an addressbook-query on it (directory = gateway).")
    }

    /// 507 with `DAV:quota-not-exceeded` (RFC 4331 §6).
    static func quotaExceeded(_ exceeded: QuotaExceeded) -> DAVError {
        DAVError.precondition(507, .dav("quota-not-exceeded"), message: "The quota of \(exceeded.limit) bytes is used up.")
    }
}
