import Foundation
import Testing
import VCard

/// Files the tests read: our own fixtures beside the tests, and the shared reference corpus
/// (`../shared/vcards` next to the repository), which may be absent.
enum Fixtures {
    /// Tests/ContactsTests/Fixtures
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures")

    /// The shared corpus directory, or nil when this checkout has none.
    static let corpusDirectory: URL? = {
        let repositoryRoot = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let corpus = repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared/vcards")
        let oracle = corpus.appendingPathComponent("expected.json").path
        return FileManager.default.fileExists(atPath: oracle) ? corpus : nil
    }()

    static let corpusSkipMessage = "reference corpus ../shared/vcards not found next to the repository: skipped"

    /// Top-level corpus .vcf names, sorted; empty without the corpus.
    static let corpusFiles: [String] = {
        guard let corpusDirectory,
              let names = try? FileManager.default.contentsOfDirectory(atPath: corpusDirectory.path) else { return [] }
        return names.filter { $0.hasSuffix(".vcf") }.sorted()
    }()

    static func cards(fixture name: String) throws -> [VCard] {
        try VCardParser.parse([UInt8](try Data(contentsOf: directory.appendingPathComponent(name))))
    }

    static func cards(corpus name: String) throws -> [VCard] {
        let directory = try #require(corpusDirectory, "\(corpusSkipMessage)")
        return try VCardParser.parse([UInt8](try Data(contentsOf: directory.appendingPathComponent(name))))
    }

    /// Every card of the fixtures and (when present) the corpus, named for failure messages.
    static func allCards() throws -> [(name: String, card: VCard)] {
        let fixtureNames = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".vcf") }.sorted()
        var result: [(String, VCard)] = []
        for name in fixtureNames {
            for (index, card) in try cards(fixture: name).enumerated() { result.append(("\(name)#\(index)", card)) }
        }
        for name in corpusFiles {
            for (index, card) in try cards(corpus: name).enumerated() { result.append(("\(name)#\(index)", card)) }
        }
        return result
    }
}
