// The public surface of the VCard target that other targets code against.
// Signatures are the contract; bodies are filled in by the VCard work (issue 2).

public enum VCardParser {
    /// Parses every card in a stream (CRLF, bare LF or mixed; 2.1, 3.0, 4.0).
    /// Unfolds on bytes before UTF-8 decoding; decodes 2.1 QUOTED-PRINTABLE/CHARSET.
    public static func parse(_ bytes: [UInt8]) throws(VCardError) -> [VCard] {
        try bytes.withUnsafeBufferPointer { (buffer) throws(VCardError) -> [VCard] in
            try CardReader.readCards(buffer)
        }
    }

    /// Parses bytes the caller holds (a request body) without copying them first.
    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(VCardError) -> [VCard] {
        try CardReader.readCards(bytes)
    }

    public static func parse(_ string: String) throws(VCardError) -> [VCard] {
        try parse(Array(string.utf8))
    }

    /// Parses in the given mode. `.strict` is what the overloads without `mode` do (CardDAV
    /// PUT); `.lenient` is for imports and the `rolo vcard` tools: see `VCardParseMode`.
    public static func parse(_ bytes: [UInt8], mode: VCardParseMode) throws(VCardError) -> [VCard] {
        try bytes.withUnsafeBufferPointer { (buffer) throws(VCardError) -> [VCard] in
            try CardReader.readCards(buffer, mode: mode)
        }
    }

    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>, mode: VCardParseMode) throws(VCardError) -> [VCard] {
        try CardReader.readCards(bytes, mode: mode)
    }

    public static func parse(_ string: String, mode: VCardParseMode) throws(VCardError) -> [VCard] {
        try parse(Array(string.utf8), mode: mode)
    }
}

/// How forgiving the reader is. Both modes decode vCard 2.1 CHARSET (through iconv),
/// QUOTED-PRINTABLE and BASE64 text, UTF-16 files and a UTF-8 byte order mark.
public enum VCardParseMode: Sendable, Hashable {
    /// CardDAV PUT: a card must say VERSION; an unknown CHARSET or bytes that are not
    /// valid in the declared charset are errors naming the property and line.
    case strict
    /// Import and the `rolo vcard` tools: a card without VERSION is read by its shape
    /// (2.1 constructs such as `TEL;CELL:`, QUOTED-PRINTABLE, BASE64 or CHARSET -> 2.1,
    /// else 3.0); an unindented line that cannot start a property continues the value
    /// before it (joined with a newline); an unknown CHARSET or mislabelled bytes are read
    /// best-effort (UTF-8 when valid, else Windows-1252 / U+FFFD replacement).
    case lenient
}

public enum VCardWriter {
    /// Writes one card in its own `version` (3.0 or 4.0; a 2.1 card must be converted
    /// first), CRLF line ends, folded at 75 octets without splitting a UTF-8 character.
    /// Deterministic: same card, same bytes. A 2.1 card is written as 3.0.
    public static func write(_ card: VCard) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(card.properties.count * 48 + 64)
        CardWriter.append(card, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    public static func write(_ cards: [VCard]) -> String {
        var out: [UInt8] = []
        for card in cards { CardWriter.append(card, to: &out) }
        return String(decoding: out, as: UTF8.self)
    }

    /// Writes one content line the way `write` writes it inside a card: upper-case name,
    /// parameters quoted where needed, folded at 75 octets, ending in CRLF. For editors that
    /// patch a stored card line by line (`CardPatch`) and keep every other line's bytes.
    public static func write(_ property: VCardProperty) -> [UInt8] {
        var out: [UInt8] = []
        CardWriter.append(property, to: &out)
        return out
    }
}

public enum VCardConverter {
    /// Converts a card to 3.0 or 4.0 (PHOTO encoding, TYPE=PREF <-> PREF=1,
    /// KIND/MEMBER <-> X-ADDRESSBOOKSERVER-KIND/-MEMBER, BDAY without year, TYPE casing),
    /// losing no labeled value, label or preference. Converting to the card's own version
    /// returns it unchanged (2.1 always converts). 2.1 is never produced: asking for it
    /// returns the card unchanged.
    /// A card that changes version and has no FN gets one (see `formattedName(for:)`).
    public static func convert(_ card: VCard, to version: VCardVersion) -> VCard {
        VersionConversion.convert(card, to: version)
    }

    /// The FN text Apple and Google clients show for a card without FN: N composed as
    /// "Prefix Given Middle Family Suffix" (family name first, no spaces, for Han, kana and
    /// Hangul names), else the first ORG component, NICKNAME, EMAIL, TEL; else "". Unescaped.
    public static func formattedName(for card: VCard) -> String {
        FormattedName.derive(card)
    }

    /// The card unchanged when it has an FN, else with the derived FN added after N (or
    /// after VERSION). For lenient imports of a 3.0/4.0 card that stays in its version.
    public static func addingFormattedName(_ card: VCard) -> VCard {
        FormattedName.ensure(card)
    }
}

public enum VCardValidator {
    /// Throws what a CardDAV server reports as `valid-address-data`: missing FN
    /// (3.0/4.0), missing UID when `requireUID`, etc., naming the property and line.
    public static func validate(_ card: VCard, requireUID: Bool) throws(VCardError) {
        try CardValidation.validate(card, requireUID: requireUID)
    }
}

extension VCardProperty {
    /// Values of one parameter (all occurrences, comma lists split), nil when absent.
    public func parameter(_ name: String) -> [String]? {
        let upper = name.uppercased()
        var found: [String]?
        for parameter in parameters where parameter.name == upper {
            var values = found ?? []
            for value in parameter.values {
                if value.utf8.contains(Byte.comma) {
                    values.append(contentsOf: value.split(separator: ",", omittingEmptySubsequences: false).map(String.init))
                } else {
                    values.append(value)
                }
            }
            found = values
        }
        return found
    }

    /// Values of one parameter as parsed (a quoted value stays whole even if it holds commas,
    /// e.g. an ADR `LABEL="a, b"`), nil when absent.
    public func parameterValues(_ name: String) -> [String]? {
        let upper = name.uppercased()
        var found: [String]?
        for parameter in parameters where parameter.name == upper {
            found = (found ?? []) + parameter.values
        }
        return found
    }

    /// All TYPE tokens upper-cased (comma lists and repeated TYPE= split; 2.1 bare tokens included).
    public var types: [String] {
        (parameter("TYPE") ?? []).map { $0.uppercased() }
    }

    /// The value unescaped as text (`\n` -> newline, `\,` `\;` `\\` `\:`).
    public var text: String { VCardEscaping.unescape(rawValue[...]) }

    /// Structured value (N, ADR, ORG…): split on unescaped `;`, each part unescaped.
    public var components: [String] {
        VCardEscaping.splitEscaped(rawValue, on: Byte.semicolon).map(VCardEscaping.unescape)
    }

    /// List value (CATEGORIES, NICKNAME): split on unescaped `,`, each part unescaped.
    public var listValues: [String] {
        VCardEscaping.splitEscaped(rawValue, on: Byte.comma).map(VCardEscaping.unescape)
    }
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
