import Foundation
@testable import RoloServer
import Testing

/// The provider must be https; plain http only to a loopback address (a test's provider).
@Suite struct OIDCSettingsTests {
    @Test func onlyHTTPSOrLoopbackHTTPIsAnAllowedEndpoint() throws {
        let allowed = ["https://id.example.org/realms/x", "http://127.0.0.1:8080", "http://127.9.0.1/", "http://localhost:5556/dex",
                       "http://[::1]:9000/"]
        let refused = ["http://id.example.org", "http://10.0.0.1/", "http://128.0.0.1/", "ftp://id.example.org/",
                       "http://127.0.0.1.example.org/", "https:///nohost"]
        for text in allowed { #expect(OIDCSettings.isAllowedEndpoint(try #require(URL(string: text))), "\(text)") }
        for text in refused {
            if let url = URL(string: text) { #expect(!OIDCSettings.isAllowedEndpoint(url), "\(text)") }
        }
    }

    @Test func openidIsAlwaysAmongTheScopes() throws {
        let settings = OIDCSettings(issuer: try #require(URL(string: "https://id.example.org")), clientID: "rolo", scopes: ["email"])
        #expect(settings.scopes == ["openid", "email"])
    }
}
