import Foundation
import Testing
import WebPush

@Suite struct Base64URLTests {
    @Test func encodesWithoutPaddingInTheURLAlphabet() {
        #expect(Base64URL.encode(Data()) == "")
        #expect(Base64URL.encode(Data("f".utf8)) == "Zg")
        #expect(Base64URL.encode(Data("fo".utf8)) == "Zm8")
        #expect(Base64URL.encode(Data("foo".utf8)) == "Zm9v")
        #expect(Base64URL.encode([0xFB, 0xFF, 0xBF]) == "-_-_")
        #expect(Base64URL.encode([0xFB, 0xFF]) == "-_8")
    }

    @Test(arguments: [
        ("-_-_", [0xFB, 0xFF, 0xBF]),
        ("+/+/", [0xFB, 0xFF, 0xBF]),
        ("-/+_", [0xFB, 0xFF, 0xBF]),       // mixed alphabets
        ("-_8", [0xFB, 0xFF]),
        ("-_8=", [0xFB, 0xFF]),
        ("Zg", [0x66]),
        ("Zg==", [0x66]),
        ("", []),
    ] as [(String, [UInt8])])
    func decodesEitherAlphabetWithOrWithoutPadding(text: String, bytes: [UInt8]) {
        #expect(Base64URL.decode(text) == Data(bytes))
    }

    @Test(arguments: [
        "Z",            // a length no encoder makes
        "Zg=",          // short padding
        "Zg===",        // excess padding
        "Zm9v=",        // padding after a full group
        "Z=g=",         // padding inside
        "====",
        "Zm 9v",        // whitespace
        "Zm9v\n",
        "Zm9v$",
        "Zm9v.",
        "Zm9vé",
    ])
    func refusesGarbage(text: String) {
        #expect(Base64URL.decode(text) == nil)
    }

    @Test func roundTripsEveryLength() {
        for length in 0..<70 {
            let bytes = Data((0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) })
            let text = Base64URL.encode(bytes)
            #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
            #expect(Base64URL.decode(text) == bytes)
        }
    }
}
