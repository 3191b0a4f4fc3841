import DAVXML
import Foundation
import RoloStore

/// A request the engine refuses: an HTTP status, optionally the RFC precondition or
/// postcondition element that names why (rendered as a `DAV:error` body), the `DAV:href`
/// inside that element (e.g. of a conflicting card) and a human-readable message.
struct DAVError: Error, Sendable {
    var status: Int
    var condition: PropertyName?
    /// The resource the condition points at, written as a `DAV:href` inside it.
    var conditionHref: String?
    var message: String?
    /// For `DAV:need-privileges`: the resource and the privilege missing on it.
    var missingPrivilege: (href: String, privilege: String)?
    /// Header fields of the answer besides its content type (`Retry-After` of a 503).
    var headers: [(String, String)] = []

    init(_ status: Int, condition: PropertyName? = nil, conditionHref: String? = nil, message: String? = nil) {
        self.status = status; self.condition = condition
        self.conditionHref = conditionHref; self.message = message
    }

    static func badRequest(_ message: String) -> DAVError { DAVError(400, message: message) }
    static let forbidden = DAVError(403)
    static let notFound = DAVError(404)
    static let conflict = DAVError(409, message: "The parent collection does not exist.")
    static let preconditionFailed = DAVError(412)

    /// 503 with `Retry-After`: the store's database is out of reach for now.
    static func unavailable(_ reason: String) -> DAVError {
        var error = DAVError(503, message: "The database is unavailable (\(reason)); try again later.")
        error.headers = [("Retry-After", String(DAVResponse.unavailableRetryAfter))]
        return error
    }

    static func precondition(_ status: Int, _ condition: PropertyName, message: String? = nil) -> DAVError {
        DAVError(status, condition: condition, message: message)
    }

    /// The `DAV:error` document (or a plain-text message when there is no condition).
    var response: DAVResponse {
        guard condition != nil else {
            let text = message ?? XMLWriter.reasonPhrase(status)
            return DAVResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")] + headers,
                               body: Data((text + "\n").utf8))
        }
        var xml = XMLWriter(reservingCapacity: 256)
        writeErrorElement(into: &xml)
        xml.raw("\n")
        return DAVResponse(status: status, headers: [("Content-Type", "application/xml; charset=utf-8")] + headers,
                           body: Data(xml.bytes))
    }

    /// `<d:error>` with the condition element and the message; nothing without a condition.
    func writeErrorElement(into xml: inout XMLWriter) {
        guard let condition else { return }
        xml.start(Namespace.dav, "error")
        xml.start(condition)
        if let conditionHref { xml.element(Namespace.dav, "href", text: conditionHref) }
        if let missingPrivilege {
            xml.element(Namespace.dav, "resource") { xml in
                xml.element(Namespace.dav, "href", text: missingPrivilege.href)
                xml.element(Namespace.dav, "privilege") { $0.empty(Namespace.dav, missingPrivilege.privilege) }
            }
        }
        xml.end()
        if let message { xml.element(Namespace.rolo, "message", text: message) }
        xml.end()
    }
}

extension DAVError {
    /// The HTTP answer for a storage error that escaped a method's own handling.
    init(_ error: StoreError) {
        switch error {
        case .notFound: self = .notFound
        case .preconditionFailed: self = .preconditionFailed
        case .uidConflict: self = DAVError(409, message: "UID conflict")
        case .alreadyExists: self = DAVError(405, message: "The resource already exists.")
        case .parentNotFound: self = .conflict
        case .userExists: self = DAVError(409, message: "The user exists.")
        case .noSuchUser: self = .notFound
        case .syncTokenTooOld, .invalidSyncToken: self = .precondition(403, .dav("valid-sync-token"))
        case .invalidName(let name): self = DAVError(400, message: "Invalid name: \(name)")
        case .invalid(let reason): self = DAVError(400, message: reason)
        case .unavailable(let reason): self = .unavailable(reason)
        }
    }
}
