import DeviceProfiles
import Foundation
import Testing

@Suite struct CardDAVProfileTests {
    static func profile(_ url: String = "https://contacts.example.org:8443/carddav", device: String = "Anna's iPhone <&>") -> CardDAVProfile {
        CardDAVProfile(serverURL: URL(string: url)!, principalPath: "/carddav/dav/principals/anna/", user: "anna",
                       password: "rolo_7_secret&<>", deviceName: device,
                       uuid: UUID(uuidString: "0F6E2D1C-9B8A-4F3E-8D2C-1B0A99887766")!)
    }

    static func parse(_ data: Data) throws -> [String: Any] {
        try #require(try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
    }

    @Test func thePayloadHoldsEveryKeyIOSNeedsWithItsType() throws {
        let outer = try Self.parse(Self.profile().propertyList())
        #expect(outer["PayloadType"] as? String == "Configuration" && outer["PayloadVersion"] as? Int == 1)
        #expect(outer["PayloadUUID"] as? String == "0F6E2D1C-9B8A-4F3E-8D2C-1B0A99887766")
        #expect(outer["PayloadIdentifier"] as? String == "org.rolo.profile.0F6E2D1C-9B8A-4F3E-8D2C-1B0A99887766")
        #expect(outer["PayloadDisplayName"] as? String == "Rolo contacts for anna")
        let payloads = try #require(outer["PayloadContent"] as? [[String: Any]])
        #expect(payloads.count == 1)
        let carddav = payloads[0]
        #expect(carddav["PayloadType"] as? String == "com.apple.carddav.account")
        #expect(carddav["CardDAVHostName"] as? String == "contacts.example.org")
        #expect(carddav["CardDAVPort"] as? Int == 8443)
        #expect(carddav["CardDAVUseSSL"] as? Bool == true)
        #expect(carddav["CardDAVPrincipalURL"] as? String == "/carddav/dav/principals/anna/")
        #expect(carddav["CardDAVUsername"] as? String == "anna")
        #expect(carddav["CardDAVPassword"] as? String == "rolo_7_secret&<>")
        #expect(carddav["CardDAVAccountDescription"] as? String == "Rolo (Anna's iPhone <&>)")
        #expect(carddav["PayloadVersion"] as? Int == 1 && carddav["PayloadDisplayName"] as? String == "CardDAV")
        let inner = try #require(carddav["PayloadUUID"] as? String)
        #expect(UUID(uuidString: inner) != nil && inner != outer["PayloadUUID"] as? String)
        #expect(carddav["PayloadIdentifier"] as? String == "org.rolo.carddav." + inner)
    }

    @Test func thePortIsAlwaysWrittenFromTheScheme() throws {
        let plain = try Self.parse(Self.profile("http://127.0.0.1/").propertyList())
        let payload = try #require((plain["PayloadContent"] as? [[String: Any]])?.first)
        #expect(payload["CardDAVPort"] as? Int == 80 && payload["CardDAVUseSSL"] as? Bool == false)
        let tls = try #require((try Self.parse(Self.profile("https://example.org").propertyList())["PayloadContent"] as? [[String: Any]])?.first)
        #expect(tls["CardDAVPort"] as? Int == 443)
    }

    @Test func theSameProfileMadeTwiceHasTheSameIdentifiers() throws {
        #expect(try Self.profile().propertyList() == Self.profile().propertyList())
    }

    @Test func aControlCharacterInTheNameIsDroppedSoTheFileStaysXML() throws {
        let parsed = try Self.parse(Self.profile(device: "Phone\u{1}\u{7}X").propertyList())
        #expect((parsed["PayloadContent"] as? [[String: Any]])?.first?["CardDAVAccountDescription"] as? String == "Rolo (PhoneX)")
    }

    @Test func anAddressThatIsNotHTTPIsRefused() {
        #expect(throws: CardDAVProfile.AddressError.self) { try Self.profile("ftp://example.org/").propertyList() }
        #expect(throws: CardDAVProfile.AddressError.self) { try Self.profile("/dav/").propertyList() }
    }

    @Test func theFileNameKeepsOnlyASCIILettersAndDigits() {
        #expect(Self.profile(device: "Anna's iPhone").fileName == "rolo-Anna-s-iPhone.mobileconfig")
    }
}
