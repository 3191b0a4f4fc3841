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
        var found: [(name: PropertyName, value: String?)] = []
        var missing: [(name: PropertyName, value: String?)] = []
        for element in wanted {
            let name = PropertyName(namespace: element.attribute("namespace") ?? Namespace.dav, name: element.attribute("name") ?? "")
            let nested = element.children(Namespace.dav, "property")
            let propElement = XMLElement(namespace: name.namespace, name: name.name)
            let stats = try await propstats(of: node, href: href, user: request.user, request: .prop([propElement]))
            guard let value = stats.first(where: { $0.status == 200 })?.properties.first?.value else {
                missing.append((name, nil)); continue
            }
            guard !nested.isEmpty, depth < 3, value.contains("<D:href>") else {
                found.append((name, value)); continue
            }
            var expanded = ResponseXMLWriter()
            for target in Self.hrefs(in: value) {
                var inner = Multistatus.fragment()
                if let targetPath = PercentEncoding.decode(target),
                   let path = try? self.path(targetPath, user: request.user),
                   case .found(let targetNode) = try await resolve(path) {
                    let propstats = try await expandedPropstats(of: targetNode, href: target, request: request,
                                                                wanted: nested, depth: depth + 1)
                    inner.add(href: target, propstats: propstats)
                } else {
                    inner.add(href: target, status: 404)
                }
                expanded.raw(inner.fragmentText)
            }
            found.append((name, expanded.text))
        }
        var result: [Propstat] = []
        if !found.isEmpty { result.append(Propstat(status: 200, properties: found)) }
        if !missing.isEmpty { result.append(Propstat(status: 404, properties: missing)) }
        return result
    }

    /// The (escaped-free) contents of each `<D:href>` in a property value we wrote.
    static func hrefs(in value: String) -> [String] {
        value.components(separatedBy: "<D:href>").dropFirst().compactMap { part in
            part.components(separatedBy: "</D:href>").first.map {
                $0.replacingOccurrences(of: "&amp;", with: "&").replacingOccurrences(of: "&lt;", with: "<")
                    .replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&quot;", with: "\"")
            }
        }
    }
}
