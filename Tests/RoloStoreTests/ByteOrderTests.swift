@testable import RoloStore
import Testing

/// `precedesInBytes` is the databases' order of names ("C" / BINARY collation), whatever
/// the strings' canonical equivalence or length: it must agree with comparing the UTF-8 bytes
/// one by one.
@Suite struct ByteOrderTests {
    static let names = ["", "a", "A", "a.vcf", "a.vcf2", "ab", "b", "Zed", "é", "e\u{301}", "ee", "\u{7F}", "\u{80}",
                        "\u{FFFD}", "😀", "😀a", "x\u{10FFFF}", String(repeating: "long-uid-", count: 30),
                        String(repeating: "long-uid-", count: 30) + "a"]

    @Test func itOrdersAsTheBytesDo() {
        for a in Self.names {
            for b in Self.names {
                #expect(a.precedesInBytes(b) == a.utf8.lexicographicallyPrecedes(b.utf8), "\(a.debugDescription) < \(b.debugDescription)")
                #expect(a.isExactly(b) == a.utf8.elementsEqual(b.utf8))
            }
        }
        // Canonically equal, yet two names, in an order.
        #expect("é" == "e\u{301}" && !"é".isExactly("e\u{301}"))
        #expect("e\u{301}".precedesInBytes("é") && !"é".precedesInBytes("e\u{301}"))
        // A byte above 0x7F sorts after every ASCII byte: unsigned, as the databases compare.
        #expect("z".precedesInBytes("\u{80}"))
    }
}
