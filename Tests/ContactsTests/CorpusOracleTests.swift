import Contacts
import Foundation
import Testing
import VCard

/// The shared corpus: every top-level .vcf read into the model matches expected.json.
@Suite(.enabled(if: Fixtures.corpusDirectory != nil, "\(Fixtures.corpusSkipMessage)"))
struct CorpusOracleTests {
    static let oracle: JSONValue? = {
        guard let directory = Fixtures.corpusDirectory,
              let text = try? String(contentsOf: directory.appendingPathComponent("expected.json"), encoding: .utf8)
        else { return nil }
        return try? JSONValue(parsing: text)
    }()

    @Test func oracleListsEveryTopLevelFile() throws {
        let files = try #require(Self.oracle?["files"])
        for name in Fixtures.corpusFiles {
            #expect(files[name] != nil, "expected.json has no entry for \(name)")
        }
        #expect(Fixtures.corpusFiles.count >= 29)
    }

    @Test(arguments: Fixtures.corpusFiles)
    func modelMatchesOracle(file: String) throws {
        let expectedCards = try #require(Self.oracle?["files"]?[file]?["cards"], "no oracle cards for \(file)")
        let cards = try Fixtures.cards(corpus: file)
        let actual = JSONValue.array(cards.map { Contact(vCard: $0).oracleJSON() })
        // sha256 needs a hash function Contacts does not have: RoloCLITests checks it through `rolo vcard inspect`.
        let differences = OracleDiff.differences(expected: expectedCards, actual: actual, path: file,
                                                 ignoring: ["sha256"])
        #expect(differences.isEmpty, "\(differences.count) differences:\n\(differences.joined(separator: "\n"))")
    }
}
