import VCard

/// Invariants of the vCard reader, writer, converter and jCard.
enum VCardChecks {
    /// Both modes must return or throw, never trap. A card read is written and read back
    /// (strictly) unchanged: what Rolo stores after an import or a conversion must be a
    /// card its own PUT accepts and reads the same. A card the strict reader accepts
    /// reads the same in lenient mode when every name is one lenient mode knows (an
    /// unknown name may start a continuation line there, by design).
    static func parse(_ bytes: [UInt8]) {
        let strict = try? VCardParser.parse(bytes, mode: .strict)
        let lenient = try? VCardParser.parse(bytes, mode: .lenient)
        for card in (strict ?? []) + (lenient ?? []) { checkWriteAndRead(card, "parsed") }
        if let strict, strict.allSatisfy(\.hasOnlyKnownNames) {
            guard let lenient else { finding("strict reading accepted what lenient reading refused") }
            require(lenient.count == strict.count && zip(lenient, strict).allSatisfy { $0.sameContent(as: $1) },
                    "lenient reading differs from strict reading:\n\(describe(strict))\nvs\n\(describe(lenient))")
        }
    }

    /// Conversion to 3.0 and 4.0 gives a card of that version that writes and reads back
    /// unchanged, and a 4.0 card taken to 3.0 (Apple's shape) and back keeps every value.
    static func convert(_ bytes: [UInt8]) {
        guard let cards = try? VCardParser.parse(bytes, mode: .lenient) else { return }
        for card in cards {
            let v30 = VCardConverter.convert(card, to: .v30)
            let v40 = VCardConverter.convert(card, to: .v40)
            require(v30.version == .v30 && v40.version == .v40, "conversion gave the wrong version")
            checkWriteAndRead(v30, "converted to 3.0")
            checkWriteAndRead(v40, "converted to 4.0")
            // From the 4.0 card as stored (written and read back: a raw CR that quoted-
            // printable put in a value is then the newline the writer makes of it).
            let stored = (try? VCardParser.parse(VCardWriter.write(v40), mode: .strict))?.first ?? v40
            let back = VCardConverter.convert(VCardConverter.convert(stored, to: .v30), to: .v40)
            let lost = stored.valueCounts.subtracting(back.valueCounts)
            require(lost.isEmpty, "4.0 -> 3.0 -> 4.0 lost \(lost):\n\(describe([stored]))\nvs\n\(describe([back]))")
        }
    }

    /// JSON input: every jCard decoded encodes and decodes to the same card. vCard input:
    /// its jCard decodes to the card's 4.0 form.
    static func jcard(_ bytes: [UInt8]) {
        if let cards = try? JCard.decode(bytes) {
            for card in cards {
                require(card.version == .v40, "jCard decoded to vCard \(card.version.rawValue)")
                checkJCardRoundTrip(VCardConverter.addingFormattedName(card), "decoded jCard")
                checkWriteAndRead(card, "decoded jCard")
            }
        }
        if let cards = try? VCardParser.parse(bytes, mode: .lenient) {
            for card in cards {
                // What jCard encodes: the 4.0 form, with an FN derived when missing, as Rolo
                // would store it (written and read back: no raw CR left from QUOTED-PRINTABLE).
                let v40 = VCardConverter.addingFormattedName(VCardConverter.convert(card, to: .v40))
                guard let stored = (try? VCardParser.parse(VCardWriter.write(v40), mode: .strict))?.first else {
                    finding("vCard as jCard: the 4.0 form does not read back:\n\(VCardWriter.write(v40))")
                }
                checkJCardRoundTrip(stored, "vCard as jCard")
            }
        }
    }

    /// `card` (3.0 or 4.0; 2.1 is written as 3.0) written and read back strictly. The
    /// writer's documented changes are expected: a line break in a value is written as
    /// `\n`, other control characters (which vCard text cannot hold) are dropped.
    static func checkWriteAndRead(_ card: VCard, _ context: String) {
        var expected = card.version == .v21 ? VCardConverter.convert(card, to: .v30) : card
        for index in expected.properties.indices {
            expected.properties[index].rawValue = writtenValue(expected.properties[index].rawValue)
        }
        let text = VCardWriter.write(card)
        let reread: [VCard]
        do {
            reread = try VCardParser.parse(text, mode: .strict)
        } catch {
            finding("\(context): the written card does not read back (\(error)):\n\(text)")
        }
        require(reread.count == 1, "\(context): the written card reads back as \(reread.count) cards:\n\(text)")
        require(reread[0].sameContent(as: expected),
                "\(context): write -> read changed the card:\n\(describe([expected]))\nvs\n\(describe(reread))\nwritten:\n\(text)")
    }

    /// `card` (4.0, with FN) as jCard and back: the same properties in the same order, and
    /// the card decoded encodes to the same jCard. (Not the same vCard text: decoding writes
    /// dates in the basic form and parameters in jCard's order, which mean the same.)
    static func checkJCardRoundTrip(_ card: VCard, _ context: String) {
        let json = JCard.encode(card)
        let decoded: [VCard]
        do {
            decoded = try JCard.decode(json)
        } catch {
            finding("\(context): the jCard written does not decode (\(error)):\n\(json)")
        }
        require(decoded.count == 1, "\(context): the jCard decodes to \(decoded.count) cards")
        // jCard puts VERSION first, where RFC 6350 wants it; the others keep their order.
        let names = { (card: VCard) in card.properties.filter { $0.name != "VERSION" }.map { "\($0.group ?? "").\($0.name)" } }
        let again = JCard.encode(decoded[0])
        require(names(decoded[0]) == names(card) && again == json,
                "\(context): jCard encode -> decode changed the card:\n\(describe([card]))\nvs\n\(describe(decoded))\n"
                + "jCard:\n\(json)\nagain:\n\(again)")
    }

    /// A value as `VCardWriter` writes it: CR, LF or CRLF as `\n`, other controls but TAB dropped.
    static func writtenValue(_ raw: String) -> String {
        guard raw.utf8.contains(where: { $0 < 0x20 && $0 != 0x09 }) else { return raw }
        var out: [UInt8] = []
        var previousWasCR = false
        for byte in raw.utf8 {
            if byte == 0x0D || (byte == 0x0A && !previousWasCR) {
                out += [0x5C, 0x6E]
            } else if byte >= 0x20 || byte == 0x09 {
                out.append(byte)
            }
            previousWasCR = byte == 0x0D
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func describe(_ cards: [VCard]) -> String {
        cards.map { card in
            card.properties.map { "  \($0.group.map { $0 + "." } ?? "")\($0.name) \($0.parameters.map { "\($0.name)=\($0.values)" }) \($0.rawValue.debugDescription)" }
                .joined(separator: "\n")
        }.joined(separator: "\n  --\n")
    }
}

extension VCard {
    /// Same version and properties (group, name, parameters, raw value), line numbers aside.
    func sameContent(as other: VCard) -> Bool {
        version == other.version && properties.count == other.properties.count
            && zip(properties, other.properties).allSatisfy { $0.sameContent(as: $1) }
    }

    /// Every property name is one lenient reading recognises as the start of a property.
    var hasOnlyKnownNames: Bool {
        properties.allSatisfy { $0.name.hasPrefix("X-") || KnownNames.names.contains($0.name) }
    }

    /// How many times each (name, text) pair occurs: what a conversion must keep. Apple's
    /// 3.0 names count as the 4.0 ones (`standardNames`): an anniversary may come back as
    /// Apple's labelled X-ABDATE (4.0 allows one ANNIVERSARY; a second one stays in
    /// Apple's form), and Apple's names in a 4.0 card come back standard.
    /// Apple's 3.0 names that the conversion to 4.0 turns into the standard ones.
    static let standardNames = ["X-ABDATE": "ANNIVERSARY", "X-ADDRESSBOOKSERVER-KIND": "KIND",
                                "X-ADDRESSBOOKSERVER-MEMBER": "MEMBER", "X-ABRELATEDNAMES": "RELATED"]

    /// A 3.0-style LABEL property in a 4.0 card comes back as its ADR's LABEL parameter,
    /// as 4.0 has it, so those parameters count as LABEL values. Dates compare without
    /// their separators: 3.0 has Apple's extended form, 4.0 the basic one. A KIND is a
    /// case-insensitive token, which the conversion writes in lower case. Inline binary
    /// values (PHOTO, LOGO, SOUND, KEY) compare by their base64 payload, without spaces.
    var valueCounts: ValueCounts {
        var counts = ValueCounts()
        var isOrganisation = false
        for property in properties where property.name != "VERSION" {
            let name = Self.standardNames[property.name] ?? property.name
            var text = property.text
            if ["BDAY", "ANNIVERSARY", "DEATHDATE"].contains(name) {
                // Apple's year-less date (X-APPLE-OMIT-YEAR naming the date's year) in a 4.0
                // card comes back in 4.0's own form, `--MMDD`.
                let digits = String(text.unicodeScalars.filter { $0 != "-" })
                let isDate = digits.utf8.count == 8 && digits.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
                    && (text.utf8.count == 8 || (text.utf8.count == 10 && Array(text.utf8)[4] == 0x2D && Array(text.utf8)[7] == 0x2D))
                if isDate, let omitted = property.parameter("X-APPLE-OMIT-YEAR")?.first, digits.prefix(4) == omitted {
                    text = "--" + digits.suffix(4)
                }
                text = String(text.unicodeScalars.filter { $0 != "-" && $0 != ":" })
            } else if (name == "KIND" && text.lowercased() == "org") || (name == "X-ABSHOWAS" && text.uppercased() == "COMPANY") {
                // Apple's X-ABShowAs:COMPANY is KIND:org, and "this card is an organisation"
                // is said once, however many of them say it: 3.0 has one X-ABShowAs for
                // both, and a 4.0 card allows one KIND, so a second one that says org stays
                // in Apple's form after 3.0 and back.
                isOrganisation = true
                continue
            } else if name == "KIND" {
                text = text.lowercased()
            } else if ["PHOTO", "LOGO", "SOUND", "KEY"].contains(name) {
                // The payload: a 3.0 inline value in a 4.0 card comes back as a data: URI,
                // written `data:<media type>;base64,` (RFC 2397's marker and a media type
                // compare without case, so `;BASE64` comes back `;base64`).
                if let comma = text.firstIndex(of: ","), text.prefix(5).lowercased() == "data:",
                   text[..<comma].lowercased().hasSuffix(";base64") {
                    text = String(text[text.index(after: comma)...])
                }
                text = String(text.unicodeScalars.filter { $0 != " " && $0 != "\t" })
            }
            counts.add(name + ":" + text)
            if name == "ADR", let labels = property.parameterValues("LABEL") {
                // One label: 4.0 allows no list there, so `LABEL=a,b` (unquoted, which RFC 6350
                // does not allow) is read as the label "a,b", as the conversion reads it.
                counts.add("LABEL:" + VCardEscaping.unescape(labels.joined(separator: ",")[...]))
            }
        }
        if isOrganisation { counts.add("KIND:org") }
        return counts
    }
}

extension VCardProperty {
    func sameContent(as other: VCardProperty) -> Bool {
        group == other.group && name == other.name && parameters == other.parameters && rawValue == other.rawValue
    }
}

/// A multiset of strings.
struct ValueCounts: CustomStringConvertible {
    private(set) var counts: [String: Int] = [:]

    mutating func add(_ value: String) { counts[value, default: 0] += 1 }

    /// What `self` holds more of than `other`.
    func subtracting(_ other: ValueCounts) -> ValueCounts {
        var result = ValueCounts()
        for (value, count) in counts where count > other.counts[value, default: 0] {
            result.counts[value] = count - other.counts[value, default: 0]
        }
        return result
    }

    var isEmpty: Bool { counts.isEmpty }
    var description: String { counts.keys.sorted().map(\.debugDescription).joined(separator: ", ") }
}

/// The property names lenient reading takes as the start of a property (a copy of the
/// reader's list, which is internal to the VCard module).
enum KnownNames {
    static let names: Set<String> = [
        "BEGIN", "END", "VERSION", "SOURCE", "KIND", "XML", "FN", "N", "NICKNAME", "PHOTO", "BDAY", "ANNIVERSARY",
        "GENDER", "ADR", "LABEL", "TEL", "EMAIL", "MAILER", "IMPP", "LANG", "TZ", "GEO", "TITLE", "ROLE", "LOGO",
        "AGENT", "ORG", "MEMBER", "RELATED", "CATEGORIES", "NOTE", "PRODID", "REV", "SORT-STRING", "SOUND", "UID",
        "CLIENTPIDMAP", "URL", "CLASS", "KEY", "FBURL", "CALADRURI", "CALURI", "NAME", "PROFILE", "BIRTHPLACE",
        "DEATHPLACE", "DEATHDATE", "EXPERTISE", "HOBBY", "INTEREST", "ORG-DIRECTORY", "CONTACT-URI", "CREATED",
        "GRAMGENDER", "LANGUAGE", "PRONOUNS", "SOCIALPROFILE", "JSPROP", "DELIVERY",
    ]
}
