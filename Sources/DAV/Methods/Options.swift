/// OPTIONS: compliance classes (RFC 4918 classes 1, 2 and 3, RFC 6352 `addressbook`,
/// RFC 5689 `extended-mkcol`) and allowed methods; `webdav-push` on the address books a
/// push registration may be made on.
extension DAVService {
    static let complianceClasses = "1, 2, 3, addressbook, extended-mkcol"

    func options(_ request: DAVRequest) async -> DAVResponse {
        var classes = Self.complianceClasses
        if configuration.push != nil, await isAddressBook(request) { classes += ", webdav-push" }
        return DAVResponse(status: 200, headers: [("DAV", classes), ("Allow", Self.allowedMethods), ("Content-Length", "0")])
    }

    /// Whether the request path is an address book the credential can see; OPTIONS
    /// answers every path, so a failed lookup only means "no".
    private func isAddressBook(_ request: DAVRequest) async -> Bool {
        guard let path = try? path(of: request), case .member(_, let components) = path, !components.isEmpty,
              case .found(let node)? = try? await resolve(path, for: request.credential) else { return false }
        return node.kind == .addressBook
    }
}
