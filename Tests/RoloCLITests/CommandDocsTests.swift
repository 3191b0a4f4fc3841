import Foundation
import Testing

/// Docs/configuration.md's command table against the binary's own command tree
/// (`--experimental-dump-help`): every command is listed, and nothing listed is missing.
@Suite struct CommandDocsTests {
    /// Every command path the binary has, leaves only: `["user", "show"]`, `["check"]`.
    static func commands(in node: [String: Any], path: [String] = []) -> Set<[String]> {
        let subcommands = node["subcommands"] as? [[String: Any]] ?? []
        guard !subcommands.isEmpty else { return [path] }
        return subcommands.reduce(into: Set<[String]>()) { found, sub in
            found.formUnion(commands(in: sub, path: path + [sub["commandName"] as? String ?? "?"]))
        }
    }

    /// The command paths the table's first column names: the lower-case words after `rolo`
    /// in each code span (`rolo user add NAME [--password-stdin]` names `user add`).
    static func documented(_ markdown: String) -> Set<[String]> {
        var found = Set<[String]>()
        for line in markdown.split(separator: "\n") where line.hasPrefix("| `rolo ") {
            let firstCell = line.replacingOccurrences(of: "\\|", with: "/").dropFirst(2).prefix { $0 != "|" }
            for span in firstCell.split(separator: "`") where span.hasPrefix("rolo ") {
                let words = span.split(separator: " ").dropFirst()
                    .prefix { $0.wholeMatch(of: /[a-z][a-z0-9-]*/) != nil }.map(String.init)
                if !words.isEmpty { found.insert(words) }
            }
        }
        return found
    }

    @Test func theCommandTableListsEveryCommandAndNoOther() async throws {
        let dump = try await RoloBinary.run(["--experimental-dump-help"])
        #expect(dump.status == 0, "\(dump.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: dump.output) as? [String: Any])
        let root = try #require(json["command"] as? [String: Any])
        var binary = Self.commands(in: root)
        binary.insert(["help"])
        #expect(binary.contains(["user", "show"]) && binary.contains(["vcard", "inspect"]), "\(binary)")

        let docs = URL(fileURLWithPath: VersionTests.packageFolder).appendingPathComponent("Docs/configuration.md")
        let table = Self.documented(try String(contentsOf: docs, encoding: .utf8))
        let missing = binary.subtracting(table).map { $0.joined(separator: " ") }.sorted()
        let extra = table.subtracting(binary).map { $0.joined(separator: " ") }.sorted()
        #expect(missing.isEmpty, "commands Docs/configuration.md does not list: \(missing)")
        #expect(extra.isEmpty, "Docs/configuration.md lists commands that do not exist: \(extra)")
    }
}
