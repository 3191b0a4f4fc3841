import Foundation
import Testing

/// `rolo vcard inspect|convert`, run as the built binary.
@Suite(.serialized)
struct VCardCommandTests {
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let fixtures = repositoryRoot.appendingPathComponent("Tests/ContactsTests/Fixtures")

    private func cards(_ data: Data) throws -> [[String: Any]] {
        try #require(try JSONSerialization.jsonObject(with: data) as? [[String: Any]])
    }

    @Test func theBinaryIsBuilt() {
        #expect(FileManager.default.isExecutableFile(atPath: RoloBinary.url.path), "no rolo at \(RoloBinary.url.path)")
    }

    @Test func inspectPrintsOneJSONObjectPerCardInTheOracleShape() async throws {
        let run = try await RoloBinary.run(["vcard", "inspect", Self.fixtures.appendingPathComponent("apple-ios-3.0.vcf").path])
        #expect(run.status == 0, "\(run.stderr)")
        let card = try #require(try cards(run.output).first)
        #expect(card["uid"] as? String == "11111111-AAAA-4BBB-8CCC-000000000001")
        #expect(card["kind"] as? String == "person")
        #expect(card["birthday"] as? String == "--07-04")
        let phones = try #require(card["phones"] as? [[String: Any]])
        #expect(phones.map { $0["label"] as? String } == ["mobile", "iPhone", "homeFax", "other", "Boat"])
        #expect(phones.first?["preferred"] as? Bool == true)
        let addresses = try #require(card["addresses"] as? [[String: Any]])
        #expect(addresses.first?["country_code"] as? String == "no")
        let photo = try #require(card["photo"] as? [String: Any])
        #expect(photo["media_type"] as? String == "image/jpeg")
        #expect((photo["sha256"] as? String)?.count == 64)
        // Pretty and sorted: "addresses" is the first key.
        #expect(String(decoding: run.output, as: UTF8.self).hasPrefix("[\n  {\n    \"addresses\""))
    }

    @Test func inspectPhotoDigestMatchesTheCorpusOracle() async throws {
        let corpus = Self.repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared/vcards")
        let oraclePath = corpus.appendingPathComponent("expected.json")
        guard FileManager.default.fileExists(atPath: oraclePath.path) else {
            print("reference corpus ../shared/vcards not found: photo digest check skipped")
            return
        }
        let oracle = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: oraclePath)) as? [String: Any])
        let files = try #require(oracle["files"] as? [String: [String: Any]])
        var checked = 0
        for (name, entry) in files.sorted(by: { $0.key < $1.key }) where !name.hasPrefix("invalid/") {
            let expected = try #require(entry["cards"] as? [[String: Any]])
            guard expected.contains(where: { $0["photo"] != nil }) else { continue }
            let run = try await RoloBinary.run(["vcard", "inspect", corpus.appendingPathComponent(name).path])
            #expect(run.status == 0, "\(name): \(run.stderr)")
            for (index, card) in try cards(run.output).enumerated() {
                guard let photo = expected[index]["photo"] as? [String: Any] else { continue }
                let actual = card["photo"] as? [String: Any]
                #expect(actual?["sha256"] as? String == photo["sha256"] as? String, "\(name) card \(index)")
                #expect(actual?["bytes"] as? Int == photo["bytes"] as? Int, "\(name) card \(index)")
                checked += 1
            }
        }
        #expect(checked >= 4)
    }

    @Test func inspectReadsStandardInputForADash() async throws {
        let file = Self.fixtures.appendingPathComponent("groups.vcf")
        let fromFile = try await RoloBinary.run(["vcard", "inspect", file.path])
        let fromStdin = try await RoloBinary.run(["vcard", "inspect", "-"], stdin: try Data(contentsOf: file))
        #expect(fromStdin.status == 0, "\(fromStdin.stderr)")
        #expect(fromStdin.output == fromFile.output)
        let groups = try cards(fromStdin.output)
        #expect(groups.count == 3)
        #expect(groups.first?["members"] as? [String] == ["11111111-AAAA-4BBB-8CCC-000000000001",
                                                         "0D0D0D0D-DEAD-4BEE-8F00-123456789ABC"])
    }

    @Test func convertWritesEveryCardInTheTargetVersion() async throws {
        let file = Self.fixtures.appendingPathComponent("apple-ios-3.0.vcf").path
        let run = try await RoloBinary.run(["vcard", "convert", "--to", "4.0", file])
        #expect(run.status == 0, "\(run.stderr)")
        let text = String(decoding: run.output, as: UTF8.self)
        #expect(text.hasPrefix("BEGIN:VCARD\r\nVERSION:4.0\r\n"))
        #expect(text.contains("BDAY:--0704\r\n"))
        #expect(text.contains("PREF=1"))
        // And back: the converted card inspects to the same labels.
        let back = try await RoloBinary.run(["vcard", "convert", "--to", "3.0", "-"], stdin: run.output)
        #expect(back.status == 0, "\(back.stderr)")
        let original = try await RoloBinary.run(["vcard", "inspect", file])
        let roundTripped = try await RoloBinary.run(["vcard", "inspect", "-"], stdin: back.output)
        let phones = { (data: Data) throws -> [String?] in
            try (self.cards(data).first?["phones"] as? [[String: Any]] ?? []).map { $0["label"] as? String }
        }
        #expect(try phones(roundTripped.output) == phones(original.output))
    }

    @Test func convertRefusesAVersionItDoesNotWrite() async throws {
        let run = try await RoloBinary.run(["vcard", "convert", "--to", "2.1", Self.fixtures.appendingPathComponent("groups.vcf").path])
        #expect(run.status != 0)
        #expect(run.output.isEmpty)
    }

    @Test func aBadFileExitsNonZeroNamingTheLine() async throws {
        let bad = FileManager.default.temporaryDirectory.appendingPathComponent("rolo-bad-\(UUID().uuidString).vcf")
        try Data("BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Broken\r\nUID:x\r\nTEL;TYPE=\"cell,voice:+1 555\r\nEND:VCARD\r\n".utf8)
            .write(to: bad)
        defer { try? FileManager.default.removeItem(at: bad) }
        for command in [["vcard", "inspect", bad.path], ["vcard", "convert", "--to", "4.0", bad.path]] {
            let run = try await RoloBinary.run(command)
            #expect(run.status != 0, "\(command)")
            #expect(run.output.isEmpty)
            #expect(run.stderr.contains("line 5"), "stderr: \(run.stderr)")
            #expect(run.stderr.contains(bad.path))
        }
    }

    /// The tools read leniently (issue 21): a card without UID, or without VERSION (read by
    /// its shape), is inspected; everything else in the invalid corpus is refused.
    @Test func everyInvalidCorpusFileIsRefusedExceptAMissingUIDOrVersion() async throws {
        let invalid = Self.repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared/vcards/invalid")
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: invalid.path) else {
            print("reference corpus ../shared/vcards not found: invalid-file check skipped")
            return
        }
        for name in names.sorted() where name.hasSuffix(".vcf") {
            let run = try await RoloBinary.run(["vcard", "inspect", invalid.appendingPathComponent(name).path])
            if name == "missing-uid-3.0.vcf" || name == "missing-version.vcf" {
                #expect(run.status == 0, "the tools read \(name): \(run.stderr)")
            } else {
                #expect(run.status != 0 && !run.stderr.isEmpty, "\(name) was accepted")
            }
        }
    }

    @Test func aMissingFileExitsNonZero() async throws {
        let run = try await RoloBinary.run(["vcard", "inspect", "/nonexistent/rolo-missing.vcf"])
        #expect(run.status != 0)
        #expect(run.stderr.contains("cannot read"))
    }
}
