import DAVXML
import RoloStore

/// Principals and access: RFC 5397 current-user-principal, RFC 3744 read-only properties,
/// RFC 6352 address book home discovery.
enum AccessProperties {
    static let all: [LiveProperty] = [currentUserPrincipal, principalURL, owner, privileges,
                                      addressbookHomeSet, principalAddress, principalCollectionSet]

    static let currentUserPrincipal = LiveProperty(.dav("current-user-principal"), kinds: NodeKind.all) { context in
        .href(context.hrefs.principal(context.user))
    }

    static let principalURL = LiveProperty(.dav("principal-URL"), kinds: [.principal]) { context in
        .href(context.hrefs.principal(context.user))
    }

    static let principalCollectionSet = LiveProperty(.dav("principal-collection-set"), kinds: [.root, .principal],
                                                     inAllprop: false) { context in
        .href(context.hrefs.principals)
    }

    static let owner = LiveProperty(.dav("owner"), kinds: NodeKind.all.subtracting([.root])) { context in
        .href(context.hrefs.principal(context.user))
    }

    static let addressbookHomeSet = LiveProperty(.cardDAV("addressbook-home-set"), kinds: [.principal, .root]) { context in
        .href(context.hrefs.home(context.user))
    }

    /// RFC 6352 §7.1.2: Rolo has no principal vCard, so the property is absent (404).
    static let principalAddress = LiveProperty(.cardDAV("principal-address"), kinds: [.principal], inAllprop: false) { _ in
        nil
    }

    /// The owner holds every privilege on their own tree; shared tops are read-only.
    static let privileges = LiveProperty(.dav("current-user-privilege-set"), kinds: NodeKind.all, inAllprop: false) { context in
        let names: [String]
        switch context.node.kind {
        case .root, .principal: names = ["read", "read-current-user-privilege-set"]
        default: names = ["read", "write", "write-properties", "write-content", "bind", "unbind",
                          "read-current-user-privilege-set", "all"]
        }
        return .xml { writer in
            for name in names { writer.element(Namespace.dav, "privilege") { $0.empty(Namespace.dav, name) } }
        }
    }
}
