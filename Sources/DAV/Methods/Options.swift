/// OPTIONS: compliance classes (RFC 4918 classes 1, 2 and 3, RFC 6352 `addressbook`,
/// RFC 5689 `extended-mkcol`) and allowed methods.
extension DAVService {
    static let complianceClasses = "1, 2, 3, addressbook, extended-mkcol"

    func options(_ request: DAVRequest) -> DAVResponse {
        DAVResponse(status: 200, headers: [("DAV", Self.complianceClasses), ("Allow", Self.allowedMethods),
                                           ("Content-Length", "0")])
    }
}
