import RoloStore

/// What a request addresses, as far as access goes. DAV's nodes, the web UI's pages and
/// the API's records all come down to one of these.
public enum AccessTarget: Sendable {
    /// The root, `/principals/` and `/addressbooks/`: the server's, readable by every user.
    case server
    /// A user's principal: readable by every user (sharing picks sharees from them).
    case principal(String)
    /// A user's address book home.
    case home(owner: String)
    /// A stored collection: an own address book, a plain collection, or a book seen
    /// through a mount (`CollectionInfo.mount`).
    case collection(CollectionInfo)
    /// A card or file: what the credential may do on its collection.
    case member(of: CollectionInfo)
}

/// The one place that decides what a credential may do, for DAV, the web UI, the JSON API
/// and the command line. Front ends find what a request addresses and ask here; nothing
/// else grants or refuses. A path grants nothing: another user's tree is invisible (nil,
/// 404), and a shared book is reached only through the sharee's mount, with the share's
/// access.
public enum Access {
    /// What `credential` may do on `target`; nil when the target is invisible to it (404).
    public static func privileges(on target: AccessTarget, for credential: Credential) -> Privileges? {
        switch target {
        case .server, .principal:
            return .readOnly
        case .home(let owner):
            guard owner == credential.user else { return nil }
            // A scoped or read-only app password sees its books, and creates or removes none.
            return credential.scope.isFull ? [.readOnly, .bind, .unbind, .writeProperties] : .readOnly
        case .collection(let collection), .member(of: let collection):
            return privileges(on: collection, for: credential)
        }
    }

    /// What a share lets its sharee do (before an app password's scope narrows it); also
    /// what `DAV:acl` lists for the sharee.
    public static func privileges(grantedBy access: ShareAccess) -> Privileges {
        access == .readWrite ? .readWriteShare : .readOnly
    }

    /// What `credential` may do in `collection` (and on its members); nil when invisible.
    public static func privileges(on collection: CollectionInfo, for credential: Credential) -> Privileges? {
        var granted: Privileges
        if let mount = collection.mount {
            guard mount.sharee == credential.user else { return nil }
            granted = privileges(grantedBy: mount.access)
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
}
