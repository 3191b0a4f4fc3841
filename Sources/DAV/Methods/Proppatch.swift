import DAVXML
import RoloStore

/// PROPPATCH (RFC 4918 §9.2): all or nothing. Display name and description of stored
/// collections are live and writable (dead elsewhere, e.g. on files); every other live
/// property name is protected on every resource; any other name is a dead property
/// stored verbatim.
extension DAVService {
    func proppatch(_ request: DAVRequest) async throws -> DAVResponse {
        guard let body = try xmlBody(request), body.namespace == Namespace.dav, body.name == "propertyupdate" else {
            throw DAVError.badRequest("Expected DAV:propertyupdate.")
        }
        let path = try path(of: request)
        guard case .found(let node) = try await resolve(path, for: request.credential) else { throw DAVError.notFound }
        try require(.writeProperties, on: node, request)
        try await checkLocks(request, path: path, descendants: false)
        let language = body.language(inheriting: nil)
        let plan = PropertyUpdatePlan(instructions: body.children.compactMap { PropertyInstruction.parse($0, language: language) }
                                        .flatMap { $0 }, node: node)

        var multistatus = Multistatus()
        let href = href(for: node, request: request)
        if !plan.failures.isEmpty {
            multistatus.add(href: href, propstats: plan.failureStatus)
            return multistatusResponse(multistatus.finish())
        }
        try await apply(plan, to: node)
        multistatus.add(href: href, propstats: [Propstat(status: 200, properties: plan.names.map { ($0, nil) })])
        return multistatusResponse(multistatus.finish())
    }

    /// Writes a validated plan: live collection fields, then dead properties.
    func apply(_ plan: PropertyUpdatePlan, to node: Node) async throws {
        if case .collection(let info) = node, let mount = info.mount, let displayName = plan.displayName {
            // A sharee's name for a mount is theirs alone; the owner's book keeps its own.
            try await store.renameMount(sharee: mount.sharee, name: mount.name, displayName: displayName)
            if let description = plan.description {
                try await store.updateCollection(id: info.id, displayName: nil, description: description)
            }
        } else if case .collection(let info) = node, plan.displayName != nil || plan.description != nil {
            try await store.updateCollection(id: info.id, displayName: plan.displayName, description: plan.description)
        }
        if let key = node.deadPropertyKey, !plan.deadSet.isEmpty || !plan.deadRemove.isEmpty {
            try await store.updateDeadProperties(collectionID: key.collectionID, resource: key.resource,
                                                 set: plan.deadSet, remove: plan.deadRemove)
        }
    }
}

/// One `set` or `remove` of one property, in document order.
struct PropertyInstruction: Sendable {
    var element: XMLElement
    var remove: Bool
    /// The `xml:lang` in scope on the property element, which RFC 4918 §4.3 makes part of a
    /// dead property's value: its own, or inherited from `prop`, `set` or the body's root.
    var language: String?

    var name: PropertyName { PropertyName(namespace: element.namespace, name: element.name) }

    /// The instructions of one `DAV:set`/`DAV:remove` element (nil for other elements);
    /// `language` is the `xml:lang` in scope on its parent.
    static func parse(_ element: XMLElement, language: String? = nil) -> [PropertyInstruction]? {
        guard element.namespace == Namespace.dav, element.name == "set" || element.name == "remove" else { return nil }
        let inSet = element.language(inheriting: language)
        return element.children(Namespace.dav, "prop").flatMap { prop in
            let inProp = prop.language(inheriting: inSet)
            return prop.children.map {
                PropertyInstruction(element: $0, remove: element.name == "remove", language: $0.language(inheriting: inProp))
            }
        }
    }

    init(element: XMLElement, remove: Bool, language: String? = nil) {
        self.element = element; self.remove = remove; self.language = language
    }
}

/// A validated property update: what to write, or which properties refuse it.
struct PropertyUpdatePlan: Sendable {
    var names: [PropertyName] = []
    var displayName: String??
    var description: String??
    var deadSet: [DeadProperty] = []
    var deadRemove: [PropertyName] = []
    var failures: [PropertyName: DAVError] = [:]

    init(instructions: [PropertyInstruction], node: Node) {
        let kind = node.kind
        for instruction in instructions {
            let name = instruction.name
            names.append(name)
            let live = PropertyRegistry.byName[name]
            if let live, !live.writable {
                failures[name] = .precondition(403, .dav("cannot-modify-protected-property"))
            } else if let live, live.kinds.contains(kind) {
                guard case .collection = node else {
                    failures[name] = .precondition(403, .dav("cannot-modify-protected-property"))
                    continue
                }
                let value: String? = instruction.remove ? nil : instruction.element.text
                if name == .dav("displayname") { displayName = .some(value) } else { description = .some(value) }
            } else if node.deadPropertyKey == nil {
                failures[name] = .precondition(403, .dav("cannot-modify-protected-property"),
                                               message: "This resource has no writable properties.")
            } else if instruction.remove {
                deadSet.removeAll { $0.name == name }
                deadRemove.append(name)
            } else {
                deadRemove.removeAll { $0 == name }
                deadSet.removeAll { $0.name == name }
                deadSet.append(DeadProperty(name: name, xmlValue: instruction.element.innerXML, language: instruction.language))
            }
        }
        var seen = Set<PropertyName>()
        names = names.filter { seen.insert($0).inserted }
    }

    /// 403 (with the reason) for the refused properties, 424 for the others.
    var failureStatus: [Propstat] {
        var result = failures.map { name, error in Propstat(status: error.status, properties: [(name, nil)], error: error) }
        let dependent = names.filter { failures[$0] == nil }
        if !dependent.isEmpty { result.append(Propstat(status: 424, properties: dependent.map { ($0, nil) })) }
        return result
    }
}
