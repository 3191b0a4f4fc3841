import Authorization
import DAVXML
import Foundation
import RoloStore

/// The RFC 3744 §9 reports: finding principals (to pick a sharee) and reading who has
/// access to a book.
///
/// Another user's principal stays invisible to PROPFIND (404, see `path(_:user:)`); these
/// reports are the only way to learn of one, and they show it only through
/// `otherPrincipalProperties` (its name, display name, e-mail address and URL). Every other
/// property of another user's principal (their address book home above all) answers 404.
extension DAVService {
    /// At most this many principals answer a search; more are cut with a 507 response.
    static let principalSearchLimit = 50

    /// What `principal-property-search` matches on, with the descriptions
    /// `principal-search-property-set` gives. `displayname` also matches the user name (the
    /// display name of a user without one).
    static let searchableProperties: [(name: PropertyName, description: String)] = [
        (.dav("displayname"), "Display name or user name"),
        (.calendarServer("email-address-set"), "E-mail address"),
    ]

    /// The properties of another user's principal these reports show.
    static let otherPrincipalProperties: [PropertyName] = [
        .dav("displayname"), .calendarServer("email-address-set"), .dav("resourcetype"), .dav("principal-URL"),
    ]

    // MARK: principal-property-search (§9.4)

    func principalPropertySearch(_ request: DAVRequest, body: XMLElement, node: Node) async throws -> DAVResponse {
        try requireDepthZero(request, report: "principal-property-search")
        let onPrincipals: Bool
        switch node {
        case .root, .principals, .principal: onPrincipals = true
        default: onPrincipals = body.child(Namespace.dav, "apply-to-principal-collection-set") != nil
        }
        guard onPrincipals else {
            throw DAVError.precondition(403, .dav("supported-report"),
                                        message: "principal-property-search runs on the principal collection \(hrefs.principals).")
        }
        // Searching is for picking a sharee, an account action.
        if case .denied(let denied) = Access.decide(.searchUsers, by: .user(request.credential, admin: false)) {
            throw DAVError(403, message: denied.message)
        }
        let search = try PrincipalSearch(body)

        // The store's search is a superset per text (name, display name or e-mail contains
        // it); the exact test runs here.
        var candidates: [String: UserAccount] = [:]
        for text in Set(search.terms.map(\.match)) {
            for account in try await store.searchAccounts(matching: text, limit: Self.principalSearchLimit * 8) {
                candidates[account.name] = account
            }
        }
        let matches = candidates.values.filter(search.matches).sorted { $0.name < $1.name }

        let properties = try PropertyRequest(report: body)
        var multistatus = Multistatus()
        for account in matches.prefix(Self.principalSearchLimit) {
            multistatus.add(href: hrefs.principal(account.name),
                            propstats: try await principalPropstats(of: account.name, request: request, properties: properties))
        }
        if matches.count > Self.principalSearchLimit {
            multistatus.addTruncation(href: href(for: node, request: request))
        }
        return multistatusResponse(multistatus.finish())
    }

    // MARK: principal-search-property-set (§9.5)

    func principalSearchPropertySet(_ request: DAVRequest, body: XMLElement, node: Node) async throws -> DAVResponse {
        try requireDepthZero(request, report: "principal-search-property-set")
        switch node {
        case .root, .principals, .principal: break
        default:
            throw DAVError.precondition(403, .dav("supported-report"),
                                        message: "principal-search-property-set runs on the principal collection \(hrefs.principals).")
        }
        var xml = XMLWriter(reservingCapacity: 512)
        xml.start(Namespace.dav, "principal-search-property-set")
        for (name, description) in Self.searchableProperties {
            xml.element(Namespace.dav, "principal-search-property") { property in
                property.element(Namespace.dav, "prop") { $0.empty(name) }
                property.element(Namespace.dav, "description", attributes: [XMLAttribute(name: "xml:lang", value: "en")]) {
                    $0.text(description)
                }
            }
        }
        xml.end()
        xml.raw("\n")
        return DAVResponse(status: 200, headers: [("Content-Type", Self.multistatusContentType)], body: Data(xml.bytes))
    }

    // MARK: principal-match (§9.3)

    /// `self`: the current user's principal, where the request's collection holds it (the
    /// principal collection, the root, the user's principal). `principal-property`: the
    /// members of the collection whose property is an href to the current user's principal
    /// (e.g. `DAV:owner`): a home's books and mounts, a book's cards (all of an own book's,
    /// none of a mount's, whose owner is someone else), a card itself.
    func principalMatch(_ request: DAVRequest, body: XMLElement, node: Node) async throws -> DAVResponse {
        try requireDepthZero(request, report: "principal-match")
        let me = hrefs.principal(request.user)
        let wantsProperties = body.child(Namespace.dav, "prop") != nil
        let properties = try PropertyRequest(report: body)
        let credential = request.credential

        if body.child(Namespace.dav, "self") != nil {
            var multistatus = Multistatus()
            switch node {
            case .root, .principals, .principal:
                try await addMatch(.principal(request.user), href: me, request: request, properties: wantsProperties ? properties : nil,
                                   to: &multistatus)
            default:
                break // No principals below a home.
            }
            return multistatusResponse(multistatus.finish())
        }
        guard let property = body.child(Namespace.dav, "principal-property")?.children.first else {
            throw DAVError.badRequest("principal-match needs DAV:self or a DAV:principal-property naming one property.")
        }
        let name = XMLElement(namespace: property.namespace, name: property.name)

        /// Whether `node`'s property names the current user.
        @Sendable func namesMe(_ node: Node) async throws -> Bool {
            let stats = try await propstats(of: node, href: hrefs.href(for: node), credential: credential, request: .prop([name]))
            guard case .href(let href)? = stats.first(where: { $0.status == 200 })?.properties.first?.value else { return false }
            return href == me
        }

        switch node {
        case .collection(let collection):
            // A listing of any size: the members page by page, as PROPFIND Depth 1 lists them.
            let collectionHref = hrefs.href(for: node)
            let memberPrefix = EscapedHref(collectionHref)
            let withBodies = wantsProperties && properties.wantsBodies
            let writer: ItemWriter<StoredResource>
            if wantsProperties {
                let rows = collection.kind == .addressBook ? CardResponseWriter(properties, withBodies: withBodies) : nil
                writer = memberWriter(in: collection, collectionHref: memberPrefix, rows: rows, properties: properties,
                                      credential: credential) { $0 }
            } else {
                writer = .rows { [hrefs] card, multistatus in
                    multistatus.add(href: hrefs.member(card.info.name, ofCollectionHref: collectionHref), status: 200)
                }
            }
            let pages = MatchingMemberPages(
                BookPages(store: store, collectionID: collection.id, withBodies: withBodies, pageSize: configuration.listingPageSize,
                          bodyLimit: configuration.pageBodyLimit)
            ) { card in try await namesMe(.object(collection, card.info, nil)) }
            return try await pagedMultistatus(Multistatus(), pages: pages, writer: writer,
                                              reads: CardReads(request, book: collection.id, withBodies: withBodies))
        case .home(let owner):
            var multistatus = Multistatus()
            let own = try await store.childCollections(owner: owner, parentPath: [])
            let mounted = try await store.mounts(sharee: owner)
            for member in (own + mounted).map(Node.collection)
            where Access.privileges(on: member, for: credential) != nil {
                if try await namesMe(member) {
                    try await addMatch(member, href: hrefs.href(for: member), request: request,
                                       properties: wantsProperties ? properties : nil, to: &multistatus)
                }
            }
            return multistatusResponse(multistatus.finish())
        case .object:
            var multistatus = Multistatus()
            if try await namesMe(node) {
                try await addMatch(node, href: hrefs.href(for: node), request: request,
                                   properties: wantsProperties ? properties : nil, to: &multistatus)
            }
            return multistatusResponse(multistatus.finish())
        case .root, .principals, .principal:
            // The one principal here this user may see is their own.
            var multistatus = Multistatus()
            if try await namesMe(.principal(request.user)) {
                try await addMatch(.principal(request.user), href: me, request: request,
                                   properties: wantsProperties ? properties : nil, to: &multistatus)
            }
            return multistatusResponse(multistatus.finish())
        case .homes:
            var multistatus = Multistatus()
            return multistatusResponse(multistatus.finish())
        }
    }

    private func addMatch(_ node: Node, href: String, request: DAVRequest, properties: PropertyRequest?,
                          to multistatus: inout Multistatus) async throws {
        guard let properties else { multistatus.add(href: href, status: 200); return }
        multistatus.add(href: href, propstats: try await propstats(of: node, href: href, credential: request.credential,
                                                                   request: properties))
    }

    // MARK: acl-principal-prop-set (§9.2)

    /// The requested properties of every principal in the resource's `DAV:acl`. Needs
    /// `read-acl`, which only the owner holds: a sharee gets 403 `need-privileges`.
    func aclPrincipalPropSet(_ request: DAVRequest, body: XMLElement, node: Node) async throws -> DAVResponse {
        try requireDepthZero(request, report: "acl-principal-prop-set")
        let collection: CollectionInfo
        switch node {
        case .collection(let info), .object(let info, _, _): collection = info
        default:
            throw DAVError.precondition(403, .dav("supported-report"),
                                        message: "acl-principal-prop-set runs on a book, a collection or a card.")
        }
        try require(.readACL, on: node, request)
        let properties = try PropertyRequest(report: body)
        var seen: Set<String> = []
        var multistatus = Multistatus()
        for grant in try await AccessProperties.grants(on: collection, seenBy: request.user, store: store) {
            guard seen.insert(grant.principal).inserted else { continue }
            multistatus.add(href: hrefs.principal(grant.principal),
                            propstats: try await principalPropstats(of: grant.principal, request: request, properties: properties))
        }
        return multistatusResponse(multistatus.finish())
    }

    // MARK: Shared plumbing

    /// These reports are defined for `Depth: 0` only (absent means 0 for REPORT).
    private func requireDepthZero(_ request: DAVRequest, report: String) throws(DAVError) {
        guard try Depth(request.headers["depth"], default: .zero) == .zero else {
            throw DAVError.badRequest("\(report) needs Depth: 0.")
        }
    }

    /// A principal's propstats as the requesting user may see them: their own principal in
    /// full, another user's only through `otherPrincipalProperties` (the rest 404).
    func principalPropstats(of user: String, request: DAVRequest, properties: PropertyRequest) async throws -> [Propstat] {
        let node = Node.principal(user)
        let href = hrefs.principal(user)
        if user == request.user {
            return try await propstats(of: node, href: href, credential: request.credential, request: properties)
        }
        let shown = Set(Self.otherPrincipalProperties)
        switch properties {
        case .propname:
            return [Propstat(status: 200, properties: Self.otherPrincipalProperties.map { ($0, nil) })]
        case .allprop:
            let elements = Self.otherPrincipalProperties.map { XMLElement(namespace: $0.namespace, name: $0.name) }
            let stats = try await propstats(of: node, href: href, credential: request.credential, request: .prop(elements))
            return [stats.first { $0.status == 200 } ?? Propstat(status: 200, properties: [])]
        case .prop(let elements):
            func name(_ element: XMLElement) -> PropertyName { PropertyName(namespace: element.namespace, name: element.name) }
            let allowed = elements.filter { shown.contains(name($0)) }
            let hidden = elements.filter { !shown.contains(name($0)) }.map { (name: name($0), value: PropertyValue?.none) }
            var stats: [Propstat] = []
            if !allowed.isEmpty {
                stats = try await propstats(of: node, href: href, credential: request.credential, request: .prop(allowed))
            }
            if !hidden.isEmpty {
                if let index = stats.firstIndex(where: { $0.status == 404 }) {
                    stats[index].properties += hidden
                } else {
                    stats.append(Propstat(status: 404, properties: hidden))
                }
            }
            return stats.isEmpty ? [Propstat(status: 200, properties: [])] : stats
        }
    }
}

/// A parsed `principal-property-search`: (property, match) terms combined by `test`.
struct PrincipalSearch: Sendable {
    enum MatchType: String, Sendable { case contains, startsWith = "starts-with", equals, endsWith = "ends-with" }

    struct Term: Sendable {
        var property: PropertyName
        var match: String
        var matchType: MatchType
    }

    var terms: [Term]
    /// `allof` (RFC 3744: every term) unless `test="anyof"` (any term).
    var anyOf: Bool

    init(_ body: XMLElement) throws(DAVError) {
        let searches = body.children(Namespace.dav, "property-search")
        guard !searches.isEmpty else {
            throw DAVError.badRequest("principal-property-search needs at least one DAV:property-search.")
        }
        switch body.attribute("test") ?? "allof" {
        case "allof": anyOf = false
        case "anyof": anyOf = true
        case let other: throw DAVError.badRequest("Unknown test \"\(other)\": use anyof or allof.")
        }
        terms = []
        for search in searches {
            guard let matchElement = search.child(Namespace.dav, "match") else {
                throw DAVError.badRequest("Every DAV:property-search needs a DAV:match.")
            }
            let text = matchElement.text.trimmingXMLWhitespace
            guard !text.isEmpty else { throw DAVError.badRequest("An empty DAV:match would list every user.") }
            let type: MatchType
            if let raw = matchElement.attribute("match-type") {
                guard let known = MatchType(rawValue: raw) else {
                    throw DAVError.badRequest("Unknown match-type \"\(raw)\": use contains, starts-with, equals or ends-with.")
                }
                type = known
            } else {
                type = .contains
            }
            let properties = search.child(Namespace.dav, "prop")?.children ?? []
            guard !properties.isEmpty else { throw DAVError.badRequest("Every DAV:property-search needs a DAV:prop.") }
            for property in properties {
                terms.append(Term(property: PropertyName(namespace: property.namespace, name: property.name),
                                  match: text, matchType: type))
            }
        }
        let searchable = Set(DAVService.searchableProperties.map(\.name))
        guard terms.contains(where: { searchable.contains($0.property) }) else {
            let names = DAVService.searchableProperties.map { "{\($0.name.namespace)}\($0.name.name)" }.joined(separator: ", ")
            throw DAVError.badRequest("None of the searched properties can be searched; these can: \(names).")
        }
    }

    /// Whether the account satisfies the search; a term on a property that cannot be
    /// searched matches nothing.
    func matches(_ account: UserAccount) -> Bool {
        anyOf ? terms.contains { $0.matches(account) } : terms.allSatisfy { $0.matches(account) }
    }
}

extension PrincipalSearch.Term {
    func matches(_ account: UserAccount) -> Bool {
        let values: [String]
        switch property {
        case .dav("displayname"): values = [account.name] + (account.displayName.map { [$0] } ?? [])
        case .calendarServer("email-address-set"): values = account.email.map { [$0] } ?? []
        default: values = []
        }
        let wanted = match.lowercased()
        return values.contains { value in
            let value = value.lowercased()
            switch matchType {
            case .contains: return value.contains(wanted)
            case .startsWith: return value.hasPrefix(wanted)
            case .equals: return value == wanted
            case .endsWith: return value.hasSuffix(wanted)
            }
        }
    }
}

/// The members of a collection whose `keep` holds, a page at a time.
struct MatchingMemberPages: ListingPages {
    private var base: BookPages
    let keep: @Sendable (StoredResource) async throws -> Bool
    var isFinished: Bool { base.isFinished }

    init(_ base: BookPages, keep: @escaping @Sendable (StoredResource) async throws -> Bool) {
        self.base = base; self.keep = keep
    }

    mutating func nextPage() async throws -> [StoredResource] {
        var kept: [StoredResource] = []
        for item in try await base.nextPage() where try await keep(item) { kept.append(item) }
        return kept
    }
}
