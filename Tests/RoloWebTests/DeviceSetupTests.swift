import Crypto
import DeviceProfiles
import Foundation
import RoloStore
import Testing
import X509
@testable import RoloWeb

/// The privacy page's "Add a device" (issue 33): a profile for Apple devices, downloaded or
/// fetched once by the phone through a QR code's one-time URL, and the address, user name
/// and a DAVx5 QR code for the others.
@Suite struct DeviceSetupTests {
    static func created(_ web: WebHarness, _ fields: [(String, String)]) async throws -> (page: WebResponse, secret: String) {
        try await web.signIn()
        await web.get("/web/privacy")
        let page = await web.post("/web/privacy/tokens", fields + [("scope", "read-write"), ("books", "all")])
        #expect(page.status == 201, "\(page.text.prefix(500))")
        let range = try #require(page.text.range(of: #"rolo_[A-Za-z0-9_\-]+"#, options: .regularExpression))
        return (page, String(page.text[range]))
    }

    /// The `<img>` with `testid`: its `alt` and the SVG its `data:` URL holds.
    static func image(_ html: String, testid: String) throws -> (alt: String, svg: String) {
        let tag = try #require(html.firstMatch(of: try Regex(#"<img src="data:image/svg\+xml;base64,([^"]+)" alt="([^"]+)" width="(\d+)" height="(\d+)" data-testid=""# + testid + "\">")))
        let base64 = String(try #require(tag.output[1].substring))
        let data = try #require(Data(base64Encoded: base64))
        return (String(try #require(tag.output[2].substring)), String(decoding: data, as: UTF8.self))
    }

    @Test func theDevicePageOffersBothWaysEachWithAQRCodeThatHasATextAlternative() async throws {
        let web = try await WebHarness()
        let (page, _) = try await Self.created(web, [("name", "Anna's phone")])
        let profile = try Self.image(page.text, testid: "profile-qr")
        #expect(profile.alt.hasPrefix("QR code: opens the configuration profile for Anna"))
        #expect(profile.svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\"") && profile.svg.contains("<title>QR code"))
        let davx5 = try Self.image(page.text, testid: "davx5-qr")
        #expect(davx5.alt == "QR code: opens DAVx5 with the server address and the user name alice")
        #expect(page.text.contains("carddav://alice@127.0.0.1:8800/dav/"))
        #expect(page.text.contains("<code data-testid=\"dav-url\">http://127.0.0.1:8800/dav/</code>"))
        #expect(page.text.contains("data-testid=\"download-mobileconfig\""))
    }

    @Test func choosingADeviceShowsOnlyItsWay() async throws {
        let apple = try await Self.created(try await WebHarness(), [("name", "iPad"), ("device", "apple")]).page.text
        #expect(apple.contains("data-testid=\"profile-qr\"") && !apple.contains("data-testid=\"davx5-qr\""))
        let other = try await Self.created(try await WebHarness(), [("name", "Pixel"), ("device", "other")]).page.text
        #expect(other.contains("data-testid=\"davx5-qr\"") && !other.contains("data-testid=\"profile-qr\"") && !other.contains("/profile/"))
    }

    @Test func theOneTimeLinkGivesTheProfileOnceWithoutASession() async throws {
        let web = try await WebHarness(configuration: WebConfiguration(publicURL: URL(string: "https://contacts.example.org/")))
        let (page, secret) = try await Self.created(web, [("name", "Anna's iPhone"), ("device", "apple")])
        let match = try #require(page.text.firstMatch(of: /<code data-testid="profile-link">https:\/\/contacts\.example\.org(\/web\/profile\/[A-Za-z0-9_-]{43})<\/code>/))
        let path = String(match.output.1)
        web.cookies = [:]
        let download = await web.get(path)
        #expect(download.status == 200 && download.header("Content-Type") == "application/x-apple-aspen-config")
        #expect(download.header("Cache-Control") == "no-store")
        let outer = try #require(try PropertyListSerialization.propertyList(from: download.data, format: nil) as? [String: Any])
        let carddav = try #require((outer["PayloadContent"] as? [[String: Any]])?.first)
        #expect(carddav["CardDAVPassword"] as? String == secret && carddav["CardDAVUsername"] as? String == "alice")
        #expect(carddav["CardDAVHostName"] as? String == "contacts.example.org" && carddav["CardDAVPort"] as? Int == 443)
        #expect(carddav["CardDAVUseSSL"] as? Bool == true && carddav["CardDAVPrincipalURL"] as? String == "/dav/principals/alice/")
        // Once only; a made-up token is the same 404.
        #expect(await web.get(path).status == 404)
        #expect(await web.get("/web/profile/" + String(repeating: "A", count: 43)).status == 404)
        // Revoking the device revokes the password the profile carries.
        try await web.signIn()
        await web.get("/web/privacy")
        #expect(await web.post("/web/privacy/tokens/revoke", [("name", "Anna's iPhone")]).status == 303)
        #expect(try web.store.checkAppPassword(user: "alice", secret: secret)?.revoked == true)
    }

    /// With a signer configured, the download is CMS SignedData that carries the profile
    /// (openssl's verification of the same signer is in ProfileSignerTests and the CLI tests).
    @Test func withASignerTheDownloadIsSignedAndCarriesTheProfile() async throws {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName("Rolo web test") }
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey),
            notValidBefore: Date().addingTimeInterval(-60), notValidAfter: Date().addingTimeInterval(3600),
            issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256, extensions: Certificate.Extensions {},
            issuerPrivateKey: .init(key))
        let signer = try ProfileSigner(certificatePEM: try certificate.serializeAsPEM().pemString, keyPEM: key.pemRepresentation)
        let web = try await WebHarness(configuration: WebConfiguration(profileSigner: signer))
        let (page, secret) = try await Self.created(web, [("name", "Signed iPad"), ("device", "apple")])
        #expect(page.text.contains("The profile is signed"))
        let download = await web.post("/web/privacy/mobileconfig", [("name", "Signed iPad"), ("secret", secret)])
        #expect(download.status == 200 && download.header("Content-Type") == "application/x-apple-aspen-config")
        #expect(download.data.first == 0x30 && !download.text.hasPrefix("<?xml"))
        // Not detached: the XML profile is inside, with the password the page showed.
        #expect(download.data.range(of: Data("<key>CardDAVPassword</key><string>\(secret)</string>".utf8)) != nil)
        #expect(download.data.range(of: Data("com.apple.carddav.account".utf8)) != nil)
    }

    @Test func aWaitingProfileExpiresAfterTenMinutes() async {
        let downloads = ProfileDownloads()
        let start = Date()
        let token = await downloads.add(.plain("profile", status: 200), now: start)
        #expect(await downloads.take(token, now: start.addingTimeInterval(ProfileDownloads.lifetime + 1)) == nil)
        let second = await downloads.add(.plain("profile", status: 200), now: start)
        #expect(await downloads.take(second, now: start.addingTimeInterval(60))?.text == "profile")
    }

    @Test func theAddADeviceFormOffersTheKindsOfDevice() async throws {
        let web = try await WebHarness()
        try await web.signIn()
        let page = await web.get("/web/privacy").text
        #expect(page.contains("Add a device") && page.contains("data-testid=\"device-apple\"") && page.contains("data-testid=\"device-other\""))
    }
}
