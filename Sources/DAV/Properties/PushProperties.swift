import DAVXML
import RoloStore

/// WebDAV-Push discovery (draft-bitfire-webdav-push): on address books only, named only
/// (not in `allprop`), and protected. DAVx5 reads `transports` and `topic` in its Depth 1
/// PROPFIND of the home and counts a book as push-capable when both are there.
enum PushProperties {
    static let namespace = "https://bitfire.at/webdav-push"
    static let all: [LiveProperty] = [transports, topic, supportedTriggers]

    static let transports = LiveProperty(PropertyName(namespace: namespace, name: "transports"), kinds: [.addressBook],
                                         inAllprop: false) { context in
        guard let push = context.service.configuration.push else { return nil }
        return .xml { writer in
            writer.element(namespace, "web-push") { writer in
                writer.start(namespace, "vapid-public-key", attributes: [XMLAttribute(name: "type", value: "p256ecdsa")])
                writer.text(push.vapidPublicKey)
                writer.end()
            }
        }
    }

    /// Random per book and the same through every mount of it: the push message names the
    /// book by it, and a rename keeps it.
    static let topic = LiveProperty(PropertyName(namespace: namespace, name: "topic"), kinds: [.addressBook],
                                    inAllprop: false) { context in
        guard context.service.configuration.push != nil, case .collection(let info) = context.node else { return nil }
        return .text(try await context.store.pushTopic(collectionID: info.id))
    }

    static let supportedTriggers = LiveProperty(PropertyName(namespace: namespace, name: "supported-triggers"),
                                                kinds: [.addressBook], inAllprop: false) { context in
        guard context.service.configuration.push != nil else { return nil }
        return .xml { writer in
            writer.element(namespace, "content-update") { $0.element(Namespace.dav, "depth", text: "1") }
        }
    }
}
