/// OPTIONS: compliance classes (RFC 4918 class 1 and 3, RFC 6352 `addressbook`,
/// RFC 5689 `extended-mkcol`; no class 2 as there are no locks) and allowed methods.
extension DAVService {
    static let complianceClasses = "1, 3, addressbook, extended-mkcol"

    func options(_ request: DAVRequest) -> DAVResponse {
        DAVResponse(status: 200, headers: [("DAV", Self.complianceClasses), ("Allow", Self.allowedMethods),
                                           ("Content-Length", "0")])
    }
}
