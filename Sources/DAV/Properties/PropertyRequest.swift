import Authorization
import DAVXML
import RoloStore

/// Which properties a PROPFIND or REPORT asks for.
enum PropertyRequest: Sendable {
    case allprop(include: [XMLElement])
    case propname
    case prop([XMLElement])

    /// From a `DAV:propfind` element; nil element (empty body) means allprop.
    init(propfind element: XMLElement?) throws(DAVError) {
        guard let element else { self = .allprop(include: []); return }
        guard element.namespace == Namespace.dav, element.name == "propfind" else {
            throw .badRequest("Expected DAV:propfind.")
        }
        try Self.requireOneKind(in: element)
        if let prop = element.child(Namespace.dav, "prop") {
            self = .prop(prop.children)
        } else if element.child(Namespace.dav, "propname") != nil {
            self = .propname
        } else if element.child(Namespace.dav, "allprop") != nil {
            self = .allprop(include: element.child(Namespace.dav, "include")?.children ?? [])
        } else {
            throw .badRequest("DAV:propfind needs prop, propname or allprop.")
        }
    }

    /// From the `DAV:prop` child of a REPORT body; absent means allprop.
    init(report element: XMLElement) throws(DAVError) {
        try Self.requireOneKind(in: element)
        if let prop = element.child(Namespace.dav, "prop") {
            self = .prop(prop.children)
        } else if element.child(Namespace.dav, "propname") != nil {
            self = .propname
        } else {
            self = .allprop(include: [])
        }
    }

    /// RFC 4918's `propfind` and every REPORT body Rolo serves (RFC 6352's, RFC 6578's,
    /// RFC 3744's) hold at most one of `prop`, `allprop` and `propname`: a body with two
    /// asks for two answers, and gets 400 rather than whichever the server picks.
    private static func requireOneKind(in element: XMLElement) throws(DAVError) {
        let kinds = element.children.filter {
            $0.namespace == Namespace.dav && ($0.name == "prop" || $0.name == "allprop" || $0.name == "propname")
        }
        guard kinds.count <= 1 else {
            throw .badRequest("\(element.name) holds \(kinds.map { "DAV:" + $0.name }.joined(separator: " and ")): at most one of prop, allprop and propname.")
        }
    }

    /// The `address-data` element asked for, if any (validated before a report runs).
    var addressDataElement: XMLElement? {
        guard case .prop(let elements) = self else { return nil }
        return elements.first { $0.namespace == Namespace.cardDAV && $0.name == "address-data" }
    }

    var wantsBodies: Bool { addressDataElement != nil }
}

extension DAVService {
    /// The propstats of one node: found properties (200) and absent ones (404).
    func propstats(of node: Node, href: String, credential: Credential, request: PropertyRequest) async throws -> [Propstat] {
        let kind = node.kind
        var found: [(name: PropertyName, value: PropertyValue?)] = []
        var missing: [(name: PropertyName, value: PropertyValue?)] = []
        var deadCache: [DeadProperty]?

        func deadProperties() async throws -> [DeadProperty] {
            if let deadCache { return deadCache }
            var loaded: [DeadProperty] = []
            if let key = node.deadPropertyKey {
                loaded = try await store.deadProperties(collectionID: key.collectionID, resource: key.resource)
            }
            deadCache = loaded
            return loaded
        }

        func context(_ element: XMLElement?) -> PropertyContext {
            PropertyContext(service: self, credential: credential, node: node, href: href, element: element)
        }

        func evaluate(_ elements: [XMLElement]) async throws {
            for element in elements {
                let name = PropertyName(namespace: element.namespace, name: element.name)
                if let live = PropertyRegistry.property(name, for: kind) {
                    if let value = try await live.value(context(element)) {
                        found.append((name, value))
                    } else {
                        missing.append((name, nil))
                    }
                } else if PropertyRegistry.byName[name]?.writable == false {
                    // Protected on every resource (PROPPATCH refuses it), so never a dead
                    // property: no read of them for a collection's DAV:getetag.
                    missing.append((name, nil))
                } else if let dead = try await deadProperties().first(where: { $0.name == name }) {
                    found.append((name, .dead(xml: dead.xmlValue, language: dead.language)))
                } else {
                    missing.append((name, nil))
                }
            }
        }

        switch request {
        case .propname:
            found = PropertyRegistry.properties(for: kind).map { ($0.name, nil) }
            found += try await deadProperties().map { ($0.name, nil) }
        case .allprop(let include):
            for live in PropertyRegistry.properties(for: kind) where live.inAllprop {
                if let value = try await live.value(context(nil)) { found.append((live.name, value)) }
            }
            found += try await deadProperties().map { ($0.name, .dead(xml: $0.xmlValue, language: $0.language)) }
            let already = Set(found.map(\.name))
            try await evaluate(include.filter { !already.contains(PropertyName(namespace: $0.namespace, name: $0.name)) })
        case .prop(let elements):
            try await evaluate(elements)
        }
        var result: [Propstat] = []
        if !found.isEmpty { result.append(Propstat(status: 200, properties: found)) }
        if !missing.isEmpty { result.append(Propstat(status: 404, properties: missing)) }
        if result.isEmpty { result.append(Propstat(status: 200, properties: [])) }
        return result
    }
}
