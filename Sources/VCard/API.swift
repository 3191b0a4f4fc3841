// The public surface of the VCard target that other targets code against.
// Signatures are the contract; bodies are filled in by the VCard work (issue 2).

public enum VCardParser {
    /// Parses every card in a stream (CRLF, bare LF or mixed; 2.1, 3.0, 4.0).
    /// Unfolds on bytes before UTF-8 decoding; decodes 2.1 QUOTED-PRINTABLE/CHARSET.
    public static func parse(_ bytes: [UInt8]) throws(VCardError) -> [VCard] {
        throw VCardError("VCard parser not implemented yet")
    }

    public static func parse(_ string: String) throws(VCardError) -> [VCard] {
        try parse(Array(string.utf8))
    }
}

public enum VCardWriter {
    /// Writes one card in its own `version` (3.0 or 4.0; a 2.1 card must be converted
    /// first), CRLF line ends, folded at 75 octets without splitting a UTF-8 character.
    /// Deterministic: same card, same bytes.
    public static func write(_ card: VCard) -> String {
        ""
    }

    public static func write(_ cards: [VCard]) -> String {
        cards.map(write).joined()
    }
}

public enum VCardConverter {
    /// Converts a card to 3.0 or 4.0 (PHOTO encoding, TYPE=PREF <-> PREF=1,
    /// KIND/MEMBER <-> X-ADDRESSBOOKSERVER-KIND/-MEMBER, BDAY without year, TYPE casing),
    /// losing no labeled value, label or preference. Converting to the card's own version
    /// returns it unchanged (2.1 always converts).
    public static func convert(_ card: VCard, to version: VCardVersion) -> VCard {
        card
    }
}

public enum VCardValidator {
    /// Throws what a CardDAV server reports as `valid-address-data`: missing FN
    /// (3.0/4.0), missing UID when `requireUID`, etc., naming the property and line.
    public static func validate(_ card: VCard, requireUID: Bool) throws(VCardError) {
    }
}

extension VCardProperty {
    /// Values of one parameter (all occurrences, comma lists split), nil when absent.
    public func parameter(_ name: String) -> [String]? { nil }

    /// All TYPE tokens upper-cased (comma lists and repeated TYPE= split; 2.1 bare tokens included).
    public var types: [String] { [] }

    /// The value unescaped as text (`\n` -> newline, `\,` `\;` `\\` `\:`).
    public var text: String { rawValue }

    /// Structured value (N, ADR, ORG…): split on unescaped `;`, each part unescaped.
    public var components: [String] { [rawValue] }

    /// List value (CATEGORIES, NICKNAME): split on unescaped `,`, each part unescaped.
    public var listValues: [String] { [rawValue] }
}

extension VCard {
    /// Properties with this name (case-insensitive), in order.
    public func properties(named name: String) -> [VCardProperty] {
        let upper = name.uppercased()
        return properties.filter { $0.name == upper }
    }

    /// The first property with this name (case-insensitive).
    public func first(_ name: String) -> VCardProperty? {
        let upper = name.uppercased()
        return properties.first { $0.name == upper }
    }
}
