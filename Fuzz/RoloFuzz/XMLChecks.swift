import DAV
import DAVXML
import VCard

/// Invariants of the request-body parser and the addressbook-query filter.
enum XMLChecks {
    /// A body that parses serialises (as a dead property is stored and replayed) to XML
    /// that parses back to the same tree.
    static func roundTrip(_ bytes: [UInt8]) {
        guard let root = try? XMLDocumentParser.parse(bytes) else { return }
        let written = root.xmlString
        let reread: XMLElement
        do {
            reread = try XMLDocumentParser.parse(written)
        } catch {
            finding("the serialised element does not parse (\(error)):\n\(written)")
        }
        require(reread == root, "serialise -> parse changed the element:\n\(root)\nvs\n\(reread)\nwritten:\n\(written)")
        var inner = XMLWriter(declaration: false, rootPrefixes: [])
        inner.start(root.namespace, root.name)
        inner.raw(root.innerXML)
        inner.end()
        guard let replayed = try? XMLDocumentParser.parse(inner.string) else {
            finding("innerXML replayed in its element does not parse:\n\(inner.string)")
        }
        require(replayed.children == root.children && replayed.text == root.text,
                "innerXML replayed changed the content:\n\(root)\nvs\n\(replayed)")
    }

    /// A filter reads or is refused with a `FilterError`; one that reads is matched against
    /// sample cards, and its index form, when it has one, is built.
    static func filter(_ bytes: [UInt8]) {
        guard let root = try? XMLDocumentParser.parse(bytes) else { return }
        let carddav = "urn:ietf:params:xml:ns:carddav"
        guard let element = root.namespace == carddav && root.name == "filter" ? root : root.child(carddav, "filter"),
              let filter = try? AddressbookFilter(xml: element) else { return }
        var matched = 0
        for card in sampleCards where filter.matches(card) { matched += 1 }
        _ = filter.indexPredicate(indexedProperties: ["FN", "N", "NICKNAME", "EMAIL", "TEL", "ORG", "UID", "CATEGORIES"])
        if filter.propFilters.isEmpty { require(matched == sampleCards.count, "an empty filter must match every card") }
    }

    static let sampleCards: [VCard] = {
        let text = """
            BEGIN:VCARD\r
            VERSION:3.0\r
            UID:one\r
            FN:Émile Zola\r
            N:Zola;Émile;;;\r
            EMAIL;TYPE=INTERNET,HOME:EMILE@Example.COM\r
            item1.TEL;TYPE=CELL,pref:+33 1 23 45 67 89\r
            item1.X-ABLabel:_$!<Mobile>!$_\r
            ORG:Les Rougon\\;Macquart;Paris\r
            CATEGORIES:writers,friends\r
            NOTE:ß and ﬁ and İ and Σ\\, σ\\nς\r
            END:VCARD\r
            BEGIN:VCARD\r
            VERSION:4.0\r
            UID:two\r
            FN:山田太郎\r
            NICKNAME:Taro,タロウ\r
            TEL;VALUE=uri;TYPE=work:tel:+81-3-1234-5678\r
            EMAIL;PREF=1:taro@example.jp\r
            END:VCARD\r
            BEGIN:VCARD\r
            VERSION:3.0\r
            UID:three\r
            FN:X\r
            END:VCARD\r

            """
        return (try? VCardParser.parse(text)) ?? []
    }()
}
