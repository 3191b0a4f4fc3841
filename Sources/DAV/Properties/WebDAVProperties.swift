import RoloStore

/// RFC 4918 properties: resource type, names, dates, entity tags, content metadata.
enum WebDAVProperties {
    static let all: [LiveProperty] = [resourceType, displayName, creationDate, lastModified,
                                      etag, contentType, contentLength]

    static let resourceType = LiveProperty(.dav("resourcetype"), kinds: NodeKind.all) { context in
        switch context.node.kind {
        case .principal: .emptyElements([.dav("principal")])
        case .addressBook: .emptyElements([.dav("collection"), .cardDAV("addressbook")])
        case .card, .file: .emptyElements([])
        case .root, .home, .plainCollection: .emptyElements([.dav("collection")])
        }
    }

    static let displayName = LiveProperty(.dav("displayname"), kinds: NodeKind.collections.union([.principal]),
                                          writable: true) { context in
        switch context.node {
        case .principal(let user): .text(try await context.store.account(name: user)?.displayName ?? user)
        case .home(let user): .text(user)
        case .collection(let info) where info.mount != nil: info.mount.map { .text($0.displayName) }
        case .collection(let info): info.displayName.map(PropertyValue.text)
        default: nil
        }
    }

    static let creationDate = LiveProperty(.dav("creationdate"), kinds: NodeKind.storedCollections.union(NodeKind.objects)) { context in
        switch context.node {
        case .collection(let info): .text(HTTPDate.rfc3339(info.created))
        case .object(_, let info, _): .text(HTTPDate.rfc3339(info.modified))
        default: nil
        }
    }

    static let lastModified = LiveProperty(.dav("getlastmodified"), kinds: NodeKind.storedCollections.union(NodeKind.objects)) { context in
        switch context.node {
        case .collection(let info): .text(HTTPDate.rfc1123(info.modified))
        case .object(_, let info, _): .text(HTTPDate.rfc1123(info.modified))
        default: nil
        }
    }

    static let etag = LiveProperty(.dav("getetag"), kinds: NodeKind.objects) { context in
        guard case .object(_, let info, _) = context.node else { return nil }
        return .text(info.etag)
    }

    static let contentType = LiveProperty(.dav("getcontenttype"), kinds: NodeKind.objects) { context in
        guard case .object(_, let info, _) = context.node else { return nil }
        return .text(context.node.kind == .card ? Put.cardContentType : info.contentType)
    }

    /// A card's or file's stored size; a book's is its GET's (`bookDocumentLength`), where
    /// that GET sends one.
    static let contentLength = LiveProperty(.dav("getcontentlength"), kinds: NodeKind.objects.union([.addressBook])) { context in
        switch context.node {
        case .object(_, let info, _): .text(String(info.size))
        case .collection(let book): try await context.service.bookDocumentLength(book).map { .text(String($0)) }
        default: nil
        }
    }
}
