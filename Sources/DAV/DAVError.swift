import Foundation
import RoloStore

/// A request the engine refuses: an HTTP status, optionally the RFC precondition or
/// postcondition element that names why (rendered as a `DAV:error` body), extra XML inside
/// that element (e.g. the `DAV:href` of a conflicting card) and a human-readable message.
struct DAVError: Error, Sendable {
    var status: Int
    var condition: PropertyName?
    /// Inner XML of the condition element, already escaped.
    var conditionBody: String
    var message: String?

    init(_ status: Int, condition: PropertyName? = nil, conditionBody: String = "", message: String? = nil) {
        self.status = status; self.condition = condition
        self.conditionBody = conditionBody; self.message = message
    }

    static func badRequest(_ message: String) -> DAVError { DAVError(400, message: message) }
    static let forbidden = DAVError(403)
    static let notFound = DAVError(404)
    static let conflict = DAVError(409, message: "The parent collection does not exist.")
    static let preconditionFailed = DAVError(412)

    static func precondition(_ status: Int, _ condition: PropertyName, message: String? = nil) -> DAVError {
        DAVError(status, condition: condition, message: message)
    }

    /// The `DAV:error` document (or a plain-text message when there is no condition).
    var response: DAVResponse {
        guard let condition else {
            let text = message ?? HTTPStatus.reason(status)
            return DAVResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")],
                               body: Data((text + "\n").utf8))
        }
        var xml = ResponseXMLWriter(reservingCapacity: 256)
        xml.raw("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<D:error \(Namespace.rootDeclarations)>")
        writeCondition(into: &xml, condition: condition)
        xml.raw("</D:error>\n")
        return DAVResponse(status: status, headers: [("Content-Type", "application/xml; charset=utf-8")],
                           body: Data(xml.text.utf8))
    }

    /// The condition element and message, as children of a `DAV:error` element.
    func writeCondition(into xml: inout ResponseXMLWriter, condition: PropertyName) {
        if conditionBody.isEmpty {
            xml.empty(condition)
        } else {
            xml.open(condition); xml.raw(conditionBody); xml.close(condition)
        }
        if let message { xml.element(PropertyName(namespace: Namespace.rolo, name: "message"), text: message) }
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
        }
    }
}
