import DAVXML
import Foundation
import RoloStore
import VCard

/// The vCard versions the engine stores and can convert to (RFC 6352 supported-address-data).
enum AddressDataFormat: String, Sendable, CaseIterable {
    case v30 = "3.0"
    case v40 = "4.0"

    static let supported: [AddressDataFormat] = [.v30, .v40]

    var vCardVersion: VCardVersion { self == .v30 ? .v30 : .v40 }
}

/// What a `CARDDAV:address-data` element asks for (RFC 6352 §10.4): a vCard version to
/// convert to and a subset of properties. Refuses types it cannot produce with the
/// `supported-address-data-conversion` precondition.
struct AddressDataRequest: Sendable {
    var version: AddressDataFormat?
    /// Property names upper-cased; nil means the whole card.
    var properties: Set<String>?

    init(element: XMLElement?) throws(DAVError) {
        guard let element else { return }
        if let type = element.attribute("content-type"), !Put.isVCardMediaType(type) {
            throw DAVError.precondition(403, .cardDAV("supported-address-data-conversion"),
                                        message: "Cannot produce \(type).")
        }
        if let version = element.attribute("version") {
            guard let format = AddressDataFormat(rawValue: version) else {
                throw DAVError.precondition(403, .cardDAV("supported-address-data-conversion"),
                                            message: "Cannot produce vCard \(version).")
            }
            self.version = format
        }
        if element.child(Namespace.cardDAV, "allprop") == nil {
            let names = element.children(Namespace.cardDAV, "prop").compactMap { $0.attribute("name")?.uppercased() }
            if !names.isEmpty { properties = Set(names) }
        }
    }

    /// The card bytes to return: the stored bytes untouched (not parsed) when nothing is
    /// asked (or the card already has the asked version), else the card converted and
    /// trimmed (VERSION and UID always kept).
    func render(_ body: Data) -> Data {
        guard version != nil || properties != nil else { return body }
        guard var cards = try? VCardParser.parse([UInt8](body)), !cards.isEmpty else { return body }
        let converts = version.map { wanted in cards.contains { $0.version != wanted.vCardVersion } } ?? false
        if !converts && properties == nil { return body }
        for index in cards.indices {
            var card = cards[index]
            if let version, card.version != version.vCardVersion {
                card = VCardConverter.convert(card, to: version.vCardVersion)
            }
            if let properties {
                card.properties.removeAll { !(properties.contains($0.name) || $0.name == "VERSION" || $0.name == "UID") }
            }
            cards[index] = card
        }
        return Data(VCardWriter.write(cards).utf8)
    }
}
