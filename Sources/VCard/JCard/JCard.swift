/// jCard (RFC 7095): vCard 4.0 as JSON, `["vcard", [[name, {params}, type, value…], …]]`.
///
/// Writing converts each card to 4.0 first (VERSION first, an FN derived when missing),
/// names and parameter names lower-case, the group as the `group` parameter, VALUE as the
/// type (else the property's default type; `unknown` for properties vCard does not define),
/// text unescaped, N/ADR (and multi-part ORG/GENDER/CLIENTPIDMAP) as arrays with
/// multi-valued components as nested arrays, CATEGORIES/NICKNAME as several values, dates
/// and times in the extended form (`--02-03`, `2009-08-08T14:30-05:00`), utc-offset as
/// `-05:00`, integers/floats as JSON numbers and booleans as JSON booleans.
/// Reading reverses each step; a property whose type is not its default gets VALUE=type.
public enum JCard {
    /// One card: its jCard. Several cards (or none): a JSON array of jCards.
    public static func encode(_ cards: [VCard]) -> [UInt8] {
        var out: [UInt8] = []
        if cards.count == 1 {
            appendCard(cards[0], to: &out)
        } else {
            out.append(UInt8(ascii: "["))
            for (index, card) in cards.enumerated() {
                out.append(contentsOf: index == 0 ? "\n".utf8 : ",\n".utf8)
                appendCard(card, to: &out)
            }
            out.append(contentsOf: "\n]".utf8)
        }
        out.append(Byte.lf)
        return out
    }

    /// `encode` as a String.
    public static func encodeString(_ cards: [VCard]) -> String {
        String(decoding: encode(cards), as: UTF8.self)
    }

    /// One card as its jCard JSON value (no trailing newline).
    public static func encode(_ card: VCard) -> String {
        var out: [UInt8] = []
        appendCard(card, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Reads a jCard (`["vcard", […]]`) or an array of jCards into vCard 4.0 cards.
    /// Throws a `VCardError` naming the card, property and problem for malformed input.
    public static func decode(_ bytes: [UInt8]) throws(VCardError) -> [VCard] {
        let json = try JSONReader.parse(bytes)
        guard case .array(let items) = json else {
            throw VCardError("jCard must be a JSON array [\"vcard\", [properties]] (found \(json.kindName))")
        }
        if case .string = items.first {
            return [try JCardDecoding.card(json, index: nil)]
        }
        var cards: [VCard] = []
        for (index, item) in items.enumerated() {
            cards.append(try JCardDecoding.card(item, index: index + 1))
        }
        return cards
    }

    public static func decode(_ string: String) throws(VCardError) -> [VCard] {
        try decode(Array(string.utf8))
    }

    private static func appendCard(_ input: VCard, to out: inout [UInt8]) {
        let card = input.version == .v40 ? FormattedName.ensure(input) : VCardConverter.convert(input, to: .v40)
        out.append(contentsOf: "[\"vcard\", [\n".utf8)
        var rows: [JSON] = [.array([.string("version"), .object([]), .string("text"), .string("4.0")])]
        for property in card.properties where property.name != "VERSION" {
            rows.append(JCardEncoding.property(property))
        }
        for (index, row) in rows.enumerated() {
            out.append(contentsOf: "  ".utf8)
            JSONWriter.append(row, to: &out)
            out.append(contentsOf: (index == rows.count - 1 ? "\n" : ",\n").utf8)
        }
        out.append(contentsOf: "]]".utf8)
    }
}

/// Per-property knowledge shared by both directions.
enum JCardSchema {
    /// RFC 6350 (and RFC 6474/6715/8605/9554) default value types.
    static func defaultType(_ name: String) -> String {
        switch name {
        case "SOURCE", "PHOTO", "IMPP", "GEO", "LOGO", "MEMBER", "RELATED", "SOUND", "UID", "URL", "KEY", "FBURL",
             "CALADRURI", "CALURI", "ORG-DIRECTORY", "CONTACT-URI", "SOCIALPROFILE":
            return "uri"
        case "BDAY", "ANNIVERSARY", "DEATHDATE":
            return "date-and-or-time"
        case "REV", "CREATED":
            return "timestamp"
        case "LANG", "LANGUAGE":
            return "language-tag"
        case "VERSION", "KIND", "XML", "FN", "N", "NICKNAME", "GENDER", "ADR", "TEL", "EMAIL", "TZ", "TITLE", "ROLE",
             "ORG", "CATEGORIES", "NOTE", "PRODID", "CLIENTPIDMAP", "BIRTHPLACE", "DEATHPLACE", "EXPERTISE", "HOBBY",
             "INTEREST", "GRAMGENDER", "PRONOUNS", "LABEL", "SORT-STRING", "CLASS", "MAILER", "NAME":
            return "text"
        default:
            return "unknown"
        }
    }

    /// Structured values whose components may hold comma-separated lists.
    static let listComponents: Set<String> = ["N", "ADR"]
    /// Structured values (written as an array when they have more than one component).
    static let structured: Set<String> = ["N", "ADR", "ORG", "GENDER", "CLIENTPIDMAP"]
    /// Parameters whose value is a comma-separated list (RFC 6350 §5).
    static let listParameters: Set<String> = ["TYPE", "PID", "SORT-AS"]
    /// Text lists written as several values.
    static let multiValued: Set<String> = ["CATEGORIES", "NICKNAME"]
    static let dateTypes: Set<String> = ["date", "time", "date-time", "date-and-or-time", "timestamp"]
}

enum JCardEncoding {
    static func property(_ property: VCardProperty) -> JSON {
        var parameters: [(key: String, value: JSON)] = []
        if let group = property.group, !group.isEmpty { parameters.append(("group", .string(group))) }
        var valueType: String?
        var merged: [(name: String, values: [String])] = []
        for parameter in property.parameters {
            if parameter.name == "VALUE" {
                // An empty VALUE names no type (jCard's type must not be empty: found by
                // fuzzing); the property's default applies.
                if valueType == nil, let first = parameter.values.first, !first.isEmpty { valueType = first.lowercased() }
                continue
            }
            // TYPE, PID and SORT-AS are comma lists even when written as one quoted value.
            let values = JCardSchema.listParameters.contains(parameter.name)
                ? parameter.values.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
                : parameter.values
            if let index = merged.firstIndex(where: { $0.name == parameter.name }) {
                merged[index].values.append(contentsOf: values)
            } else {
                merged.append((parameter.name, values))
            }
        }
        for (name, values) in merged {
            let key = name.lowercased()
            if values.count == 1 {
                parameters.append((key, .string(values[0])))
            } else {
                parameters.append((key, .array(values.map(JSON.string))))
            }
        }
        let type = valueType ?? JCardSchema.defaultType(property.name)
        var row: [JSON] = [.string(property.name.lowercased()), .object(parameters), .string(type)]
        row.append(contentsOf: values(property, type: type))
        return .array(row)
    }

    private static func values(_ property: VCardProperty, type: String) -> [JSON] {
        let raw = property.rawValue
        switch type {
        case "text":
            if JCardSchema.structured.contains(property.name) {
                let components = VCardEscaping.splitEscaped(raw, on: Byte.semicolon)
                let parts: [JSON] = components.map { component in
                    guard JCardSchema.listComponents.contains(property.name) else {
                        return .string(VCardEscaping.unescape(component))
                    }
                    let items = VCardEscaping.splitEscaped(String(component), on: Byte.comma)
                    if items.count > 1 { return .array(items.map { .string(VCardEscaping.unescape($0)) }) }
                    return .string(VCardEscaping.unescape(component))
                }
                if parts.count == 1 && !JCardSchema.listComponents.contains(property.name) { return parts }
                return [.array(parts)]
            }
            if JCardSchema.multiValued.contains(property.name) {
                return VCardEscaping.splitEscaped(raw, on: Byte.comma).map { .string(VCardEscaping.unescape($0)) }
            }
            return [.string(VCardEscaping.unescape(raw[...]))]
        case "date", "time", "date-time", "date-and-or-time", "timestamp":
            return [.string(JCardDates.extended(raw, type: type))]
        case "utc-offset":
            return [.string(JCardDates.extendedOffset(raw))]
        case "integer", "float":
            let items = raw.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            return items.map { item in
                let trimmed = item.trimmingASCIISpaces()
                return isJSONNumber(trimmed) ? .number(trimmed) : .string(item)
            }
        case "boolean":
            switch raw.trimmingASCIISpaces().uppercased() {
            case "TRUE": return [.bool(true)]
            case "FALSE": return [.bool(false)]
            default: return [.string(raw)]
            }
        default:
            return [.string(raw)]
        }
    }

    private static func isJSONNumber(_ text: String) -> Bool {
        guard !text.isEmpty else { return false }
        if let parsed = try? JSONReader.parse(Array(text.utf8)), case .number = parsed { return true }
        return false
    }
}

enum JCardDecoding {
    static func card(_ json: JSON, index: Int?) throws(VCardError) -> VCard {
        let which = index.map { "jCard \($0)" } ?? "jCard"
        guard case .array(let parts) = json, parts.count == 2, case .string(let tag) = parts[0] else {
            throw VCardError("\(which) must be [\"vcard\", [properties]] (found \(json.kindName) of another shape)")
        }
        guard tag.lowercased() == "vcard" else {
            throw VCardError("\(which) starts with \"\(tag)\" (expected \"vcard\")")
        }
        guard case .array(let rows) = parts[1] else {
            throw VCardError("\(which): the properties must be an array (found \(parts[1].kindName))")
        }
        var properties: [VCardProperty] = []
        properties.reserveCapacity(rows.count + 1)
        var sawVersion = false
        for (number, row) in rows.enumerated() {
            let property = try self.property(row, where: "\(which) property \(number + 1)")
            if property.name == "VERSION" {
                guard !sawVersion else { continue }
                let version = property.rawValue.trimmingASCIISpaces()
                guard version == "4.0" else {
                    throw VCardError("\(which): jCard is vCard 4.0, but its version property says \"\(version)\"")
                }
                sawVersion = true
                // Without group or parameters (an odd value type made one), as the vCard
                // reader keeps VERSION and the writer prints it (found by fuzzing).
                properties.insert(VCardProperty(group: nil, upperName: "VERSION", parameters: [], rawValue: "4.0", line: 0), at: 0)
                continue
            }
            properties.append(property)
        }
        if !sawVersion {
            properties.insert(VCardProperty(group: nil, upperName: "VERSION", parameters: [], rawValue: "4.0", line: 0), at: 0)
        }
        return VCard(version: .v40, properties: properties, line: 0)
    }

    private static func property(_ row: JSON, where place: String) throws(VCardError) -> VCardProperty {
        guard case .array(let items) = row, items.count >= 4 else {
            throw VCardError("\(place) must be [name, {parameters}, type, value, …] with at least one value")
        }
        guard case .string(let rawName) = items[0], !rawName.isEmpty,
              rawName.utf8.allSatisfy({ ContentLineParser.isNameByte($0) }) else {
            throw VCardError("\(place): the name must be a non-empty string of letters, digits and '-' (found \(items[0].kindName))")
        }
        let name = rawName.uppercased()
        guard case .object(let members) = items[1] else {
            throw VCardError("\(place) (\(rawName)): the parameters must be an object (found \(items[1].kindName))")
        }
        guard case .string(let rawType) = items[2], !rawType.isEmpty else {
            throw VCardError("\(place) (\(rawName)): the value type must be a string such as \"text\" (found \(items[2].kindName))")
        }
        let type = rawType.lowercased()
        var group: String?
        var parameters: [VCardParameter] = []
        for (key, value) in members {
            guard !key.isEmpty, key.utf8.allSatisfy({ ContentLineParser.isNameByte($0) }) else {
                throw VCardError("\(place) (\(rawName)): parameter name \"\(key)\" is not a valid name")
            }
            if key.lowercased() == "group" {
                guard case .string(let text) = value, !text.isEmpty,
                      text.utf8.allSatisfy({ ContentLineParser.isNameByte($0) }) else {
                    throw VCardError("\(place) (\(rawName)): the group parameter must be a name such as \"item1\"")
                }
                group = text
                continue
            }
            switch value {
            case .string(let text):
                parameters.append(VCardParameter(upperName: key.uppercased(), values: [text]))
            case .array(let list):
                var values: [String] = []
                for element in list {
                    guard case .string(let text) = element else {
                        throw VCardError("\(place) (\(rawName)): parameter \(key) holds \(element.kindName) (expected strings)")
                    }
                    values.append(text)
                }
                guard !values.isEmpty else { throw VCardError("\(place) (\(rawName)): parameter \(key) is an empty array") }
                parameters.append(VCardParameter(upperName: key.uppercased(), values: values))
            default:
                throw VCardError("\(place) (\(rawName)): parameter \(key) holds \(value.kindName) (expected a string or an array of strings)")
            }
        }
        if type != "unknown", type != JCardSchema.defaultType(name) {
            parameters.insert(VCardParameter(upperName: "VALUE", values: [type]), at: 0)
        }
        let rawValue = try value(Array(items[3...]), name: name, type: type, where: "\(place) (\(rawName))")
        return VCardProperty(group: group, upperName: name, parameters: parameters, rawValue: rawValue, line: 0)
    }

    private static func value(_ values: [JSON], name: String, type: String, where place: String) throws(VCardError) -> String {
        var pieces: [String] = []
        for value in values {
            switch value {
            case .string(let text):
                pieces.append(try scalar(text, type: type, where: place))
            case .number(let literal):
                pieces.append(literal)
            case .bool(let flag):
                pieces.append(flag ? "TRUE" : "FALSE")
            case .array(let components):
                // A structured value: components joined with ';', a nested array is a ','-list.
                var parts: [String] = []
                for component in components {
                    switch component {
                    case .string(let text): parts.append(try scalar(text, type: type, where: place))
                    case .number(let literal): parts.append(literal)
                    case .bool(let flag): parts.append(flag ? "TRUE" : "FALSE")
                    case .array(let list):
                        var items: [String] = []
                        for item in list {
                            guard case .string(let text) = item else {
                                throw VCardError("\(place): a structured value component list holds \(item.kindName) (expected strings)")
                            }
                            items.append(try scalar(text, type: type, where: place))
                        }
                        parts.append(items.joined(separator: ","))
                    default:
                        throw VCardError("\(place): a structured value component is \(component.kindName)")
                    }
                }
                pieces.append(parts.joined(separator: ";"))
            case .null, .object:
                throw VCardError("\(place): a value is \(value.kindName) (expected a string, number, boolean or array)")
            }
        }
        _ = name  // multiple values of any property are a comma-separated list in vCard
        return pieces.joined(separator: ",")
    }

    private static func scalar(_ text: String, type: String, where place: String) throws(VCardError) -> String {
        switch type {
        case "text":
            return VCardEscaping.escape(text)
        case "date", "time", "date-time", "date-and-or-time", "timestamp":
            return JCardDates.basic(text, type: type)
        case "utc-offset":
            return JCardDates.basicOffset(text)
        default:
            if text.utf8.contains(where: { $0 < 0x20 && $0 != Byte.tab }) {
                throw VCardError("\(place): a \(type) value holds a control character")
            }
            return text
        }
    }
}

/// Dates and times between vCard 4.0's basic form (`19850412`, `--0412`, `T102200Z`,
/// `-0500`) and jCard's extended form (`1985-04-12`, `--04-12`, `T10:22:00Z`, `-05:00`),
/// RFC 6350 §4.3 and RFC 7095 §3.5. Only a value that follows the grammar of its form
/// is converted; anything else passes through unchanged, so text that is no date (a
/// client's free-form BDAY) survives a jCard round trip (found by fuzzing: `:` was
/// dropped from any value).
enum JCardDates {
    /// Basic -> extended; unchanged when `raw` is not a basic date, time or date-time.
    static func extended(_ raw: String, type: String) -> String {
        convert(raw, type: type, toExtended: true) ?? raw
    }

    /// Extended -> basic; unchanged when `value` is not an extended date, time or date-time.
    static func basic(_ value: String, type: String) -> String {
        convert(value, type: type, toExtended: false) ?? value
    }

    /// `-0500` -> `-05:00`; `Z`, `-05` and anything else unchanged.
    static func extendedOffset(_ value: String) -> String {
        zone(Array(value.utf8)[...], toExtended: true).map { String(decoding: $0, as: UTF8.self) } ?? value
    }

    /// `-05:00` -> `-0500`; anything else unchanged.
    static func basicOffset(_ value: String) -> String {
        zone(Array(value.utf8)[...], toExtended: false).map { String(decoding: $0, as: UTF8.self) } ?? value
    }

    private static func convert(_ value: String, type: String, toExtended: Bool) -> String? {
        let bytes = Array(value.utf8)
        let converted: [UInt8]?
        if let t = bytes.firstIndex(of: 0x54) {  // T: [date] "T" time
            guard let time = time(bytes[(t + 1)...], toExtended: toExtended) else { return nil }
            let datePart = bytes[..<t]
            if datePart.isEmpty { return String(decoding: [0x54] + time, as: UTF8.self) }
            guard let date = date(datePart, toExtended: toExtended, complete: true) else { return nil }
            converted = date + [0x54] + time
        } else if type == "time" {
            converted = time(bytes[...], toExtended: toExtended)
        } else {
            converted = date(bytes[...], toExtended: toExtended, complete: false)
        }
        return converted.map { String(decoding: $0, as: UTF8.self) }
    }

    private static func isDigits(_ bytes: ArraySlice<UInt8>) -> Bool {
        !bytes.isEmpty && bytes.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }

    /// The pieces of `bytes` cut at `lengths` when each is all digits and nothing is left.
    private static func fields(_ bytes: ArraySlice<UInt8>, _ lengths: [Int], separator: UInt8?) -> [ArraySlice<UInt8>]? {
        var parts: [ArraySlice<UInt8>] = []
        var index = bytes.startIndex
        for (number, length) in lengths.enumerated() {
            if number > 0, let separator {
                guard index < bytes.endIndex, bytes[index] == separator else { return nil }
                index += 1
            }
            guard index + length <= bytes.endIndex, isDigits(bytes[index..<(index + length)]) else { return nil }
            parts.append(bytes[index..<(index + length)])
            index += length
        }
        return index == bytes.endIndex ? parts : nil
    }

    /// A date: `YYYYMMDD`/`YYYY-MM-DD`, `YYYY-MM`, `YYYY`, `--MMDD`/`--MM-DD`, `--MM`,
    /// `---DD`; `complete` (before a `T`) allows only the forms with a day.
    private static func date(_ bytes: ArraySlice<UInt8>, toExtended: Bool, complete: Bool) -> [UInt8]? {
        let dash: UInt8 = 0x2D
        let from: UInt8? = toExtended ? nil : dash
        let to: [UInt8] = toExtended ? [dash] : []
        if let p = fields(bytes, [4, 2, 2], separator: from) { return Array(p[0]) + to + Array(p[1]) + to + Array(p[2]) }
        if bytes.starts(with: [dash, dash, dash]) {
            return fields(bytes.dropFirst(3), [2], separator: nil).map { _ in Array(bytes) }
        }
        if bytes.starts(with: [dash, dash]) {
            if let p = fields(bytes.dropFirst(2), [2, 2], separator: from) { return [dash, dash] + Array(p[0]) + to + Array(p[1]) }
            if !complete, fields(bytes.dropFirst(2), [2], separator: nil) != nil { return Array(bytes) }
            return nil
        }
        if !complete, fields(bytes, [4, 2], separator: dash) != nil || fields(bytes, [4], separator: nil) != nil {
            return Array(bytes)
        }
        return nil
    }

    /// A time: `HH[MM[SS]]` (extended `HH[:MM[:SS]]`), `-MM[SS]` (`-MM[:SS]`), `--SS`,
    /// with an optional zone.
    private static func time(_ bytes: ArraySlice<UInt8>, toExtended: Bool) -> [UInt8]? {
        let colon: UInt8 = 0x3A
        let from: UInt8? = toExtended ? nil : colon
        let to: [UInt8] = toExtended ? [colon] : []
        var dashes = 0
        while dashes < 2, bytes.dropFirst(dashes).first == 0x2D { dashes += 1 }
        let rest = bytes.dropFirst(dashes)
        // The clock part ends where the zone starts: Z, + or - after the first digit.
        let end = rest.firstIndex { $0 == 0x5A || $0 == 0x2B || $0 == 0x2D } ?? rest.endIndex
        let clock = rest[..<end]
        guard let zone = zone(rest[end...], toExtended: toExtended) else { return nil }
        let counts: [[Int]] = switch dashes {
        case 0: [[2, 2, 2], [2, 2], [2]]
        case 1: [[2, 2], [2]]
        default: [[2]]
        }
        for lengths in counts {
            guard let parts = fields(clock, lengths, separator: from) else { continue }
            var out = [UInt8](repeating: 0x2D, count: dashes)
            for (number, part) in parts.enumerated() { out += (number > 0 ? to : []) + Array(part) }
            return out + zone
        }
        return nil
    }

    /// A zone: empty, `Z`, `±HH`, `±HHMM` (extended `±HH:MM`).
    private static func zone(_ bytes: ArraySlice<UInt8>, toExtended: Bool) -> [UInt8]? {
        guard let sign = bytes.first else { return [] }
        if sign == 0x5A { return bytes.count == 1 ? [sign] : nil }
        guard sign == 0x2B || sign == 0x2D else { return nil }
        let rest = bytes.dropFirst()
        if fields(rest, [2], separator: nil) != nil { return Array(bytes) }
        guard let p = fields(rest, [2, 2], separator: toExtended ? nil : 0x3A) else { return nil }
        return [sign] + Array(p[0]) + (toExtended ? [0x3A] : []) + Array(p[1])
    }
}

extension String {
    /// Replaces every occurrence of one ASCII character (no Foundation in this target).
    func replacingOccurrences(_ character: Character, with replacement: String) -> String {
        guard contains(character) else { return self }
        var out = ""
        out.reserveCapacity(utf8.count)
        for element in self {
            if element == character { out += replacement } else { out.append(element) }
        }
        return out
    }
}
