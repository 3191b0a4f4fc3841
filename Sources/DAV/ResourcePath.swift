import RoloStore

/// Where a request path points in Rolo's URL space (design.md), before any storage lookup.
/// Paths are percent-decoded; `components` are what follows the user's home.
enum ResourcePath: Hashable, Sendable {
    /// `/` or `/dav/`: the root, answering `current-user-principal`.
    case root
    /// `/dav/principals/`
    case principals
    /// `/dav/addressbooks/`
    case homes
    /// `/dav/principals/<user>/`
    case principal(user: String)
    /// `/dav/addressbooks/<user>/`
    case home(user: String)
    /// Anything below a home: an address book, a plain collection, a card or a file.
    case member(user: String, components: [String])
    /// `/dav/push/<id>`: a WebDAV-Push registration, which its owner DELETEs. Not a node of
    /// the tree: only DELETE means anything there.
    case pushRegistration(id: String)

    /// Nil when the path is outside the DAV tree or has `.`/`..` segments.
    init?(path: String, configuration: DAVConfiguration) {
        var path = Substring(path)
        let prefix = configuration.proxyPrefix
        if !prefix.isEmpty, Self.isPathPrefix(prefix, of: path) { path = Substring(path.utf8.dropFirst(prefix.utf8.count)) }
        if path.isEmpty || path == "/" { self = .root; return }
        let base = configuration.basePath
        guard Self.isPathPrefix(base, of: path) else { return nil }
        // Split on UTF-8 bytes: splitting a Substring compares Characters (grapheme
        // breaking), which made path parsing the costliest step of a multiget.
        let segments = path.utf8.dropFirst(base.utf8.count).split(separator: 0x2F, omittingEmptySubsequences: true)
            .map { String(decoding: $0, as: UTF8.self) }
        guard !segments.contains(where: { $0 == "." || $0 == ".." }) else { return nil }
        switch (segments.first, segments.count) {
        case (nil, _): self = .root
        case ("principals", 1): self = .principals
        case ("principals", 2): self = .principal(user: segments[1])
        case ("addressbooks", 1): self = .homes
        case ("addressbooks", 2): self = .home(user: segments[1])
        case ("addressbooks", _): self = .member(user: segments[1], components: Array(segments.dropFirst(2)))
        case ("push", 2): self = .pushRegistration(id: segments[1])
        default: return nil
        }
    }

    /// `prefix` is the whole path or its first segments (`/dav` of `/dav/x`, not of `/davx`),
    /// compared without building `prefix + "/"` for every request.
    private static func isPathPrefix(_ prefix: String, of path: Substring) -> Bool {
        guard path.utf8.starts(with: prefix.utf8) else { return false }
        let rest = path.utf8.dropFirst(prefix.utf8.count)
        return rest.isEmpty || rest.first == 0x2F
    }

    /// The user this path belongs to, nil for the shared tops.
    var user: String? {
        switch self {
        case .root, .principals, .homes, .pushRegistration: nil
        case .principal(let user), .home(let user), .member(let user, _): user
        }
    }
}

/// Turns nodes back into hrefs: percent-encoded absolute paths under the proxy prefix.
struct HrefBuilder: Sendable {
    let prefix: String

    init(configuration: DAVConfiguration) {
        prefix = configuration.proxyPrefix + configuration.basePath
    }

    var root: String { prefix + "/" }
    var principals: String { prefix + "/principals/" }
    var homes: String { prefix + "/addressbooks/" }
    func principal(_ user: String) -> String { prefix + "/principals/" + PercentEncoding.encodeSegment(user) + "/" }
    func home(_ user: String) -> String { prefix + "/addressbooks/" + PercentEncoding.encodeSegment(user) + "/" }
    func pushRegistration(_ id: String) -> String { prefix + "/push/" + PercentEncoding.encodeSegment(id) }

    /// A collection's href as its viewer reaches it: through the mount for a sharee.
    func collection(_ info: CollectionInfo) -> String {
        if let mount = info.mount { return home(mount.sharee) + PercentEncoding.encodeSegment(mount.name) + "/" }
        return collection(owner: info.owner, path: info.path)
    }

    func resource(in collection: CollectionInfo, name: String) -> String {
        member(name, ofCollectionHref: self.collection(collection))
    }

    func collection(owner: String, path: [String]) -> String {
        var href = home(owner)
        for component in path { href += PercentEncoding.encodeSegment(component) + "/" }
        return href
    }

    func resource(owner: String, collectionPath: [String], name: String) -> String {
        member(name, ofCollectionHref: collection(owner: owner, path: collectionPath))
    }

    /// The href of a member when its collection's href is known: listings build the
    /// collection part once, not once per card.
    func member(_ name: String, ofCollectionHref collectionHref: String) -> String {
        collectionHref + PercentEncoding.encodeSegment(name)
    }

    func href(for node: Node) -> String {
        switch node {
        case .root: root
        case .principals: principals
        case .homes: homes
        case .principal(let user): principal(user)
        case .home(let user): home(user)
        case .collection(let info): collection(info)
        case .object(let collection, let info, _): resource(in: collection, name: info.name)
        }
    }
}
