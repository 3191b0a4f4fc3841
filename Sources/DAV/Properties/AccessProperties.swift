import Authorization
import DAVXML
import RoloStore

/// Principals and access: RFC 5397 current-user-principal, RFC 3744 privileges and ACLs,
/// RFC 6352 address book home discovery, and how a book is shared (draft-pot-webdav-
/// resource-sharing's `share-access` and `invite`, read-only: shares are managed through
/// the CLI and the JSON API, since no contacts client sends sharing requests).
enum AccessProperties {
    static let all: [LiveProperty] = [currentUserPrincipal, principalURL, owner, privileges, acl, aclRestrictions,
                                      addressbookHomeSet, principalAddress, principalCollectionSet, emailAddressSet,
                                      shareAccess, invite, directoryGateway]

    static let currentUserPrincipal = LiveProperty(.dav("current-user-principal"), kinds: NodeKind.all) { context in
        .href(context.hrefs.principal(context.user))
    }

    static let principalURL = LiveProperty(.dav("principal-URL"), kinds: [.principal]) { context in
        guard case .principal(let user) = context.node else { return nil }
        return .href(context.hrefs.principal(user))
    }

    /// Apple's `email-address-set` (CalendarServer): the account's e-mail address, one of
    /// the properties `principal-property-search` matches (absent without an address).
    static let emailAddressSet = LiveProperty(.calendarServer("email-address-set"), kinds: [.principal],
                                              inAllprop: false) { context in
        guard case .principal(let user) = context.node,
              let email = try await context.store.account(name: user)?.email, !email.isEmpty else { return nil }
        return .xml { $0.element(Namespace.calendarServer, "email-address", text: email) }
    }

    static let principalCollectionSet = LiveProperty(.dav("principal-collection-set"), kinds: NodeKind.all,
                                                     inAllprop: false) { context in
        .href(context.hrefs.principals)
    }

    /// The book's owner, also seen through a mount (DAVx5 reads it to tell shared books).
    static let owner = LiveProperty(.dav("owner"), kinds: NodeKind.all.subtracting([.root])) { context in
        switch context.node {
        case .collection(let info), .object(let info, _, _): .href(context.hrefs.principal(info.owner))
        case .principal(let user), .home(let user): .href(context.hrefs.principal(user))
        default: nil
        }
    }

    static let addressbookHomeSet = LiveProperty(.cardDAV("addressbook-home-set"), kinds: [.principal, .root]) { context in
        .href(context.hrefs.home(context.user))
    }

    /// RFC 6352 §7.1.3: on the user's own principal, the organisation's directories as their
    /// home mounts them (issue 32; one with `directory = all`, one per group of theirs with
    /// `groups`), for clients that search them (macOS Contacts); absent when the user has no
    /// directory, and on other users' principals.
    static let directoryGateway = LiveProperty(.cardDAV("directory-gateway"), kinds: [.principal], inAllprop: false) { context in
        guard case .principal(let user) = context.node, user == context.user else { return nil }
        if context.service.configuration.directoryGatewayOnly {
            return .href(context.hrefs.home(user) + DirectoryRules.mountName + "/")
        }
        if let mount = try await context.store.mount(sharee: user, name: DirectoryRules.mountName) {
            return .href(context.hrefs.collection(mount))
        }
        let hrefs = try await context.store.mounts(sharee: user).filter(DirectoryRules.isDirectory)
            .map { context.hrefs.collection($0) }.sorted()
        guard !hrefs.isEmpty else { return nil }
        if hrefs.count == 1 { return .href(hrefs[0]) }
        return .xml { writer in for href in hrefs { writer.element(Namespace.dav, "href", text: href) } }
    }

    /// RFC 6352 §7.1.2: Rolo has no principal vCard, so the property is absent (404).
    static let principalAddress = LiveProperty(.cardDAV("principal-address"), kinds: [.principal], inAllprop: false) { _ in
        nil
    }

    /// Every privilege held, leaves and aggregates written out: clients differ in which
    /// they look for, and a read-only book must list exactly `read` and
    /// `read-current-user-privilege-set` (see `Privileges.readOnly`).
    static let privileges = LiveProperty(.dav("current-user-privilege-set"), kinds: NodeKind.all, inAllprop: false) { context in
        let names = (Access.privileges(on: context.node, for: context.credential) ?? []).elementNames
        return .xml { writer in
            for name in names { writer.element(Namespace.dav, "privilege") { $0.empty(Namespace.dav, name) } }
        }
    }

    /// RFC 3744 §5.5. The owner sees every grant on their book; a sharee sees the owner's
    /// and their own, never the other sharees.
    static let acl = LiveProperty(.dav("acl"), kinds: NodeKind.storedCollections.union(NodeKind.objects),
                                  inAllprop: false) { context in
        let collection: CollectionInfo
        switch context.node {
        case .collection(let info), .object(let info, _, _): collection = info
        default: return nil
        }
        let grants = try await grants(on: collection, seenBy: context.user, store: context.store)
        let hrefs = context.hrefs
        return .xml { [grants] writer in
            for grant in grants {
                writer.element(Namespace.dav, "ace") { ace in
                    ace.element(Namespace.dav, "principal") { $0.element(Namespace.dav, "href", text: hrefs.principal(grant.principal)) }
                    ace.element(Namespace.dav, "grant") { grantElement in
                        for name in grant.privileges.elementNames {
                            grantElement.element(Namespace.dav, "privilege") { $0.empty(Namespace.dav, name) }
                        }
                    }
                    ace.element(Namespace.dav, "protected") { _ in }
                }
            }
        }
    }

    /// The grants of `DAV:acl` (and the principals of `acl-principal-prop-set`): the owner's,
    /// then each accepted sharee's. A sharee (`user` through a mount) sees only the owner's
    /// grant and their own, never the other sharees.
    static func grants(on collection: CollectionInfo, seenBy user: String,
                       store: any DAVStore) async throws -> [(principal: String, privileges: Privileges)] {
        var grants: [(principal: String, privileges: Privileges)] = [(collection.owner, .all)]
        if collection.kind == .addressBook {
            for share in try await store.shares(bookID: collection.id)
            where share.state == .accepted && (collection.mount == nil || share.sharee == user) {
                grants.append((share.sharee, Access.privileges(grantedBy: share.access)))
            }
        }
        return grants
    }

    /// RFC 3744 §5.6: ACLs are read-only here (no ACL method); every ACE grants.
    static let aclRestrictions = LiveProperty(.dav("acl-restrictions"), kinds: NodeKind.storedCollections.union(NodeKind.objects),
                                              inAllprop: false) { _ in
        .emptyElements([.dav("grant-only"), .dav("no-invert")])
    }

    /// `shared-owner` on a shared book seen by its owner, `read` or `read-write` on a mount,
    /// `not-shared` otherwise.
    static let shareAccess = LiveProperty(.dav("share-access"), kinds: [.addressBook], inAllprop: false) { context in
        guard case .collection(let info) = context.node else { return nil }
        if let mount = info.mount { return .emptyElements([.dav(mount.access == .readWrite ? "read-write" : "read")]) }
        let shared = try await !context.store.shares(bookID: info.id).isEmpty
        return .emptyElements([.dav(shared ? "shared-owner" : "not-shared")])
    }

    /// The sharees of a book, for its owner only.
    static let invite = LiveProperty(.dav("invite"), kinds: [.addressBook], inAllprop: false) { context in
        guard case .collection(let info) = context.node, info.mount == nil else { return nil }
        let shares = try await context.store.shares(bookID: info.id)
        let hrefs = context.hrefs
        return .xml { writer in
            for share in shares {
                writer.element(Namespace.dav, "sharee") { sharee in
                    sharee.element(Namespace.dav, "href", text: hrefs.principal(share.sharee))
                    sharee.empty(Namespace.dav, share.state == .accepted ? "invite-accepted" : "invite-noresponse")
                    sharee.element(Namespace.dav, "share-access") {
                        $0.empty(Namespace.dav, share.access == .readWrite ? "read-write" : "read")
                    }
                }
            }
        }
    }
}
