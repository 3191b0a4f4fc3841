import DAVXML
import Foundation
import RoloStore
import VCard

/// The forms the engine stores cards in and can serve them in, as `supported-address-data`
/// advertises them (RFC 6352 §6.2.2): vCard 3.0 and 4.0, and jCard (RFC 7095), which is
/// vCard 4.0 as JSON.
struct AddressDataFormat: Sendable, Hashable {
    var form: CardMediaType
    var version: VCardVersion

    static let supported: [AddressDataFormat] = [
        AddressDataFormat(form: .vCard, version: .v30),
        AddressDataFormat(form: .vCard, version: .v40),
        AddressDataFormat(form: .jCard, version: .v40),
    ]

    /// The media type as advertised: `text/vcard` or `application/vcard+json`, no parameters.
    var mediaType: String { form == .vCard ? "text/vcard" : CardMediaType.jCardContentType }
}

/// What a `CARDDAV:address-data` element asks for (RFC 6352 §10.4): a form (vCard or jCard),
/// a vCard version to convert to and a subset of properties. A content type or version the
/// engine does not serve breaks the report's `CARDDAV:supported-address-data` precondition
/// (RFC 6352 §8.6, §8.7): 403 before anything is answered.
struct AddressDataRequest: Sendable {
    var form: CardMediaType = .vCard
    /// The version asked for; nil keeps each card's own (jCard is always 4.0).
    var version: VCardVersion?
    /// Property names upper-cased; nil means the whole card.
    var properties: Set<String>?

    init(element: XMLElement?) throws(DAVError) {
        guard let element else { return }
        if let type = element.attribute("content-type") {
            guard let form = CardMediaType(mediaType: type) else {
                throw Self.unsupported("Cannot produce \(type); address data is text/vcard or \(CardMediaType.jCardContentType).")
            }
            self.form = form
        }
        if let text = element.attribute("version") {
            let version = VCardVersion(rawValue: text.trimmingCharacters(in: .whitespaces))
            guard let version, AddressDataFormat.supported.contains(AddressDataFormat(form: form, version: version)) else {
                throw Self.unsupported("Cannot produce \(AddressDataFormat(form: form, version: .v40).mediaType) version \(text).")
            }
            self.version = version
        }
        if form == .jCard { version = .v40 }
        if element.child(Namespace.cardDAV, "allprop") == nil {
            let names = element.children(Namespace.cardDAV, "prop").compactMap { $0.attribute("name")?.uppercased() }
            if !names.isEmpty { properties = Set(names) }
        }
    }

    private static func unsupported(_ message: String) -> DAVError {
        DAVError.precondition(403, .cardDAV("supported-address-data"), message: message)
    }

    /// The stored card exactly as it is: nothing to convert or trim (the listings' fast path).
    var isVerbatim: Bool { form == .vCard && version == nil && properties == nil }

    /// The card bytes to return: the stored bytes untouched (not parsed) when nothing is
    /// asked (or the card already has the asked version), else the card converted and
    /// trimmed (VERSION and UID always kept), as vCard text or as its jCard.
    func render(_ body: Data) -> Data {
        guard !isVerbatim else { return body }
        guard var cards = try? VCardParser.parse([UInt8](body)), !cards.isEmpty else { return body }
        let converts = version.map { wanted in cards.contains { $0.version != wanted } } ?? false
        if form == .vCard && !converts && properties == nil { return body }
        for index in cards.indices {
            var card = cards[index]
            if let version, card.version != version {
                card = VCardConverter.convert(card, to: version)
            }
            if let properties {
                card.properties.removeAll { !(properties.contains($0.name) || $0.name == "VERSION" || $0.name == "UID") }
            }
            cards[index] = card
        }
        return form == .jCard ? Data(JCard.encode(cards)) : Data(VCardWriter.write(cards).utf8)
    }
}
