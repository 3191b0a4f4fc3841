@testable import DAV
import Testing

/// The multiget's href resolver reuses the resolution of the collection part shared by
/// consecutive hrefs; whatever the hrefs, it must answer what the full resolution answers.
@Suite struct MultigetHrefResolverTests {
    static let hrefs = [
        "/dav/addressbooks/alice/default/a.vcf",
        "/dav/addressbooks/alice/default/b.vcf",
        "/dav/addressbooks/alice/default/with%20space.vcf",
        "/dav/addressbooks/alice/default/c.vcf",
        "/dav/addressbooks/alice/default/.",
        "/dav/addressbooks/alice/default/..",
        "/dav/addressbooks/alice/default/",
        "/dav/addressbooks/alice/default/\u{301}accent.vcf",
        "/dav/addressbooks/alice/default/日本.vcf",
        "/dav/addressbooks/alice/default/q?x=1",
        "/dav/addressbooks/alice/work/a.vcf",
        "/dav/addressbooks/alice/default/d.vcf",
        "/dav/addressbooks/alice//default/e.vcf",
        "/dav/addressbooks/alice/default/e.vcf",
        "/dav/addressbooks/bob/default/a.vcf",
        "/dav/addressbooks/bob/default/b.vcf",
        "/dav/addressbooks/alice/de%2Ffault/a.vcf",
        "/dav/addressbooks/alice/de%2Ffault/b.vcf",
        "/dav/addressbooks/alice/bad%ZZ/a.vcf",
        "/dav/addressbooks/alice/bad%ZZ/b.vcf",
        "/dav/addressbooks/alice/a.vcf",
        "/dav/addressbooks/alice/b.vcf",
        "/dav/principals/alice/x.vcf",
        "https://rolo.example/dav/addressbooks/alice/default/f.vcf",
        "/dav/addressbooks/alice/default/g.vcf",
        "/elsewhere/alice/default/a.vcf",
        "/elsewhere/alice/default/b.vcf",
        "/dav/addressbooks/alice/default/h.vcf",
    ]

    @Test(arguments: ["alice", "bob"])
    func answersWhatTheFullResolutionAnswers(user: String) async throws {
        let dav = try await TestDAV()
        var resolver = MultigetHrefResolver()
        // Twice over, so every href also comes after every other one's collection part.
        for href in Self.hrefs + Self.hrefs.reversed() + Self.hrefs {
            let fast = resolver.target(href: href, user: user, service: dav.service)
            let full = dav.service.resourceTarget(href: href, user: user)
            #expect(fast?.book == full?.book, "\(href)")
            #expect(fast?.name == full?.name, "\(href)")
        }
    }

    @Test func aNameOfOneBookIsResolvedInThatBook() async throws {
        let dav = try await TestDAV()
        var resolver = MultigetHrefResolver()
        let first = resolver.target(href: "/dav/addressbooks/alice/default/a.vcf", user: "alice", service: dav.service)
        let second = resolver.target(href: "/dav/addressbooks/alice/default/b.vcf", user: "alice", service: dav.service)
        let other = resolver.target(href: "/dav/addressbooks/alice/work/b.vcf", user: "alice", service: dav.service)
        #expect(first?.book == ["default"] && first?.name == "a.vcf")
        #expect(second?.book == ["default"] && second?.name == "b.vcf")
        #expect(other?.book == ["work"] && other?.name == "b.vcf")
    }
}
