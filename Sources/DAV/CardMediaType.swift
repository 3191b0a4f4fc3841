import Foundation
import VCard

/// The two forms a card is served and taken in: the vCard text the store keeps, and jCard
/// (RFC 7095), its JSON form for web and API clients, converted to and from it. GET picks
/// one by `Accept`, REPORTs by `address-data content-type`, PUT reads either.
public enum CardMediaType: Sendable, Hashable {
    case vCard
    case jCard

    public static let jCardContentType = "application/vcard+json"

    /// The `Content-Type` a card is served with in this form.
    public var contentType: String {
        switch self {
        case .vCard: Put.cardContentType
        case .jCard: Self.jCardContentType
        }
    }

    /// The form a media type names, any parameters and letter case: `text/vcard` (also the
    /// legacy `text/x-vcard`) or `application/vcard+json`.
    init?(mediaType: String) {
        let bare = mediaType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        switch bare.trimmingCharacters(in: .whitespaces).lowercased() {
        case "text/vcard", "text/x-vcard": self = .vCard
        case Self.jCardContentType: self = .jCard
        default: return nil
        }
    }

    // MARK: Proactive negotiation (RFC 9110 §12.5.1)

    /// The form `Accept` prefers. Each form gets the weight of the most specific media range
    /// that matches it (`text/vcard` over `text/*` over `*/*`; `q` from 0 to 1, 1 when
    /// absent); jCard only when it weighs more than vCard, so `*/*`, ties and no header give
    /// the stored text. An `Accept` that accepts neither also gets vCard, never 406:
    /// RFC 9110 lets a server disregard the header, and a CardDAV client sending a blanket
    /// `Accept: application/xml` for every request should still get its card.
    public static func negotiate(accept: String?) -> CardMediaType {
        // No header, or curl's and most libraries' default: no parsing on a card GET.
        guard let accept, !accept.isEmpty, accept != "*/*" else { return .vCard }
        let ranges = accept.split(separator: ",").compactMap(MediaRange.init)
        return weight(of: .jCard, in: ranges) > weight(of: .vCard, in: ranges) ? .jCard : .vCard
    }

    private static func weight(of form: CardMediaType, in ranges: [MediaRange]) -> Double {
        var best: (specificity: Int, q: Double) = (-1, 0)
        for range in ranges {
            guard let specificity = range.specificity(matching: form) else { continue }
            if specificity > best.specificity || (specificity == best.specificity && range.q > best.q) {
                best = (specificity, range.q)
            }
        }
        return best.q
    }

    /// One element of `Accept`: `type/subtype` (either may be `*`) and its weight.
    private struct MediaRange {
        var type: String
        var subtype: String
        var q: Double = 1

        init?(_ element: Substring) {
            let parts = element.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            let name = (parts.first ?? "").split(separator: "/", omittingEmptySubsequences: false)
            guard name.count == 2, !name[0].isEmpty, !name[1].isEmpty else { return nil }
            type = String(name[0]); subtype = String(name[1])
            for parameter in parts.dropFirst() where parameter.hasPrefix("q=") {
                guard let q = Double(parameter.dropFirst(2)), (0...1).contains(q) else { return nil }
                self.q = q
            }
        }

        /// 2 for the form's own type, 1 for `type/*`, 0 for `*/*`; nil when it does not match.
        func specificity(matching form: CardMediaType) -> Int? {
            let names: [(String, String)] = switch form {
            case .vCard: [("text", "vcard"), ("text", "x-vcard")]
            case .jCard: [("application", "vcard+json")]
            }
            if type == "*" && subtype == "*" { return 0 }
            guard names.contains(where: { $0.0 == type }) else { return nil }
            if subtype == "*" { return 1 }
            return names.contains { $0 == (type, subtype) } ? 2 : nil
        }
    }

    // MARK: Entity tags

    /// What a jCard ETag adds to its card's stored one. A strong ETag names one
    /// representation (RFC 9110 §8.8.3), so the jCard, other bytes, gets its own: derived
    /// from the stored tag, it changes exactly when the card does. Change the suffix if the
    /// jCard writer ever writes other bytes for the same card.
    private static let jCardETagSuffix = "-jcard"

    /// The strong ETag of the card in this form, from its stored ETag.
    func etag(stored: String) -> String {
        guard self == .jCard, stored.hasSuffix("\"") else { return stored }
        return String(stored.dropLast()) + Self.jCardETagSuffix + "\""
    }

    /// The stored ETag an entity tag of either form names. A write (`If-Match` on PUT or
    /// DELETE) applies to the card, whichever form the client read it in, so a client that
    /// GETs the jCard and PUTs it back with its ETag is not refused.
    static func storedETag(_ tag: String) -> String {
        let suffix = jCardETagSuffix + "\""
        guard tag.hasSuffix(suffix) else { return tag }
        return String(tag.dropLast(suffix.utf8.count)) + "\""
    }

    // MARK: Conversion

    /// A stored card in this form: its bytes as they are for vCard, its jCard (which is vCard
    /// 4.0, converted and with an FN derived where missing) for jCard. Nil when the stored
    /// bytes cannot be read as a card.
    func render(stored: Data) -> Data? {
        switch self {
        case .vCard:
            return stored
        case .jCard:
            guard let cards = try? VCardParser.parse([UInt8](stored)), cards.count == 1 else { return nil }
            return Data(JCard.encode(cards))
        }
    }
}
