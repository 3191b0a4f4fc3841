import Foundation
import DAVXML
import RoloStore

/// MKCOL (RFC 4918 §9.3) and extended MKCOL (RFC 5689): plain collections anywhere in the
/// home outside address books; address books when the body's resourcetype says so.
extension DAVService {
    func mkcol(_ request: DAVRequest) async throws -> DAVResponse {
        let path = try path(of: request)
        guard case .member(let user, let components) = path else {
            throw DAVError(405, message: "A collection already exists here.")
        }
        let body = try mkcolBody(request)
        var kind = CollectionKind.plain
        var plan: PropertyUpdatePlan?
        if let body {
            guard body.namespace == Namespace.dav, body.name == "mkcol" else {
                throw DAVError(415, message: "MKCOL body must be a DAV:mkcol element.")
            }
            let language = body.language(inheriting: nil)
            let instructions = body.children(Namespace.dav, "set").flatMap { PropertyInstruction.parse($0, language: language) ?? [] }
            let requested = try MkcolRequest(instructions: instructions)
            kind = requested.kind
            plan = requested.plan
            if let failures = requested.failureStatus {
                var xml = XMLWriter()
                xml.element(Namespace.dav, "mkcol-response") { Multistatus.write(failures, into: &$0) }
                xml.raw("\n")
                return DAVResponse(status: 403, headers: [("Content-Type", "application/xml; charset=utf-8")],
                                   body: Data(xml.bytes))
            }
        }

        try await checkLocks(request, path: path, descendants: false)
        if components.count == 1, components[0].contains("~") {
            throw DAVError(403, message: "Names with '~' are kept for shared address books (<book>~<owner>).")
        }
        switch try await resolve(path, for: request.credential) {
        case .found:
            throw DAVError(405, message: "Something already exists at this URL.")
        case .missing(let parent, let parentIsHome, _):
            guard parent != nil || parentIsHome else { throw DAVError.conflict }
            if parent?.kind == .addressBook {
                throw DAVError.precondition(403, .cardDAV("addressbook-collection-location-ok"),
                                            message: "Address books cannot contain collections.")
            }
            try require(.bind, on: parent.map(Node.collection) ?? .home(user), request)
        }
        let created: CollectionInfo
        do {
            created = try await store.createCollection(owner: user, path: components, kind: kind,
                                                       displayName: plan?.displayName ?? nil,
                                                       description: plan?.description ?? nil)
        } catch StoreError.alreadyExists {
            throw DAVError(405, message: "Something already exists at this URL.")
        }
        if let plan, !plan.deadSet.isEmpty {
            try await store.updateDeadProperties(collectionID: created.id, resource: nil, set: plan.deadSet, remove: [])
        }
        return DAVResponse(status: 201, headers: [("Content-Length", "0")])
    }

    /// The request body; a body that is not XML is an unsupported type (415, RFC 5689).
    private func mkcolBody(_ request: DAVRequest) throws(DAVError) -> XMLElement? {
        do {
            return try xmlBody(request)
        } catch {
            guard error.status == 400 else { throw error }
            throw DAVError(415, message: "MKCOL body must be a DAV:mkcol XML document.")
        }
    }
}

/// What an extended MKCOL body asks for: the collection kind and its initial properties.
struct MkcolRequest {
    var kind = CollectionKind.plain
    var plan: PropertyUpdatePlan
    var failureStatus: [Propstat]?

    init(instructions: [PropertyInstruction]) throws(DAVError) {
        var others: [PropertyInstruction] = []
        var typeError: (PropertyName, DAVError)?
        for instruction in instructions {
            guard instruction.name == .dav("resourcetype") else { others.append(instruction); continue }
            let types = Set(instruction.element.children.map { PropertyName(namespace: $0.namespace, name: $0.name) })
            if types == [.dav("collection"), .cardDAV("addressbook")] {
                kind = .addressBook
            } else if types == [.dav("collection")] {
                kind = .plain
            } else {
                typeError = (.dav("resourcetype"), .precondition(403, .dav("valid-resourcetype"),
                                                                 message: "Only collections and address books can be created."))
            }
        }
        // Plan as if for a new collection of the requested kind (ids are not needed to validate).
        let placeholder = CollectionInfo(id: 0, owner: "", path: [], kind: kind, displayName: nil, description: nil,
                                         syncSeq: 0, created: .distantPast, modified: .distantPast)
        plan = PropertyUpdatePlan(instructions: others, node: .collection(placeholder))
        var failures = plan.failures
        if let typeError { failures[typeError.0] = typeError.1 }
        if !failures.isEmpty {
            plan.failures = failures
            if instructions.contains(where: { $0.name == .dav("resourcetype") }) {
                plan.names.insert(.dav("resourcetype"), at: 0)
            }
            failureStatus = plan.failureStatus
        }
    }
}
