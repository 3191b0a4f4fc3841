/// The fuzz targets: each takes one input and either returns (the input was handled,
/// accepted or refused) or stops the process through `finding` when an invariant breaks.
/// libFuzzer reports a crash, a sanitizer error, a timeout (a hang) or a leak by itself;
/// the checks here add what a crash cannot show: a round trip that changes the data.
enum FuzzTarget: String, CaseIterable, Sendable {
    /// `VCardParser` in strict and lenient mode, then write and read back.
    case vcard
    /// Lenient parse, conversion to 3.0 and 4.0, write and read back; 4.0 -> 3.0 -> 4.0 loses nothing.
    case convert
    /// `JCard.decode` of JSON input, and jCard encode -> decode of vCard input.
    case jcard
    /// `XMLDocumentParser`, then serialise and parse again.
    case xml
    /// addressbook-query filters: XML -> `AddressbookFilter`, matched against sample cards.
    case filter
    /// Request heads: `RawRequestHead`'s verdict against NIO's HTTP/1 parser on the same bytes.
    case head

    func run(_ bytes: [UInt8]) {
        switch self {
        case .vcard: VCardChecks.parse(bytes)
        case .convert: VCardChecks.convert(bytes)
        case .jcard: VCardChecks.jcard(bytes)
        case .xml: XMLChecks.roundTrip(bytes)
        case .filter: XMLChecks.filter(bytes)
        case .head: HTTPHeadChecks.compareWithNIO(bytes)
        }
    }
}

/// Stops the process with the broken invariant; libFuzzer then saves the input.
func finding(_ message: String) -> Never {
    fatalError("fuzz finding: " + message)
}

func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { finding(message()) }
}
