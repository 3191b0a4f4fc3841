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
struct VCardInspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Print every card as JSON: labels, preferences, dates, photo digest (FILE '-' reads stdin).")

    @Argument(help: "A .vcf file, or '-' for standard input.")
    var file: String

    func run() throws {
        let cards = try VCardInput.readCards(from: file)
        let json = JSONValue.array(cards.map { Contact(vCard: $0).oracleJSON(photoDigest: VCardInput.sha256Hex) })
        print(json.serialized(pretty: true))
    }
}

/// `rolo vcard convert --to 3.0|4.0 FILE`: every card converted and written in the target version.
struct VCardConvertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Convert every card to vCard 3.0 or 4.0 and print it (FILE '-' reads stdin).")

    @Option(name: .customLong("to"), help: "Target version: 3.0 or 4.0.")
    var target: WritableVersion

    @Argument(help: "A .vcf file, or '-' for standard input.")
    var file: String

    func run() throws {
        let cards = try VCardInput.readCards(from: file)
        let converted = cards.map { VCardConverter.convert($0, to: target.version) }
        FileHandle.standardOutput.write(Data(VCardWriter.write(converted).utf8))
    }
}

/// The versions Rolo writes (2.1 is import-only).
enum WritableVersion: String, ExpressibleByArgument, CaseIterable {
    case v30 = "3.0"
    case v40 = "4.0"

    var version: VCardVersion { self == .v30 ? .v30 : .v40 }
}

/// Reading and checking the input of the `vcard` subcommands.
enum VCardInput {
    /// Parses and validates every card of FILE (or stdin for `-`). On bad input prints
    /// `rolo: FILE: line N: what is wrong` to stderr and fails with exit code 1.
    static func readCards(from file: String) throws -> [VCard] {
        let bytes: [UInt8]
        do {
            bytes = file == "-" ? [UInt8](FileHandle.standardInput.readDataToEndOfFile())
                : [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        } catch {
            throw fail(file, "cannot read: \(error.localizedDescription)")
        }
        do {
            let cards = try VCardParser.parse(bytes)
            for card in cards { try VCardValidator.validate(card, requireUID: false) }
            return cards
        } catch {
            throw fail(file, error.description)
        }
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
