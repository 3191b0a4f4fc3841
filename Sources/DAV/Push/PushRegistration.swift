import DAVXML
import Foundation
import RoloStore
import WebPush

/// WebDAV-Push registration (draft-bitfire-webdav-push): POST of `push-register` on an
/// address book creates or renews a registration; DELETE of the registration URL removes
/// it. What is registered is checked here, before anything is stored: the server will
/// later POST to the URL a client chose, with the keys it sent.
extension DAVService {
    static let pushNamespace = PushProperties.namespace

    func post(_ request: DAVRequest) async throws -> DAVResponse {
        let path = try path(of: request)
        guard case .found(let node) = try await resolve(path, for: request.credential) else { throw DAVError.notFound }
        guard case .collection(let book) = node, book.kind == .addressBook else {
            throw DAVError(405, message: "POST is accepted on address books only (WebDAV-Push push-register).")
        }
        guard let body = try xmlBody(request) else {
            throw DAVError.badRequest("POST on an address book takes a WebDAV-Push push-register body.")
        }
        guard body.namespace == Self.pushNamespace, body.name == "push-register" else {
            throw DAVError(415, message: "POST on an address book takes a WebDAV-Push push-register body, not {\(body.namespace)}\(body.name).")
        }
        try require(.read, on: node, request)
        guard let push = configuration.push else {
            throw Self.pushError("push-not-available", "Push is not enabled on this server (it needs its public URL).")
        }
        let registration = try PushRegisterBody(body, targets: push.targets)
        let expires = push.grantedExpiry(requested: registration.expires, now: push.clock.now)
        let stored: PushRegistration
        do {
            stored = try await store.registerPush(PushRegistrationRequest(
                user: request.user, collectionID: book.id, credentialID: request.credential.appPasswordID,
                pushResource: registration.pushResource, publicKey: registration.keys.publicKey,
                authSecret: registration.keys.authSecret, expires: expires), limit: push.registrationsPerBook)
        } catch StoreError.invalid(let reason) {
            throw Self.pushError("push-not-available", reason)
        }
        request.tally?.book(book.id)
        return DAVResponse(status: 204, headers: [
            ("Location", push.publicOrigin + hrefs.pushRegistration(stored.id)),
            ("Expires", HTTPDate.rfc1123(stored.expires)),
        ])
    }

    /// DELETE of a registration URL: 204 for its owner; 404 for anyone else and for an
    /// unknown or expired one, so that nothing tells a stranger a registration exists.
    func deletePushRegistration(id: String, _ request: DAVRequest) async throws -> DAVResponse {
        guard try await store.deletePushRegistration(id: id, user: request.user) else { throw DAVError.notFound }
        return DAVResponse(status: 204)
    }

    /// 403 with the draft's condition element (in the push namespace) and why.
    static func pushError(_ condition: String, _ message: String) -> DAVError {
        DAVError(403, condition: PropertyName(namespace: pushNamespace, name: condition), message: message)
    }
}

/// A `push-register` body, read leniently where DAVx5 needs it (no `trigger`, no
/// `content-encoding`: content updates of depth 1, aes128gcm) and strictly where the
/// server's safety does (the push resource, the keys).
struct PushRegisterBody {
    var pushResource: String
    var keys: SubscriptionKeys
    var expires: Date?

    init(_ root: XMLElement, targets: PushTarget.Policy) throws(DAVError) {
        let ns = DAVService.pushNamespace
        func invalid(_ message: String) -> DAVError { DAVService.pushError("invalid-subscription", message) }
        guard let subscription = root.child(ns, "subscription")?.child(ns, "web-push-subscription") else {
            throw invalid("Only web-push subscriptions are supported: subscription/web-push-subscription is missing.")
        }
        guard let resource = subscription.child(ns, "push-resource")?.text.trimmingCharacters(in: .whitespacesAndNewlines),
              !resource.isEmpty else {
            throw invalid("push-resource is missing.")
        }
        do {
            pushResource = try PushTarget.validate(resource, policy: targets).absoluteString
        } catch {
            throw invalid("push-resource refused: \(error)")
        }
        if let encoding = subscription.child(ns, "content-encoding")?.text.trimmingCharacters(in: .whitespacesAndNewlines),
           encoding.lowercased() != "aes128gcm" {
            throw invalid("content-encoding \(encoding) is not supported; only aes128gcm (RFC 8291) is.")
        }
        // The draft renamed client-public-key to subscription-public-key; both are read.
        guard let key = subscription.child(ns, "subscription-public-key") ?? subscription.child(ns, "client-public-key"),
              let secret = subscription.child(ns, "auth-secret") else {
            throw invalid("Messages are always encrypted: subscription-public-key and auth-secret are required.")
        }
        if let type = key.attribute("type"), type != "p256dh" {
            throw invalid("subscription-public-key type \(type) is not supported; only p256dh is.")
        }
        do {
            keys = try SubscriptionKeys(publicKeyBase64URL: key.text.trimmingCharacters(in: .whitespacesAndNewlines),
                                        authSecretBase64URL: secret.text.trimmingCharacters(in: .whitespacesAndNewlines))
        } catch {
            throw invalid("\(error)")
        }
        if let trigger = root.child(ns, "trigger") {
            // Content updates are what Rolo sends (depth 1 and infinity are the same for a
            // book, whose members are all cards); a property-update alone gets nothing.
            guard trigger.child(ns, "content-update") != nil else {
                throw DAVService.pushError("no-supported-trigger", "Only content-update triggers are supported.")
            }
        }
        expires = root.child(ns, "expires").flatMap { HTTPDate.parseIMFFixdate($0.text) }
    }
}

/// `Push-Dont-Notify` (a list of quoted registration URLs, or `*`): what a client sends
/// with its own write so that it is not woken for it. Unknown or malformed entries are
/// ignored; only the writer's own registrations can be named (checked when sending).
enum PushDontNotify {
    static func exclusion(_ header: String, user: String, configuration: DAVConfiguration) -> PushExclusion? {
        let trimmed = header.trimmingCharacters(in: .whitespaces)
        if trimmed == "*" { return .everyone }
        var ids: Set<String> = []
        for item in trimmed.split(separator: ",") {
            var text = item.trimmingCharacters(in: .whitespaces)
            guard text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") else { continue }
            text = String(text.dropFirst().dropLast())
            let rawPath = URL(string: text)?.path ?? text
            guard let path = ResourcePath(path: rawPath.removingPercentEncoding ?? rawPath, configuration: configuration),
                  case .pushRegistration(let id) = path else { continue }
            ids.insert(id)
        }
        return ids.isEmpty ? nil : .registrations(user: user, ids: ids)
    }
}
