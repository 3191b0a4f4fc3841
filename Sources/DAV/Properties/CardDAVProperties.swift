import DAVXML
import RoloStore

/// RFC 6352 address book properties.
enum CardDAVProperties {
    static let all: [LiveProperty] = [description, supportedAddressData, maxResourceSize,
                                      supportedCollationSet, addressData]

    static let description = LiveProperty(.cardDAV("addressbook-description"), kinds: [.addressBook],
                                          writable: true) { context in
        guard case .collection(let info) = context.node else { return nil }
        return info.description.map(PropertyValue.text)
    }

    static let supportedAddressData = LiveProperty(.cardDAV("supported-address-data"), kinds: [.addressBook]) { _ in
        .xml { writer in
            for format in AddressDataFormat.supported {
                writer.empty(Namespace.cardDAV, "address-data-type",
                             attributes: [XMLAttribute(name: "content-type", value: format.mediaType),
                                          XMLAttribute(name: "version", value: format.version.rawValue)])
            }
        }
    }

    static let maxResourceSize = LiveProperty(.cardDAV("max-resource-size"), kinds: [.addressBook]) { context in
        .text(String(context.service.configuration.maxResourceSize))
    }

    static let supportedCollationSet = LiveProperty(.cardDAV("supported-collation-set"), kinds: [.addressBook],
                                                    inAllprop: false) { _ in
        .xml { writer in
            for collation in ["i;ascii-casemap", "i;unicode-casemap", "i;octet"] {
                writer.element(Namespace.cardDAV, "supported-collation", text: collation)
            }
        }
    }

    /// The card itself (RFC 6352 §10.4), converted or trimmed as the element asks.
    static let addressData = LiveProperty(.cardDAV("address-data"), kinds: [.card], inAllprop: false) { context in
        guard case .object(let collection, let info, let preloaded) = context.node else { return nil }
        var body = preloaded
        if body == nil { body = try await context.store.resource(collectionID: collection.id, name: info.name)?.data }
        guard let body else { return nil }
        let request = try AddressDataRequest(element: context.element)
        return .utf8(request.render(body))
    }
}
