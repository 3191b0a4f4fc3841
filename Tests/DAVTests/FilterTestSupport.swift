import DAVXML
import VCard
@testable import DAV

/// A card built in code: (name, parameters, value) triples; names may carry a group (`item1.EMAIL`).
func card(_ properties: [(String, [String: [String]], String)]) -> VCard {
    VCard(version: .v30, properties: properties.map { name, parameters, value in
        let parts = name.split(separator: ".", maxSplits: 1).map(String.init)
        return VCardProperty(group: parts.count == 2 ? parts[0] : nil, name: parts.last!,
                             parameters: parameters.sorted { $0.key < $1.key }.map { VCardParameter(name: $0.key, values: $0.value) },
                             rawValue: value)
    })
}

/// Parses `<C:filter …>…</C:filter>` written with the `C:` prefix bound to CardDAV.
func filter(_ xml: String) throws -> AddressbookFilter {
    let document = xml.replacingOccurrences(of: "<C:filter", with: #"<C:filter xmlns:C="urn:ietf:params:xml:ns:carddav""#)
    return try AddressbookFilter(xml: XMLDocumentParser.parse(Array(document.utf8)))
}

let cyrus = card([
    ("VERSION", [:], "3.0"),
    ("FN", [:], "Cyrus Daboo"),
    ("N", [:], "Daboo;Cyrus;;;"),
    ("NICKNAME", [:], "me"),
    ("item1.EMAIL", ["TYPE": ["INTERNET", "WORK"]], "cyrus@example.com"),
    ("EMAIL", ["TYPE": ["HOME"]], "daboo@home.example.org"),
    ("TEL", ["TYPE": ["CELL"]], "+1 555 0100"),
    ("ORG", [:], "Example Corp."),
    ("UID", [:], "cyrus-uid"),
])

let eric = card([
    ("VERSION", [:], "3.0"),
    ("FN", [:], "Eric York"),
    ("N", [:], "York;Eric;;;"),
    ("EMAIL", [:], "eric@example.com"),
    ("UID", [:], "eric-uid"),
])

let elodie = card([
    ("VERSION", [:], "3.0"),
    ("FN", [:], "ÉLODIE Straße"),
    ("UID", [:], "elodie-uid"),
])
