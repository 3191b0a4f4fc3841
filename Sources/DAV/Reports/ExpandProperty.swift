import DAVXML
import RoloStore

/// expand-property (RFC 3253 §3.8), as clients use it for principals: each requested
/// property whose value is an href (current-user-principal, owner, principal-URL,
/// addressbook-home-set…) is replaced by a response for that href with the nested
/// properties. Hrefs outside the user's tree expand to a 404 response.
extension DAVService {
    func expandProperty(_ request: DAVRequest, body: XMLElement, node: Node) async throws -> DAVResponse {
        let href = href(for: node, request: request)
        var multistatus = Multistatus()
        multistatus.add(href: href, propstats: try await expandedPropstats(of: node, href: href, request: request,
                                                                          wanted: body.children(Namespace.dav, "property"),
                                                                          depth: 0))
        return multistatusResponse(multistatus.finish())
    }

    private func expandedPropstats(of node: Node, href: String, request: DAVRequest,
                                   wanted: [XMLElement], depth: Int) async throws -> [Propstat] {
        var found: [(name: PropertyName, value: PropertyValue?)] = []
        var missing: [(name: PropertyName, value: PropertyValue?)] = []
        for element in wanted {
            let name = PropertyName(namespace: element.attribute("namespace") ?? Namespace.dav, name: element.attribute("name") ?? "")
            let nested = element.children(Namespace.dav, "property")
            let propElement = XMLElement(namespace: name.namespace, name: name.name)
            let stats = try await propstats(of: node, href: href, credential: request.credential, request: .prop([propElement]))
            guard let value = stats.first(where: { $0.status == 200 })?.properties.first?.value else {
                missing.append((name, nil)); continue
            }
            guard !nested.isEmpty, depth < 3, case .href(let target) = value else {
                found.append((name, value)); continue
            }
            found.append((name, try await expandedResponse(href: target, request: request, wanted: nested, depth: depth)))
        }
        var result: [Propstat] = []
        if !found.isEmpty { result.append(Propstat(status: 200, properties: found)) }
        if !missing.isEmpty { result.append(Propstat(status: 404, properties: missing)) }
        return result
    }

    /// The `DAV:response` replacing an href: its nested properties, or 404 outside the tree.
    private func expandedResponse(href target: String, request: DAVRequest, wanted: [XMLElement],
                                  depth: Int) async throws -> PropertyValue {
        if let targetPath = PercentEncoding.decode(target),
           let path = try? self.path(targetPath, user: request.user),
           case .found(let targetNode) = try await resolve(path, for: request.credential) {
            let propstats = try await expandedPropstats(of: targetNode, href: target, request: request,
                                                        wanted: wanted, depth: depth + 1)
            return .xml { Multistatus.writeResponse(href: target, propstats: propstats, into: &$0) }
        }
        return .xml { Multistatus.writeResponse(href: target, status: 404, error: nil, into: &$0) }
    }
}
