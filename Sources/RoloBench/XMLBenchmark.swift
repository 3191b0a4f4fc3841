import DAVXML
import Foundation

/// `RoloBench xml [--rounds R]`: the XML a DAV request costs, one thread: parsing the
/// request bodies clients send (a PROPFIND, a multiget of 1000 hrefs, a sync-collection, an
/// addressbook-query, a PROPPATCH with an `xml:lang` dead property), writing a
/// multistatus of 1000 responses, and escaping the address data of a multiget of 100.
/// Best of R rounds, in documents/s and MB/s.
func runXMLBenchmark(_ arguments: [String]) {
    var rounds = 5
    var index = 0
    while index < arguments.count {
        let value = index + 1 < arguments.count ? arguments[index + 1] : ""
        switch arguments[index] {
        case "--rounds": rounds = Int(value) ?? rounds
        default:
            FileHandle.standardError.write(Data("usage: RoloBench xml [--rounds R]\n".utf8))
            exit(2)
        }
        index += 2
    }
    for (label, body) in XMLBodies.requests {
        let bytes = Array(body.utf8)
        let repeats = max(1, 20_000_000 / max(bytes.count, 1) / 10)
        let best = bestOf(rounds) {
            for _ in 0..<repeats { xmlSink &+= (try? XMLDocumentParser.parse(bytes).children.count) ?? 0 }
        }
        report("parse \(label)", documents: repeats, bytes: bytes.count * repeats, seconds: best)
    }
    let size = XMLBodies.multistatus(responses: 1000).count
    let writes = 200
    let best = bestOf(rounds) {
        for _ in 0..<writes { xmlSink &+= XMLBodies.multistatus(responses: 1000).count }
    }
    report("write multistatus of 1000 responses", documents: writes, bytes: size * writes, seconds: best)
    // The escaping of address data: a multiget of 100 cards as carddav-bench makes them.
    let cards = XMLBodies.cards(100)
    let cardBytes = cards.reduce(0) { $0 + $1.count }
    let cardWrites = 400
    let bestCards = bestOf(rounds) {
        for _ in 0..<cardWrites {
            var writer = XMLWriter()
            writer.start(XMLNamespace.carddav, "address-data")
            for card in cards { writer.text(utf8: card) }
            writer.end()
            xmlSink &+= writer.bytes.count
        }
    }
    report("escape address data of 100 cards", documents: cardWrites, bytes: cardBytes * cardWrites, seconds: bestCards)
}

/// Keeps the measured work from being optimised away.
nonisolated(unsafe) private var xmlSink = 0

private func bestOf(_ rounds: Int, _ work: () -> Void) -> Double {
    let clock = ContinuousClock()
    var best = Duration.seconds(1_000_000)
    for _ in 0..<max(rounds, 1) { best = min(best, clock.measure(work)) }
    return best.inSeconds
}

private func report(_ label: String, documents: Int, bytes: Int, seconds: Double) {
    let perSecond = Double(documents) / seconds
    let megabytes = Double(bytes) / seconds / 1e6
    print("xml \(label): \(String(format: "%.0f", perSecond)) documents/s, \(String(format: "%.0f", megabytes)) MB/s")
}

/// Request bodies shaped like the ones DAVx5, iOS and vdirsyncer send.
enum XMLBodies {
    static let propfind = """
        <?xml version="1.0" encoding="utf-8"?>
        <d:propfind xmlns:d="DAV:" xmlns:cs="http://calendarserver.org/ns/" xmlns:card="urn:ietf:params:xml:ns:carddav">
          <d:prop><d:resourcetype/><d:displayname/><cs:getctag/><d:sync-token/><d:getetag/><d:getcontenttype/>
          <card:supported-address-data/><d:current-user-privilege-set/><d:owner/></d:prop>
        </d:propfind>
        """

    static var multiget: String {
        let hrefs = (0..<1000).map { "  <d:href>/dav/addressbooks/alice/default/\(UUID(uuidString: String(format: "00000000-0000-0000-0000-%012d", $0))!.uuidString).vcf</d:href>" }
        return """
            <?xml version="1.0" encoding="utf-8"?>
            <card:addressbook-multiget xmlns:d="DAV:" xmlns:card="urn:ietf:params:xml:ns:carddav">
              <d:prop><d:getetag/><card:address-data/></d:prop>
            \(hrefs.joined(separator: "\n"))
            </card:addressbook-multiget>
            """
    }

    static let sync = """
        <?xml version="1.0" encoding="utf-8"?>
        <d:sync-collection xmlns:d="DAV:"><d:sync-token>http://rolo.example/ns/sync/1234-5678</d:sync-token>
        <d:sync-level>1</d:sync-level><d:prop><d:getetag/><d:getcontenttype/></d:prop></d:sync-collection>
        """

    static let query = """
        <?xml version="1.0" encoding="utf-8"?>
        <card:addressbook-query xmlns:d="DAV:" xmlns:card="urn:ietf:params:xml:ns:carddav">
          <d:prop><d:getetag/><card:address-data><card:prop name="FN"/><card:prop name="EMAIL"/></card:address-data></d:prop>
          <card:filter test="anyof">
            <card:prop-filter name="FN"><card:text-match collation="i;unicode-casemap" match-type="contains">lind</card:text-match></card:prop-filter>
            <card:prop-filter name="EMAIL"><card:text-match collation="i;unicode-casemap" match-type="starts-with">anna</card:text-match></card:prop-filter>
          </card:filter>
          <card:limit><card:nresults>100</card:nresults></card:limit>
        </card:addressbook-query>
        """

    static let proppatch = """
        <?xml version="1.0" encoding="utf-8"?>
        <d:propertyupdate xmlns:d="DAV:" xmlns:x="http://example.com/ns/">
          <d:set><d:prop><d:displayname>Familie &amp; Freunde</d:displayname>
          <x:note xml:lang="de">Geburtstage im <x:b>März</x:b></x:note></d:prop></d:set>
          <d:remove><d:prop><x:old/></d:prop></d:remove>
        </d:propertyupdate>
        """

    static var requests: [(String, String)] {
        [("PROPFIND", propfind), ("multiget of 1000", multiget), ("sync-collection", sync),
         ("addressbook-query", query), ("PROPPATCH", proppatch)]
    }

    /// Cards like carddav-bench's: names in several scripts, labeled phones and emails, an
    /// address, CR LF line ends, and every twentieth with a 20 KB photo folded at 75 bytes.
    static func cards(_ count: Int) -> [[UInt8]] {
        let names = ["Anna Lindqvist", "Дмитрий Смирнов", "Σοφία Παπαδοπούλου", "王秀英", "فاطمة الزهراء", "Zoë O'Brien & Co"]
        let photo = String(repeating: "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9w", count: 500)
        return (0..<count).map { index in
            let name = names[index % names.count]
            var lines = ["BEGIN:VCARD", "VERSION:3.0", "UID:card-\(index)", "FN:\(name) \(index)", "N:\(name);;;;",
                         "item1.TEL;TYPE=CELL:+1 555 010 \(1000 + index)", "item1.X-ABLabel:mobile <work>",
                         "EMAIL;TYPE=INTERNET:person\(index)@example.org", "ADR;TYPE=HOME:;;\(index) Main Street;Springfield;;12345;USA",
                         "NOTE:Met at the conference; likes tea & biscuits."]
            if index % 20 == 0 {
                var folded = "PHOTO;ENCODING=b;TYPE=JPEG:"
                var rest = Substring(photo)
                folded += rest.prefix(48); rest = rest.dropFirst(48)
                while !rest.isEmpty { folded += "\r\n " + rest.prefix(74); rest = rest.dropFirst(74) }
                lines.append(folded)
            }
            lines.append("END:VCARD")
            return Array((lines.joined(separator: "\r\n") + "\r\n").utf8)
        }
    }

    /// A PROPFIND Depth 1 answer: 1000 cards with their ETag and content type.
    static func multistatus(responses: Int) -> [UInt8] {
        var writer = XMLWriter()
        writer.start(XMLNamespace.dav, "multistatus")
        for index in 0..<responses {
            writer.start(XMLNamespace.dav, "response")
            writer.start(XMLNamespace.dav, "href")
            writer.text("/dav/addressbooks/alice/default/card-\(index)%20é.vcf")
            writer.end()
            writer.start(XMLNamespace.dav, "propstat")
            writer.start(XMLNamespace.dav, "prop")
            writer.start(XMLNamespace.dav, "getetag")
            writer.text("\"\(index)-5f3a9c\"")
            writer.end()
            writer.start(XMLNamespace.dav, "getcontenttype")
            writer.text("text/vcard; charset=utf-8")
            writer.end()
            writer.end()
            writer.start(XMLNamespace.dav, "status")
            writer.text("HTTP/1.1 200 OK")
            writer.end()
            writer.end()
            writer.end()
        }
        writer.end()
        return writer.bytes
    }
}
