import Foundation
import Testing
@testable import RoloWeb

/// The templates, CSS and JavaScript are built into the binary as string literals in
/// `Sources/RoloWeb/Rendering/Embedded.generated.swift`, made from the files beside it. These
/// tests fail when that file is stale (regenerate it with `make web-assets`, which runs this
/// suite with `ROLO_REGENERATE=1`), and when a template could print card data unescaped.
@Suite struct EmbeddedFilesTests {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/RoloWeb")
    static let generatedPath = sources.appendingPathComponent("Rendering/Embedded.generated.swift")

    static func templateFiles() throws -> [(name: String, text: String)] {
        let folder = sources.appendingPathComponent("Templates")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".mustache") }.sorted()
        return try names.map { name in
            (String(name.dropLast(".mustache".count)), try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8))
        }
    }

    static func staticFile(_ name: String) throws -> String {
        try String(contentsOf: sources.appendingPathComponent("Static").appendingPathComponent(name), encoding: .utf8)
    }

    /// The generated Swift source for these files.
    static func generated() throws -> String {
        var out = """
            // Generated from Sources/RoloWeb/Templates/*.mustache and Sources/RoloWeb/Static/: do not edit.
            // Regenerate with `make web-assets` (EmbeddedFilesTests with ROLO_REGENERATE=1).
            // swiftlint:disable all

            /// The page templates, by name (the file name without `.mustache`).
            enum EmbeddedTemplates {
                static let all: [(name: String, text: String)] = [

            """
        for (name, text) in try templateFiles() {
            out += "        (\"\(name)\", \(literal(text))),\n"
        }
        out += "    ]\n}\n\n/// The stylesheet and the script, served hash-named (`StaticAssets`).\nenum EmbeddedStatic {\n"
        out += "    static let appCSS = \(literal(try staticFile("app.css")))\n\n"
        out += "    static let appJS = \(literal(try staticFile("app.js")))\n}\n"
        return out
    }

    /// A raw multi-line literal whose value is exactly `text`.
    static func literal(_ text: String) -> String {
        var longest = 0, run = 0
        for character in text {
            run = character == "#" ? run + 1 : 0
            longest = max(longest, run)
        }
        let hashes = String(repeating: "#", count: longest + 1)
        // The line break before the closing delimiter is not part of the value.
        return hashes + "\"\"\"\n" + text + "\n\"\"\"" + hashes
    }

    @Test func theGeneratedFileIsFresh() throws {
        let expected = try Self.generated()
        if ProcessInfo.processInfo.environment["ROLO_REGENERATE"] == "1" {
            try expected.write(to: Self.generatedPath, atomically: true, encoding: .utf8)
        }
        let current = try String(contentsOf: Self.generatedPath, encoding: .utf8)
        #expect(current == expected, "Embedded.generated.swift is stale: run `make web-assets`")
    }

    @Test func theBinaryHoldsTheSameTemplatesAsTheFiles() throws {
        let files = try Self.templateFiles()
        #expect(EmbeddedTemplates.all.map(\.name) == files.map(\.name))
        #expect(EmbeddedTemplates.all.map(\.text) == files.map(\.text))
        #expect(EmbeddedStatic.appCSS == (try Self.staticFile("app.css")))
        #expect(EmbeddedStatic.appJS == (try Self.staticFile("app.js")))
    }

    /// No template prints anything unescaped: no `{{{…}}}`, no `{{&…}}`, no change of
    /// delimiters that could hide one.
    @Test func noTemplateUsesUnescapedOutput() throws {
        for (name, text) in try Self.templateFiles() {
            #expect(!text.contains("{{{"), "\(name).mustache uses {{{ }}}")
            #expect(!text.contains("{{&"), "\(name).mustache uses {{& }}")
            #expect(!text.contains("{{="), "\(name).mustache changes the delimiters")
        }
    }

    /// The CSP forbids inline script and style: no template may rely on them.
    @Test func noTemplateHasInlineScriptStyleOrEventHandlers() throws {
        for (name, text) in try Self.templateFiles() {
            let lower = text.lowercased()
            let scripts = lower.components(separatedBy: "<script").count - 1
            let allowed = text.components(separatedBy: #"<script src="{{assets.js}}" defer></script>"#).count - 1
            #expect(scripts == allowed, "\(name): inline or extra script")
            #expect(!lower.contains("<style"), "\(name): inline style element")
            #expect(!lower.contains(" style="), "\(name): style attribute")
            #expect(lower.range(of: #"\son[a-z]+\s*="#, options: .regularExpression) == nil, "\(name): on*= handler")
            #expect(!lower.contains("javascript:"), "\(name): javascript: URL")
        }
        // The layout's one script is the hash-named file.
        let layout = try #require(try Self.templateFiles().first { $0.name == "layout" })
        #expect(layout.text.contains(#"<script src="{{assets.js}}" defer></script>"#))
    }

    @Test func everyTemplateParses() throws {
        let renderer = try Renderer()
        for (name, _) in EmbeddedTemplates.all {
            #expect(renderer.library.getTemplate(named: name) != nil, "\(name) did not parse")
        }
    }
}
