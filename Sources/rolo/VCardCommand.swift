import ArgumentParser
import Contacts
import Crypto
import Foundation
import VCard

/// `rolo vcard …`: look inside vCard files and convert them, without a server.
struct VCardCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vcard",
        abstract: "Inspect and convert vCard files.",
        subcommands: [VCardInspectCommand.self, VCardConvertCommand.self])
}

/// `rolo vcard inspect FILE`: the contact model of every card as JSON (the corpus oracle's shape).
/// Reads leniently, like an import: vCard 2.1 in any CHARSET, cards without VERSION,
/// unindented continuation lines, UTF-16 files, and jCard (input starting with '[').
struct VCardInspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Print every card as JSON: labels, preferences, dates, photo digest (FILE '-' reads stdin; vCard or jCard).")

    @Argument(help: "A .vcf file, or '-' for standard input.")
    var file: String

    func run() throws {
        let cards = try VCardInput.readCards(from: file)
        let json = JSONValue.array(cards.map { Contact(vCard: $0).oracleJSON(photoDigest: VCardInput.sha256Hex) })
        print(json.serialized(pretty: true))
    }
}

/// `rolo vcard convert --to 3.0|4.0|jcard FILE`: every card converted and written in the
/// target format. A card without FN gets the one Apple and Google clients would show.
struct VCardConvertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Convert every card to vCard 3.0, 4.0 or jCard (RFC 7095) and print it (FILE '-' reads stdin; vCard or jCard).")

    @Option(name: .customLong("to"), help: "Target format: 3.0, 4.0 or jcard.")
    var target: WritableVersion

    @Argument(help: "A .vcf or jCard .json file, or '-' for standard input.")
    var file: String

    func run() throws {
        let cards = try VCardInput.readCards(from: file, derivingFormattedNames: true)
        switch target {
        case .jcard:
            FileHandle.standardOutput.write(Data(JCard.encode(cards)))
        case .v30, .v40:
            let converted = cards.map { VCardConverter.addingFormattedName(VCardConverter.convert($0, to: target.version)) }
            FileHandle.standardOutput.write(Data(VCardWriter.write(converted).utf8))
        }
    }
}

/// The formats Rolo writes (2.1 is import-only).
enum WritableVersion: String, ExpressibleByArgument, CaseIterable {
    case v30 = "3.0"
    case v40 = "4.0"
    case jcard = "jcard"

    var version: VCardVersion { self == .v30 ? .v30 : .v40 }
}

/// Reading and checking the input of the `vcard` subcommands.
enum VCardInput {
    /// Parses (leniently, as an import does) and validates every card of FILE (or stdin for
    /// `-`); input whose first non-blank byte is `[` is read as jCard. With
    /// `derivingFormattedNames`, a card without FN gets a derived one before validation.
    /// On bad input prints `rolo: FILE: line N: what is wrong` to stderr and fails with exit code 1.
    static func readCards(from file: String, derivingFormattedNames: Bool = false) throws -> [VCard] {
        let bytes: [UInt8]
        do {
            bytes = file == "-" ? [UInt8](FileHandle.standardInput.readDataToEndOfFile())
                : [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        } catch {
            throw fail(file, "cannot read: \(error.localizedDescription)")
        }
        do {
            var cards = isJSON(bytes) ? try JCard.decode(bytes) : try VCardParser.parse(bytes, mode: .lenient)
            if derivingFormattedNames { cards = cards.map(VCardConverter.addingFormattedName) }
            for card in cards { try VCardValidator.validate(card, requireUID: false) }
            return cards
        } catch {
            throw fail(file, error.description)
        }
    }

    /// jCard input: the first byte after whitespace (and a UTF-8 byte order mark) is `[`.
    static func isJSON(_ bytes: [UInt8]) -> Bool {
        var index = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        while index < bytes.count, [0x20, 0x09, 0x0D, 0x0A].contains(bytes[index]) { index += 1 }
        return index < bytes.count && bytes[index] == UInt8(ascii: "[")
    }

    private static func fail(_ file: String, _ message: String) -> ExitCode {
        let name = file == "-" ? "<stdin>" : file
        FileHandle.standardError.write(Data("rolo: \(name): \(message)\n".utf8))
        return ExitCode.failure
    }

    /// Hex SHA-256 of a decoded photo, as the corpus oracle lists it.
    static func sha256Hex(_ bytes: [UInt8]) -> String {
        SHA256.hash(data: bytes).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}
