import LDAPClient
import LDAPTestSupport
import Testing

/// TLS per connection: `ldaps://` and StartTLS verified against the throwaway CA, a server
/// the CA file does not vouch for refused as unavailable under `demand`, and `never`
/// skipping the check only where it is asked for.
@Suite struct LDAPTLSTests {
    static func bindsAsService(_ settings: LDAPSettings) async throws {
        let connection = try await LDAPConnection.open(settings)
        try await connection.bind(dn: TestDirectory.serviceDN, password: TestDirectory.servicePassword)
        let entries = try await connection.search(base: TestDirectory.baseDN, filter: "(uid=alice)", attributes: ["uid"])
        #expect(entries.map(\.dn) == [TestDirectory.userDN("alice")])
    }

    @Test func ldapsAndStartTLSWorkWithTheCAFileUnderDemand() async throws {
        try await withTestDirectory(tls: true) { directory in
            try await Self.bindsAsService(LDAPSettings(url: try #require(directory.tlsURL), caFile: directory.caFile,
                                                       tlsVerify: .demand))
            try await Self.bindsAsService(LDAPSettings(url: directory.url, startTLS: true, caFile: directory.caFile,
                                                       tlsVerify: .demand))
        }
    }

    @Test func anUnknownCertificateIsUnavailableUnderDemandAndAcceptedUnderNever() async throws {
        try await withTestDirectory(tls: true) { directory in
            let url = try #require(directory.tlsURL)
            // The system's CAs do not include the throwaway one.
            do {
                _ = try await LDAPConnection.open(LDAPSettings(url: url, tlsVerify: .demand, networkTimeoutSeconds: 2))
                Issue.record("ldaps:// with an unknown CA opened under demand")
            } catch LDAPError.unavailable {
            }
            do {
                _ = try await LDAPConnection.open(LDAPSettings(url: directory.url, startTLS: true, tlsVerify: .demand,
                                                               networkTimeoutSeconds: 2))
                Issue.record("StartTLS with an unknown CA opened under demand")
            } catch LDAPError.unavailable {
            }
            // The settings are the connection's own: the refusal above did not change this one.
            try await Self.bindsAsService(LDAPSettings(url: url, tlsVerify: .never))
        }
    }
}
