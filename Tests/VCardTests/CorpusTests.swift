import Foundation
import Testing
@testable import VCard

/// The shared reference corpus (`../shared/vcards` beside the repository) against its oracle.
enum Corpus {
    static let directory: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/vcards")

    static let isAvailable: Bool = {
        let present = FileManager.default.fileExists(atPath: directory.appendingPathComponent("expected.json").path)
        if !present { print("VCard corpus tests skipped: \(directory.path) not found") }
        return present
    }()

    /// Read on each use: `[String: Any]` is not Sendable, so it cannot be a shared constant.
    static var oracle: [String: [String: Any]] {
        guard let data = try? Data(contentsOf: directory.appendingPathComponent("expected.json")),
              let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let files = json["files"] as? [String: [String: Any]]
        else { return [:] }
        return files
    }

    static func bytes(_ name: String) -> [UInt8] {
        (try? [UInt8](Data(contentsOf: directory.appendingPathComponent(name)))) ?? []
    }

    static var validFiles: [String] { oracle.keys.filter { !$0.hasPrefix("invalid/") }.sorted() }
    static var invalidFiles: [String] { oracle.keys.filter { $0.hasPrefix("invalid/") }.sorted() }
}

@Suite(.enabled(if: Corpus.isAvailable, "shared corpus ../shared/vcards not present"))
struct CorpusTests {
    @Test func everyCorpusFileHasAnOracleEntry() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Corpus.directory.path).filter { $0.hasSuffix(".vcf") }
        let invalid = try FileManager.default.contentsOfDirectory(atPath: Corpus.directory.appendingPathComponent("invalid").path)
        #expect(Set(names + invalid.map { "invalid/" + $0 }) == Set(Corpus.oracle.keys))
        #expect(Corpus.validFiles.count >= 25)
    }

    @Test(arguments: Corpus.validFiles)
    func parsesIntoTheOracleFacts(file: String) throws {
        let cards = try VCardParser.parse(Corpus.bytes(file))
        let expected = try #require(Corpus.oracle[file]?["cards"] as? [[String: Any]])
        try #require(cards.count == expected.count)
        for (card, facts) in zip(cards, expected) {
            checkFacts(card, facts, context: "\(file) as parsed")
        }
    }

    @Test(arguments: Corpus.validFiles)
    func conversionsKeepEveryLabeledValue(file: String) throws {
        let cards = try VCardParser.parse(Corpus.bytes(file))
        let expected = try #require(Corpus.oracle[file]?["cards"] as? [[String: Any]])
        for (card, facts) in zip(cards, expected) {
            let v4 = VCardConverter.convert(card, to: .v40)
            let v3 = VCardConverter.convert(card, to: .v30)
            checkFacts(v4, facts, context: "\(file) -> 4.0")
            checkFacts(v3, facts, context: "\(file) -> 3.0")
            checkFacts(VCardConverter.convert(v4, to: .v30), facts, context: "\(file) -> 4.0 -> 3.0")
            checkFacts(VCardConverter.convert(v3, to: .v40), facts, context: "\(file) -> 3.0 -> 4.0")
        }
    }

    @Test(arguments: Corpus.validFiles)
    func parseWriteParseIsTheIdentity(file: String) throws {
        for card in try VCardParser.parse(Corpus.bytes(file)) where card.version != .v21 {
            let again = try parseOne(VCardWriter.write(card))
            #expect(withoutLines(again) == withoutLines(card), "\(file)")
        }
    }

    @Test(arguments: Corpus.validFiles)
    func threeToFourToThreeKeepsLabeledPropertiesExactly(file: String) throws {
        for card in try VCardParser.parse(Corpus.bytes(file)) {
            let v3 = VCardConverter.convert(card, to: .v30)
            let back = VCardConverter.convert(try parseOne(VCardWriter.write(VCardConverter.convert(v3, to: .v40))), to: .v30)
            for (_, names) in OracleReader.labeledNames + [("other", ["IMPP", "X-SOCIALPROFILE", "LABEL", "PHOTO", "BDAY", "CATEGORIES", "X-ABADR"])] {
                let before = v3.properties.filter { names.contains($0.name) }
                let after = back.properties.filter { names.contains($0.name) }
                #expect(after.map(\.rawValue) == before.map(\.rawValue), "\(file) \(names)")
                #expect(after.map { Set($0.types) } == before.map { Set($0.types) }, "\(file) \(names)")
                #expect(OracleReader.labeled(back, names) == OracleReader.labeled(v3, names), "\(file) \(names)")
            }
            #expect(back.properties.filter { $0.name.hasPrefix("X-") }.count >= v3.properties.filter { $0.name.hasPrefix("X-") }.count)
        }
    }

    @Test(arguments: Corpus.invalidFiles)
    func invalidFilesAreRejectedWithLineAndMention(file: String) throws {
        let entry = try #require(Corpus.oracle[file])
        let mentions = entry["error_mentions"] as? [String] ?? []
        let line = entry["line"] as? Int
        let importable = (entry["import"] as? [String: Any])?["accept"] as? Bool ?? false
        guard let error = try rejection(of: file, importable: importable) else {
            Issue.record("\(file) was accepted")
            return
        }
        for word in mentions {
            #expect(error.message.lowercased().contains(word.lowercased()), "\(file): \(error) should mention \(word)")
        }
        if let line { #expect(error.line == line, "\(file): \(error)") }
    }

    /// The parse error, or the first validation error (requiring a UID); a file the oracle
    /// imports must also validate without the UID requirement.
    private func rejection(of file: String, importable: Bool) throws -> VCardError? {
        let cards: [VCard]
        do {
            cards = try VCardParser.parse(Corpus.bytes(file))
        } catch {
            return error
        }
        var failure: VCardError?
        for card in cards {
            do {
                try VCardValidator.validate(card, requireUID: true)
            } catch {
                failure = failure ?? error
            }
        }
        if importable {
            for card in cards { try VCardValidator.validate(card, requireUID: false) }
        }
        return failure
    }

    private func checkFacts(_ card: VCard, _ facts: [String: Any], context: String) {
        if let uid = facts["uid"] as? String {
            #expect(card.first("UID")?.text == uid, "\(context) uid")
        } else {
            #expect(card.first("UID") == nil, "\(context) uid")
        }
        #expect(card.first("FN")?.text == facts["formatted_name"] as? String, "\(context) FN")
        #expect(OracleReader.kind(card) == facts["kind"] as? String, "\(context) kind")
        #expect(OracleReader.categories(card) == facts["categories"] as? [String], "\(context) categories")
        if let members = facts["members"] as? [String] {
            #expect(OracleReader.members(card) == members, "\(context) members")
        }
        let birthday = card.first("BDAY").flatMap { $0.rawValue.isEmpty ? nil : OracleReader.date($0) }
        #expect(birthday == facts["birthday"] as? String, "\(context) birthday")
        for (key, names) in OracleReader.labeledNames {
            guard let entries = facts[key] as? [[String: Any]] else { continue }
            let expected = entries.map { entry in
                OracleReader.Labeled(label: entry["label"] as? String, value: oracleValue(entry["value"]), preferred: entry["preferred"] as? Bool ?? false)
            }
            var actual = OracleReader.labeled(card, names)
            if key == "dates" || key == "related_names" {
                // Date-times are compared by label and preference only.
                for index in actual.indices where index < expected.count && expected[index].value.contains("T") {
                    actual[index].value = expected[index].value
                }
            }
            #expect(actual == expected, "\(context) \(key)")
        }
    }

    private func oracleValue(_ value: Any?) -> String {
        if let text = value as? String { return text }
        if let address = value as? [String: String] {
            return ["pobox", "extended", "street", "locality", "region", "postal_code", "country"].map { address[$0] ?? "" }.joined(separator: "|")
        }
        return ""
    }
}
