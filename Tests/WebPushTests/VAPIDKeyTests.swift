import Crypto
import Foundation
import PushTestSupport
import Testing
import WebPush

@Suite struct VAPIDKeyTests {
    @Test func publicKeyIsTheUncompressedPointIn87Characters() {
        let key = VAPIDKey()
        #expect(key.publicKey.count == 65 && key.publicKey.first == 0x04)
        #expect(key.publicKeyBase64URL.count == 87)
        #expect(key.publicKeyBase64URL.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
    }

    @Test func rawRepresentationRoundTrips() throws {
        let key = VAPIDKey()
        #expect(key.rawRepresentation.count == 32)
        let restored = try VAPIDKey(rawRepresentation: key.rawRepresentation)
        #expect(restored.publicKey == key.publicKey)
        #expect(throws: (any Error).self) { try VAPIDKey(rawRepresentation: Data(count: 31)) }
    }

    @Test func authorizationVerifiesAgainstThePublicKey() throws {
        let key = VAPIDKey()
        let expires = Date(timeIntervalSince1970: 1_800_000_000.75)
        let header = try key.authorization(audience: "https://push.example.net", subject: "mailto:admin@example.org",
                                           expires: expires)
        #expect(header.hasPrefix("vapid t=") && header.hasSuffix(", k=\(key.publicKeyBase64URL)"))
        let verified = try VAPIDVerification.verify(authorization: header)
        #expect(verified.claims == .init(aud: "https://push.example.net", exp: 1_800_000_000, sub: "mailto:admin@example.org"))
        #expect(verified.signatureLength == 64)
        #expect(verified.publicKey == key.publicKey)
    }

    @Test func tokenIsES256CompactWithRawSignatureAndUnescapedSlashes() throws {
        let key = VAPIDKey()
        let token = try key.token(audience: "https://push.example.net", subject: "https://rolo.example.org/",
                                  expires: Date(timeIntervalSince1970: 1_700_000_000))
        let parts = token.split(separator: ".").map(String.init)
        #expect(parts.count == 3)
        #expect(String(decoding: Base64URL.decode(parts[0])!, as: UTF8.self) == #"{"alg":"ES256","typ":"JWT"}"#)
        #expect(String(decoding: Base64URL.decode(parts[1])!, as: UTF8.self)
            == #"{"aud":"https://push.example.net","exp":1700000000,"sub":"https://rolo.example.org/"}"#)
        let signature = Base64URL.decode(parts[2])!
        #expect(signature.count == 64)
        let publicKey = try P256.Signing.PublicKey(x963Representation: key.publicKey)
        #expect(publicKey.isValidSignature(try P256.Signing.ECDSASignature(rawRepresentation: signature),
                                           for: Data("\(parts[0]).\(parts[1])".utf8)))
    }

    @Test func aSignatureFromAnotherKeyFails() throws {
        let header = try VAPIDKey().authorization(audience: "https://a.example", subject: "mailto:a@b.c", expires: Date())
        let forged = header.replacingOccurrences(of: #"k=\S+$"#, with: "k=\(VAPIDKey().publicKeyBase64URL)",
                                                 options: .regularExpression)
        #expect(throws: VAPIDVerification.Failure.badSignature) { try VAPIDVerification.verify(authorization: forged) }
    }

    @Test(arguments: [
        ("https://push.example.net/wpush/v2/abc?x=1", "https://push.example.net"),
        ("https://push.example.net:443/a", "https://push.example.net"),
        ("https://push.example.net:8443/a", "https://push.example.net:8443"),
        ("http://127.0.0.1:8080/push", "http://127.0.0.1:8080"),
        ("http://127.0.0.1:80/push", "http://127.0.0.1"),
        ("HTTPS://Push.Example.NET/A", "https://push.example.net"),
        ("https://[2001:DB8::1]:8443/x", "https://[2001:db8::1]:8443"),
        ("https://[::1]/x", "https://[::1]"),
    ])
    func originIsSchemeHostAndNonDefaultPort(url: String, origin: String) {
        #expect(VAPIDKey.origin(of: URL(string: url)!) == origin)
    }

    @Test func originNeedsASchemeAndAHost() {
        #expect(VAPIDKey.origin(of: URL(string: "/relative")!) == nil)
        #expect(VAPIDKey.origin(of: URL(string: "https:///path")!) == nil)
    }
}
